"""Pass two of the streamed measures (userfair.streamed.streaming.pass_two) on this tree against an
older tree, in one sitting; results go to docs/performance.md#pass-two-without-cosine.

    python benchmarks/pass_two.py --old-tree /tmp/before/workflow [--users 50000]
        [--repeats 2] [--json out.json]

``--old-tree``: the ``workflow`` folder of another checkout (e.g. ``git archive COMMIT
workflow/userfair | tar -x -C /tmp/before``), whose ``userfair`` is imported instead of
this tree's. Each run is a fresh subprocess on the same QK-like synthetic inputs
(``benchmarks/streaming.py``'s ``synthetic``, seed 0), alternating old and new so that a
change of the machine's load hits both; pass one is computed once per run, untimed, and
the kernels are loaded on tiny inputs first. A run reports pass two's pair part
(``seconds_pairs``: PUF and UF), its envy part, the process's CPU seconds over the pass,
the pair visits (``sharing_pairs`` of pass one) per wall second of the pair part, and the
Jaccard PUF and UF sums, which must agree between the trees to 1e-9 relative.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIELDS = ("puf_p_jacc", "puf_ndcg_jacc", "uf_sum", "envy_sum")


def one_run(users: int) -> dict:
    """Pass two timed in this process (the ``userfair`` on ``sys.path``)."""
    sys.path.insert(0, str(HERE))
    from streaming import synthetic
    from userfair.streamed import streaming

    tiny = synthetic(200, 20.0, seed=1)
    streaming.pass_two(tiny, streaming.pass_one(tiny.train, users=tiny.users), k=10)
    inputs = synthetic(users, 20.0, seed=0)
    stats = streaming.pass_one(inputs.train_of_evaluated(), users=inputs.users)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    sums = streaming.pass_two(inputs, stats, k=10)
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "pairs_s": sums.seconds_pairs,
        "envy_s": sums.seconds_envy,
        "visits_per_s": stats.sharing_pairs / sums.seconds_pairs,
        "sharing_pairs": stats.sharing_pairs,
        "load_1min": load,
        "source": streaming.__file__,
        **{name: getattr(sums, name) for name in FIELDS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-tree", type=Path, required=True)
    parser.add_argument("--users", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.users)))
        return
    trees = {"old": args.old_tree.resolve(), "new": HERE.parent / "workflow"}
    runs = []
    for repeat in range(args.repeats):
        for label, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            command = [sys.executable, __file__, "--child", "--old-tree", str(args.old_tree),
                       "--users", str(args.users)]  # fmt: skip
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            run = {"tree": label, "repeat": repeat, **json.loads(out.stdout.splitlines()[-1])}
            assert Path(run["source"]).is_relative_to(tree), (run["source"], tree)
            runs.append(run)
            print(
                f"{label}: pairs {run['pairs_s']:.1f} s, envy {run['envy_s']:.1f} s, pass "
                f"{run['wall_s']:.1f} s wall / {run['cpu_s']:.1f} CPU-s, "
                f"{run['visits_per_s'] / 1e6:.1f} M visits/s, load {run['load_1min']:.2f}",
                flush=True,
            )
    old = [run for run in runs if run["tree"] == "old"]
    new = [run for run in runs if run["tree"] == "new"]
    for name in FIELDS:
        a, b = old[0][name], new[0][name]
        assert abs(a - b) <= 1e-9 * abs(a), (name, a, b)
    ratio = {
        key: sum(run[key] for run in old) / sum(run[key] for run in new)
        for key in ("pairs_s", "wall_s", "cpu_s")
    }
    print(f"old / new (summed over repeats): {ratio}")
    if args.json:
        args.json.write_text(json.dumps({"users": args.users, "runs": runs, "ratio": ratio}))


if __name__ == "__main__":
    main()
