"""Benchmark of PUF-P-Cos and PUF-NDCG-Cos by the items (userfair.puf_items) against the
streamed pair route (userfair.variants); results go to docs/performance.md.

    python benchmarks/cosine_puf.py [--sizes 100000 1000000] [--routes items pairs]
        [--pair-share 0.01] [--json out.json]

Inputs: QK-like train rows, as ``benchmarks/streaming.py`` draws them (20,000 items with
power-law popularity 1 / (rank + 10)^0.9, ranks shuffled; per user a log-normal number of
draws, sigma 0.8, at least 5, mean about 25 with the test share, drawn by popularity,
repeats merged) but only the train part (about 80 % of each user's distinct items, at least
one), generated in chunks of 100,000 users as int32 index arrays, so that 10,000,000 users
fit; per-user scores stand in for P@10 (hits ~ Binomial(10, 0.08), / 10) and NDCG@10 (P
times a uniform factor in [0.6, 1.4], capped at 1): the cost of either route does not depend
on where the scores come from.

Each (size, route) runs in a fresh subprocess (its own peak RSS, generation included and
reported apart). ``items``: ``puf_items.cosine_puf`` (extremes certified, then the column
sums). ``pairs``: ``variants.row_sums`` with the cosine's blocks, the streamed route's
pass for a cosine (it visits every pair sharing an item once); with ``--pair-share`` below
1 only the first of the ``stream_rows.ranges`` parts of about that share of the work runs
and the whole is extrapolated from its share (marked ``estimated``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

ITEMS = 20_000
CHUNK = 100_000


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def qk_train(m: int, seed: int = 0, n_items: int = ITEMS) -> sp.csr_matrix:
    """(m, n_items) binary CSR of QK-like train rows (module docstring)."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / (np.arange(n_items) + 10.0) ** 0.9
    cumulative = np.cumsum(rng.permutation(popularity / popularity.sum()))
    sigma, mean = 0.8, 25.0
    indptr, indices = [np.zeros(1, np.int64)], []
    offset = 0
    for lo in range(0, m, CHUNK):
        b = min(CHUNK, m - lo)
        draws = np.maximum(5, rng.lognormal(np.log(mean) - sigma**2 / 2, sigma, b)).astype(int)
        users = np.repeat(np.arange(b, dtype=np.int64), draws)
        items = np.searchsorted(cumulative, rng.random(len(users)) * cumulative[-1])
        keys = np.unique(users * n_items + np.minimum(items, n_items - 1))
        users, items = keys // n_items, keys % n_items
        keep = rng.random(len(users)) < 0.8
        first = np.r_[True, users[1:] != users[:-1]]
        keep |= first  # at least one train item per user
        users, items = users[keep], items[keep]
        counts = np.bincount(users, minlength=b)
        indptr.append(offset + np.cumsum(counts))
        indices.append(items.astype(np.int32))
        offset += len(items)
    data = np.ones(offset, dtype=np.float64)
    out = sp.csr_matrix((data, np.concatenate(indices), np.concatenate(indptr)), (m, n_items))
    out.sort_indices()
    return out


def scores_for(m: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    precision = rng.binomial(10, 0.08, m) / 10
    ndcg = np.minimum(1.0, precision * rng.uniform(0.6, 1.4, m))
    return np.stack([precision, ndcg])


def one_run(size: int, route: str, pair_share: float) -> dict:
    from userfair import puf_items, stream_rows, variants
    from userfair.similarities import CosineBlocks

    clock = time.perf_counter()
    train = qk_train(size, seed=size)
    scores = scores_for(size, size)
    generated, generated_rss = time.perf_counter() - clock, peak_rss_gib()
    out = {
        "size": size, "route": route, "interactions": int(train.nnz),
        "generate_s": generated, "generate_rss_gib": generated_rss,
    }  # fmt: skip
    # compile / load the kernels on tiny inputs, untimed
    tiny = CosineBlocks(qk_train(300, seed=1))
    puf_items.cosine_puf(tiny, scores_for(300, 1))
    variants.row_sums(tiny, scores_for(300, 1))
    clock, cpu = time.perf_counter(), time.process_time()
    if route == "items":
        block = CosineBlocks(train)
        values, found = puf_items.cosine_puf(block, scores)
        out.update(
            values=[float(v) for v in values], lo=found.lo, hi=found.hi, lo_by=found.lo_by,
            hi_by=found.hi_by, lo_visits=found.visits, max_candidates=found.candidates,
            extremes_s=found.seconds,
        )  # fmt: skip
    else:
        block = CosineBlocks(train)
        if pair_share >= 1.0:
            whole = variants.row_sums(block, scores)
            values = variants.finish(whole, scores)
            out.update(values=[float(v) for v in values], lo=whole.lo, hi=whole.hi,
                       visited=whole.visited)  # fmt: skip
        else:
            parts = max(1, round(1 / pair_share))
            work = stream_rows.row_work(train)
            a, b = stream_rows.ranges(train, parts)[0]
            part = variants.row_sums(block, scores, a, b)
            share = float(work[a:b].sum() / work.sum())
            out.update(range=[a, b], share=share, visited_part=part.visited,
                       part_s=part.seconds, estimated=True)  # fmt: skip
    seconds, cpu = time.perf_counter() - clock, time.process_time() - cpu
    if route == "pairs" and pair_share < 1.0:
        seconds, cpu = seconds / out["share"], cpu / out["share"]
    out.update(seconds=seconds, cpu_s=cpu, peak_rss_gib=peak_rss_gib())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--routes", nargs="+", default=["items", "pairs"])
    parser.add_argument(
        "--pair-share",
        type=float,
        default=1.0,
        help="pairs route: the share of the work run (below 1: extrapolated)",
    )
    parser.add_argument(
        "--pair-max",
        type=int,
        default=100_000,
        help="above this size the pairs route runs --pair-share of the work",
    )
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--one", nargs=3, metavar=("SIZE", "ROUTE", "SHARE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run(int(args.one[0]), args.one[1], float(args.one[2]))))
        return
    rows = []
    for size in args.sizes:
        for route in args.routes:
            share = 1.0 if size <= args.pair_max else args.pair_share
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(size), route, str(share)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(json.dumps(row), flush=True)
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "load": os.getloadavg()}
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": machine, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
