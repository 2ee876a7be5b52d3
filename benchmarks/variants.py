"""Benchmark of the opt-in similarities (userfair.similarity.registry, userfair.opt_in.variants)
against the cosine; results go to docs/performance.md#other-similarities.

    python benchmarks/variants.py [--qk] [--sizes 5000 10000 20000] [--dims 64]
        [--genres 20] [--repeat 3] [--dense-max 20000] [--json out.json]

Inputs: ``benchmarks/streaming.py``'s synthetic QK-video-like split (20,000 items,
power-law popularity, about 19 train items per user, every user evaluated), plus a grade
1..5 on every interaction, ``--dims`` random user vectors and ``--genres`` genres (each
item 1-3 of them, by popularity). ``--qk`` adds, first, one split of QK-video's size
(4,656 users, 6,423 items, about 51,000 interactions). Timed per size, in the same process
one after the other:

- the streamed route (one row pass per similarity, the three scores P, NDCG and gNDCG
  together): ``cos-pass-one`` (``streaming.pass_one``, the paper's route for Cos and
  Jacc), then ``cos``, ``rcos``, ``vec``, ``genre`` through ``variants.streamed_puf``;
- the dense route (up to ``--dense-max`` users, default 20,000, the size the workflow
  streams above):
  ``dense-cos-paper`` (``pairwise.compute("cos")``, the (m, m) normalised cosine the
  paper's measures read), then ``dense-cos``, ``dense-rcos``, ``dense-vec``,
  ``dense-genre`` (``variants.dense_similarity``, the same matrix of each).

Each time is the fastest of ``--repeat`` calls. Ratios: each streamed time to
``cos-pass-one``, each dense one to ``dense-cos-paper``. Wall
and CPU seconds (all threads): the machine may be shared. A warm-up on 500 users compiles
the kernels first.
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
from streaming import ITEMS, K, machine, synthetic  # noqa: E402


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


#: QK-video after preprocessing (docs/data.md): users, items, interactions.
QK_VIDEO = (4_656, 6_423, 51_379)


def run(
    m: int,
    dims: int,
    genres: int,
    items: int | None = None,
    mean: float = 20.0,
    repeat: int = 1,
    dense_max: int = 20_000,
) -> dict:
    from userfair.opt_in import variants
    from userfair.similarity import pairwise, registry
    from userfair.streamed import streaming

    inputs, vectors = with_extras(synthetic(m, mean, n_items=items or ITEMS), dims, genres)
    data = registry.SimilarityData.of(inputs, vectors)
    scores = variants.per_user_scores(inputs, K)
    stacked = np.stack([scores["P"], scores["NDCG"], scores["gNDCG"]])
    interactions = int(inputs.train.nnz + inputs.relevant.nnz)
    out = {"m": m, "items": inputs.train.shape[1], "interactions": interactions}
    out |= {"train_nnz": int(inputs.train.nnz), "seconds": {}, "cpu": {}}

    def record(key, function, *args, **kwargs):  # the fastest of `repeat` calls
        found = [timed(function, *args, **kwargs)[1:] for _ in range(repeat)]
        out["seconds"][key] = min(wall for wall, _ in found)
        out["cpu"][key] = min(cpu for _, cpu in found)

    record("cos-pass-one", streaming.pass_one, inputs.train_of_evaluated(), users=inputs.users)
    for name in ("cos", "rcos", "vec", "genre"):
        record(name, variants.streamed_puf, registry.block_function(name, data), stacked)
    if m <= dense_max:
        rows = inputs.train_of_evaluated()
        record("dense-cos-paper", pairwise.compute, "cos", rows, inputs.users)
        for name in ("cos", "rcos", "vec", "genre"):
            block = registry.block_function(name, data)
            record(f"dense-{name}", variants.dense_similarity, block, m)
    for clock in ("seconds", "cpu"):
        times = out[clock]
        bases = {key: times["dense-cos-paper" if key.startswith("dense") else "cos-pass-one"]
                 for key in times}  # fmt: skip
        out[f"ratio_{clock}"] = {key: times[key] / bases[key] for key in times}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qk", action="store_true", help="first a split of QK-video's size")
    parser.add_argument("--sizes", type=int, nargs="*", default=[5000, 10000, 20000])
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--genres", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of N calls")
    parser.add_argument(
        "--dense-max", type=int, default=20_000, help="time the dense route up to N users"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    print(json.dumps(machine()))
    run(500, args.dims, args.genres)  # compile the kernels
    runs = []
    if args.qk:
        users, items, interactions = QK_VIDEO
        # the synthetic split holds about 1.25 train sizes per user, at least 5 + 1
        result = run(
            users,
            args.dims,
            args.genres,
            items,
            interactions / users / 1.25,
            args.repeat,
            args.dense_max,
        )
        runs.append(result)
        print(json.dumps(result))
    for m in args.sizes:
        result = run(m, args.dims, args.genres, repeat=args.repeat, dense_max=args.dense_max)
        runs.append(result)
        print(json.dumps(result))
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
