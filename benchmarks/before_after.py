"""The built-in measures' time on the code of another checkout against this one, for the
bars of docs/performance.md#declarations-speed: one JSON line per call.

    python benchmarks/before_after.py TREE dense|bootstrap|stream:USERS

TREE is the root of a checkout (e.g. ``git worktree add /tmp/before 4c2678f``); its
``workflow/`` and ``benchmarks/`` come first on the import path, so that the ``userfair`` and
the synthetic inputs timed are that checkout's, with this environment's packages. Run the
two trees alternately, each call a fresh process. ``dense``: ``evaluate`` on the QK-video
input of ``benchmarks/measures.py``, best of 3; ``bootstrap``: 1,000 resamples, best of 2;
``stream:USERS``: ``evaluate(route="stream")`` on ``benchmarks/streaming.py``'s QK-like users,
once. Kernels are compiled (on the same inputs, or 300 users) before the clock.
"""

from __future__ import annotations

import json
import os
import sys
import time

tree = os.path.abspath(sys.argv[1])
what = sys.argv[2]
sys.path[:0] = [os.path.join(tree, "workflow"), os.path.join(tree, "benchmarks")]

import userfair  # noqa: E402
from userfair.evaluate import evaluate  # noqa: E402

try:  # the layout by role (userfair.files, userfair.bootstrap) or the one before it
    from userfair.bootstrap.uncertainty import bootstrap, resample_weights  # noqa: E402
    from userfair.files.inputs import load_inputs  # noqa: E402
except ImportError:
    from userfair.inputs import load_inputs  # noqa: E402
    from userfair.uncertainty import bootstrap, resample_weights  # noqa: E402


def main() -> None:
    assert userfair.__file__.startswith(tree), f"imported {userfair.__file__}, not {tree}'s"
    out = {"tree": tree, "what": what}
    if what in ("dense", "bootstrap"):
        from measures import synthetic

        train, test, topk = synthetic(3514)
        inputs = load_inputs(train, test, topk, k=10)
        times = []
        if what == "dense":
            evaluate(inputs, k=10, route="dense")
            for _ in range(3):
                clock = time.perf_counter()
                evaluate(inputs, k=10, route="dense")
                times.append(time.perf_counter() - clock)
        else:
            weights = resample_weights(len(inputs.users), 1000, seed=0)
            bootstrap(inputs, weights[:5], k=10)
            for _ in range(2):
                clock = time.perf_counter()
                bootstrap(inputs, weights, k=10)
                times.append(time.perf_counter() - clock)
        out.update(best_s=min(times), times=times)
    elif what.startswith("stream:"):
        from streaming import synthetic

        evaluate(synthetic(300, 20.0, seed=1), k=10, route="stream")
        inputs = synthetic(int(what.split(":")[1]), 20.0)
        clock, cpu = time.perf_counter(), time.process_time()
        evaluate(inputs, k=10, route="stream")
        out.update(best_s=time.perf_counter() - clock, cpu_s=time.process_time() - cpu)
    else:
        raise SystemExit(f"unknown {what!r}: dense, bootstrap or stream:USERS")
    out["load"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
