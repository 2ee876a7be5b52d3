"""Item visits per second of the streamed pair passes, against this machine's memory
bandwidth (docs/performance.md#visits-per-second).

    python benchmarks/pass_visits.py [--users 100000] [--density qk] [--parts 8]
        [--copy-gib 1] [--json visits.json]

On the synthetic input of ``benchmarks/streaming.py``, with one numba thread: pass one over
all users, then pass two over the first of ``--parts`` balanced row ranges (a whole pass two
takes minutes on one thread; the ranges balance item visits). A row u's item visits are its
work in :func:`userfair.streamed.stream_rows.row_work` less 1: over its items, the users
after u in the item's list, each one step of the counting loop (read the user, add one to
its count). Visits per second are per CPU second (``time.process_time``), so they hold on a
shared machine as long as the caches are not shared too.

The bandwidth it is set against: ``np.copyto`` of a ``--copy-gib`` GiB float64 array (each
byte read once and written once: 2 x size per copy, best of 5), and the rates of random
reads (``np.take``) from an array as big as the counts of one thread (m int32: in the L2
cache at 100,000 users) and from a ``--copy-gib`` GiB one (main memory). The kernel's own
traffic per visit: 8 bytes of the item's user list read in order, and one int32 of the
counts read and written at a random place.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from streaming import DENSITIES, K, synthetic  # noqa: E402
from userfair.streamed import stream_rows, streaming  # noqa: E402


def best(function, repeats: int = 5) -> float:
    """The shortest of ``repeats`` wall times of ``function()``."""
    times = []
    for _ in range(repeats):
        clock = time.perf_counter()
        function()
        times.append(time.perf_counter() - clock)
    return min(times)


def memory(gib: float, m: int) -> dict:
    """Copy bandwidth (GB/s, read + write) and random-read rates (millions a second)."""
    n = int(gib * 2**30) // 8
    source, target = np.ones(n), np.empty(n)
    copy_s = best(lambda: np.copyto(target, source))
    rng = np.random.default_rng(0)
    reads = 10_000_000
    small = np.ones(m, np.int32)
    near = rng.integers(0, m, reads)
    far = rng.integers(0, n, reads)
    small_s = best(lambda: np.take(small, near))
    far_s = best(lambda: np.take(source, far))
    return {
        "copy_gb_s": 2 * n * 8 / copy_s / 1e9,
        "random_reads_small_m_s": reads / small_s / 1e6,
        "random_reads_large_m_s": reads / far_s / 1e6,
        "small_bytes": small.nbytes,
        "large_bytes": source.nbytes,
    }


def passes(users: int, density: str, parts: int) -> dict:
    inputs = synthetic(users, DENSITIES[density], seed=users)
    rows = inputs.train_of_evaluated()
    visits = stream_rows.row_work(rows) - 1.0
    tiny = synthetic(300, DENSITIES[density], seed=1)  # numba's cache loaded, not timed
    streaming.pass_two(tiny, streaming.pass_one(tiny.train_of_evaluated()), k=K)
    cpu = time.process_time()
    stats = streaming.pass_one(rows, users=inputs.users)
    one_cpu = time.process_time() - cpu
    a, b = stream_rows.ranges(rows, parts)[0]
    cpu = time.process_time()
    sums = streaming.pass_two(inputs, stats, a, b, k=K)
    two_cpu = time.process_time() - cpu
    range_visits = float(visits[a:b].sum())
    return {
        "users": users,
        "density": density,
        "train_interactions": int(rows.nnz),
        "item_visits": float(visits.sum()),
        "sharing_pairs": stats.sharing_pairs,
        "pass_one_cpu_s": one_cpu,
        "pass_one_wall_s": stats.seconds,
        "pass_one_visits_m_s": visits.sum() / one_cpu / 1e6,
        "range": [a, b],
        "range_item_visits": range_visits,
        "pass_two_cpu_s": two_cpu,
        "pass_two_pairs_wall_s": sums.seconds_pairs,
        "pass_two_uf_setup_wall_s": sums.seconds_uf_setup,
        "pass_two_envy_wall_s": sums.seconds_envy,
        # the pair loop's share of the range's CPU time, by its share of the wall time
        "pass_two_visits_m_s": range_visits
        / (two_cpu * sums.seconds_pairs / max(sums.seconds_pairs + sums.seconds_uf_setup
                                              + sums.seconds_envy, 1e-9)) / 1e6,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--density", default="qk", choices=list(DENSITIES))
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--copy-gib", type=float, default=1.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"  # userfair's kernels take their threads from it
    load = os.getloadavg()[0]
    result = {"load_before": load, **passes(args.users, args.density, args.parts)}
    result["memory"] = memory(args.copy_gib, args.users)
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
