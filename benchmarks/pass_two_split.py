"""Where pass two's time goes (docs/performance.md#pass-two-split): the first of PARTS
balanced row ranges of USERS QK-like users (``benchmarks/streaming.py``'s ``synthetic``),
timed once as it is and once with UF's threshold out of reach (no similar pairs, so no list
distances), each after pass one over all users.

    python benchmarks/pass_two_split.py [USERS] [PARTS]        # default 100000 8
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from streaming import machine, synthetic  # noqa: E402
from userfair.streamed import streaming  # noqa: E402
from userfair.streamed.stream_rows import ranges  # noqa: E402


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    users = int(argv[0]) if argv else 100_000
    parts = int(argv[1]) if len(argv) > 1 else 8
    print(machine(), flush=True)
    inputs = synthetic(users, 20.0)
    rows = inputs.train_of_evaluated()
    clock, cpu = time.perf_counter(), time.process_time()
    stats = streaming.pass_one(rows, gamma=1.0, users=inputs.users)
    print(f"pass one, {users} users: {time.perf_counter() - clock:.1f} s wall, "
          f"{time.process_time() - cpu:.1f} CPU s", flush=True)  # fmt: skip
    lo, hi = ranges(rows, parts)[0]
    print(f"range {lo}:{hi} (1/{parts} of the pair work); UF threshold {stats.uf_threshold:.4g}")
    # uf_mean far above every similarity: the threshold is out of reach, no similar pair
    for label, st in (
        ("as it is", stats),
        ("no UF pairs", dataclasses.replace(stats, uf_mean=10.0)),
    ):
        clock, cpu = time.perf_counter(), time.process_time()
        sums = streaming.pass_two(inputs, st, lo, hi)
        print(f"pass two {label}: {time.perf_counter() - clock:.1f} s wall, "
              f"{time.process_time() - cpu:.1f} CPU s; pair loop {sums.seconds_pairs:.1f} s, "
              f"UF set-up {sums.seconds_uf_setup:.1f} s, envy {sums.seconds_envy:.1f} s, "
              f"similar pairs {sums.uf_similar_pairs:,}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
