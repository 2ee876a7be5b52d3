"""Benchmark of the opt-in similarities (userfair.similarities, userfair.variants) against
the cosine; results go to docs/performance.md#other-similarities.

    python benchmarks/variants.py [--sizes 5000 10000 20000] [--dims 64] [--genres 20]
        [--json out.json]

Inputs: ``benchmarks/streaming.py``'s synthetic QK-video-like split (20,000 items,
power-law popularity, about 19 train items per user, every user evaluated), plus a grade
1..5 on every interaction, ``--dims`` random user vectors and ``--genres`` genres (each
item 1-3 of them, by popularity). Timed per size, on the streamed route (one row pass per
similarity, the three scores P, NDCG and gNDCG together): ``cos-pass-one`` (the naive
reference of the same run: ``streaming.pass_one``, the paper's route for Cos and Jacc),
``cos`` (the registry's Cos through the same generic pass as the new ones), ``rcos``,
``vec``, ``genre``; the ratio of each to ``cos-pass-one`` and to ``cos``. Wall and CPU
seconds (all threads): the machine may be shared. A warm-up on 500 users compiles the
kernels first.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from streaming import K, machine, synthetic  # noqa: E402


def with_extras(inputs, dims: int, genres: int, seed: int = 0):
    """``inputs`` with grades 1..5 on its interactions and item genres; the user vectors."""
    rng = np.random.default_rng(seed)
    grade = lambda matrix: sp.csr_matrix(  # noqa: E731
        (rng.integers(1, 6, matrix.nnz).astype(np.float64), matrix.indices, matrix.indptr),
        shape=matrix.shape,
    )
    n = inputs.train.shape[1]
    per_item = rng.integers(1, 4, n)
    rows = np.repeat(np.arange(n), per_item)
    cols = rng.choice(
        genres, size=len(rows), p=np.arange(genres, 0, -1) / np.arange(genres, 0, -1).sum()
    )
    genre_matrix = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, genres))
    genre_matrix.data[:] = 1.0
    graded = replace(
        inputs, train_grades=grade(inputs.train), grades=grade(inputs.relevant),
        genres=genre_matrix,
    )  # fmt: skip
    return graded, rng.normal(size=(len(inputs.users), dims))


def timed(function, *args, **kwargs):
    clock, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - clock, time.process_time() - cpu


def run(m: int, dims: int, genres: int) -> dict:
    from userfair import similarities, streaming, variants

    inputs, vectors = with_extras(synthetic(m, 20.0), dims, genres)
    data = similarities.SimilarityData.of(inputs, vectors)
    scores = variants.per_user_scores(inputs, K)
    stacked = np.stack([scores["P"], scores["NDCG"], scores["gNDCG"]])
    out = {"m": m, "train_nnz": int(inputs.train.nnz), "seconds": {}, "cpu": {}}
    _, wall, cpu = timed(streaming.pass_one, inputs.train_of_evaluated(), users=inputs.users)
    out["seconds"]["cos-pass-one"], out["cpu"]["cos-pass-one"] = wall, cpu
    for name in ("cos", "rcos", "vec", "genre"):
        block = similarities.block_function(name, data)
        _, wall, cpu = timed(variants.streamed_puf, block, stacked)
        out["seconds"][name], out["cpu"][name] = wall, cpu
    base, cos = out["seconds"]["cos-pass-one"], out["seconds"]["cos"]
    out["ratio_to_pass_one"] = {k: v / base for k, v in out["seconds"].items()}
    out["ratio_to_cos"] = {k: v / cos for k, v in out["seconds"].items()}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--genres", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    print(json.dumps(machine()))
    run(500, args.dims, args.genres)  # compile the kernels
    runs = []
    for m in args.sizes:
        result = run(m, args.dims, args.genres)
        runs.append(result)
        print(json.dumps(result))
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
