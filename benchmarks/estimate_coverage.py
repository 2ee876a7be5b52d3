"""Coverage of the sampled estimate's intervals (userfair.streamed.estimate); results go to
docs/performance.md#estimate-coverage.

    python benchmarks/estimate_coverage.py [--users 100000] [--seeds 200]
        [--shares 0.05 0.01] [--level 0.95] [--json out.json]

QK-like synthetic inputs (``benchmarks/streaming.py``'s ``synthetic``, mean 19 train items
per user, 20,000 items). The exact pair measures come from the exact route (pass one, pass
two; the cosine PUF by the items, and estimated from the sample's cosine row sums too, so
that it can be checked like the others). Then the row values of **every** user against
all users are computed once (``userfair.streamed.estimate.row_values`` on all rows). An estimate's
numbers depend only on the sampled rows' values (checked here: one real sampled run per
share equals the subset of the full one to the last bit), so each seed's estimate is its
sample's subset of them, and 200 seeds cost one full pass instead of 200 sampled ones.
Each seed draws its sample with ``userfair.streamed.estimate.sample_rows`` (what ``--sample-users``
and ``measures.estimate.pairs`` use) and its intervals come from
``userfair.streamed.estimate.estimates``; the table gives, per measure and share, the share of
seeds whose interval covers the exact value, with the binomial standard error of that
share.

Also timed in the same process: pass two (the exact route's pair and envy passes) against
one sampled run of each share (``row_values`` on the sample), wall and CPU seconds, with
the load average.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from streaming import synthetic  # noqa: E402
from userfair.streamed import estimate, streaming  # noqa: E402

#: Estimated here: the six of userfair.streamed.estimate plus the two cosine PUF (exact by the
#: items on the route, but estimable the same way).
MEASURES = estimate.ESTIMATED + ("PUF-P-Cos", "PUF-NDCG-Cos")


def timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.05, 0.01])
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    log = lambda text: print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)  # noqa: E731

    m, k = args.users, 10
    tiny = synthetic(200, 20.0, seed=1)  # compiled kernels loaded before any clock starts
    tiny_stats = streaming.pass_one(tiny.train, users=tiny.users)
    streaming.pass_two(tiny, tiny_stats, k=k)
    estimate.row_values(tiny, tiny_stats, np.arange(10), k=k)

    inputs = synthetic(m, 20.0, seed=0)
    load = {"start": os.getloadavg()}
    log(f"{m} users, {inputs.train.nnz} train interactions; load {load['start']}")
    stats, one_wall, one_cpu = timed(
        streaming.pass_one, inputs.train_of_evaluated(), users=inputs.users
    )
    log(f"pass one: {one_wall:.1f} s wall, {one_cpu:.1f} CPU-s")
    sums, two_wall, two_cpu = timed(streaming.pass_two, inputs, stats, k=k)
    exact = streaming.finish(inputs, stats, sums)  # the cosine PUF by the items
    exact = {name: exact[name] for name in MEASURES}
    log(f"pass two: {two_wall:.1f} s wall, {two_cpu:.1f} CPU-s; exact {exact}")
    every, all_wall, all_cpu = timed(estimate.row_values, inputs, stats, np.arange(m), k=k)
    log(f"row values of every user: {all_wall:.1f} s wall, {all_cpu:.1f} CPU-s")
    full = estimate.totals(every, m)
    sanity = {
        name: abs(full[name][0] - getattr(sums, name)) / max(abs(getattr(sums, name)), 1e-300)
        for name in ("puf_p_jacc", "puf_ndcg_jacc", "uf_sum", "envy_sum", "max_envy_sum",
                     "envious_users")
    }  # fmt: skip
    for name, key in (("puf_p_cos", "PUF-P-Cos"), ("puf_ndcg_cos", "PUF-NDCG-Cos")):
        value = streaming.puf_value(full[name][0], stats.cos_range, stats.pairs)
        sanity[name] = abs(value - exact[key]) / exact[key]
    log(f"every row's totals against pass two (relative): {sanity}")
    assert max(sanity.values()) < 1e-9, sanity

    runs = {}
    for share in args.shares:
        rows = estimate.sample_rows(m, share, 0)
        one, wall, cpu = timed(estimate.row_values, inputs, stats, rows, k=k)
        same = np.array_equal(one.pairs, every.pairs[rows]) and np.array_equal(
            one.envy, every.envy[rows]
        )
        assert same, "a sampled run differs from the subset of the full one"
        covered = {name: 0 for name in MEASURES}
        width = {name: [] for name in MEASURES}
        for seed in range(args.seeds):
            rows = estimate.sample_rows(m, share, seed)
            sample = estimate.RowValues(rows, every.pairs[rows], every.envy[rows], 0.0, 0.0, 0.0)
            _, record = estimate.estimates(stats, sample, k, level=args.level, measures=MEASURES)
            for name in MEASURES:
                entry = record[name]
                covered[name] += entry["low"] <= exact[name] <= entry["high"]
                width[name].append((entry["high"] - entry["low"]) / exact[name])
        runs[str(share)] = {
            "rows": len(rows),
            "sampled_wall_s": wall,
            "sampled_cpu_s": cpu,
            "coverage": {name: covered[name] / args.seeds for name in MEASURES},
            "median_relative_width": {name: float(np.median(width[name])) for name in MEASURES},
        }
        log(f"share {share}: {runs[str(share)]}")
    load["end"] = os.getloadavg()
    result = {
        "users": m,
        "train_interactions": int(inputs.train.nnz),
        "seeds": args.seeds,
        "level": args.level,
        "exact": exact,
        "pass_one": {"wall_s": one_wall, "cpu_s": one_cpu},
        "pass_two": {"wall_s": two_wall, "cpu_s": two_cpu},
        "every_row": {"wall_s": all_wall, "cpu_s": all_cpu},
        "shares": runs,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "load": load,
    }
    print(f"\n{'measure':<16}" + "".join(f" {'cover ' + s:>14} {'width':>7}" for s in runs))
    for name in MEASURES:
        cells = ""
        for share, run in runs.items():
            cover = run["coverage"][name]
            se = math.sqrt(cover * (1 - cover) / args.seeds)
            cells += f" {cover:>8.3f}+-{se:.3f} {run['median_relative_width'][name]:>7.4f}"
        print(f"{name:<16}{cells}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
