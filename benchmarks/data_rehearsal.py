"""A rehearsal of the data stage at ML-20M size: a synthetic 20-million-rating file in the
ML-20M format (RecBole's ml-20m.inter: user_id, item_id, rating, timestamp) through the
workflow's own preprocess, split and statistics steps (the functions the rules call), each
step in a fresh process so that its peak resident memory is its own.

    python benchmarks/data_rehearsal.py [--ratings 20000000] [--out results/benchmarks/ml20m]

Prints, per step, the wall seconds and the peak RSS, beside the size of one copy of the
ratings in memory, and writes the Table 1 row. Results go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

USERS, ITEMS = 138_493, 26_744  # ML-20M's users and rated movies


def generate(path: Path, ratings: int, seed: int = 0) -> None:
    """ml-20m.inter with ``ratings`` rows: power-law users and items, ratings 0.5-5,
    timestamps over 20 years; written in chunks (the generator never holds the file)."""
    rng = np.random.default_rng(seed)
    user_p = 1.0 / (np.arange(USERS) + 50.0) ** 0.8
    user_p /= user_p.sum()
    item_p = 1.0 / (np.arange(ITEMS) + 10.0) ** 1.0
    item_p /= item_p.sum()
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = 2_000_000
    with open(path, "w") as handle:
        handle.write("user_id:token\titem_id:token\trating:float\ttimestamp:float\n")
        for start in range(0, ratings, chunk):
            n = min(chunk, ratings - start)
            frame = pd.DataFrame(
                {
                    "u": rng.choice(USERS, n, p=user_p) + 1,
                    "i": rng.choice(ITEMS, n, p=item_p) + 1,
                    "r": rng.integers(1, 11, n) / 2.0,
                    "t": rng.integers(789_652_009, 1_427_784_002, n),
                }
            )
            frame.to_csv(handle, sep="\t", header=False, index=False)


STEP = r"""
import json, resource, sys, time
import pandas as pd
from userfair import data
from userfair.io import read_inter, write_inter
step, folder, out = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
if step == "preprocess":
    frame = data.preprocess_file("ml-20m", folder, min_rating=3, core=5)  # the rule's call
    data.as_written(frame).to_parquet(f"{out}/preprocessed.parquet", index=False)
    extra = {"kept": len(frame)}
elif step == "copy":  # one copy of the raw ratings in memory, as the reader holds them
    raw = data.read_interactions("ml-20m", folder)
    extra = {"raw_rows": len(raw), "copy_mb": raw.memory_usage(deep=True).sum() / 2**20}
elif step == "split":
    frame = pd.read_parquet(f"{out}/preprocessed.parquet")
    splits = data.make_splits(frame, temporal=True, seed=2024, valid_share=0.2,
                              test_share=0.2, min_train=5)
    for name in data.SPLITS:
        write_inter(data.as_written(splits[name]), f"{out}/ml-20m.{name}.inter")
    extra = {name: len(part) for name, part in splits.items()}
else:
    preprocessed = pd.read_parquet(f"{out}/preprocessed.parquet")
    splits = {n: read_inter(f"{out}/ml-20m.{n}.inter") for n in data.SPLITS}
    stats = data.dataset_stats(preprocessed, splits)
    row = data.table1({"ml-20m": {**stats, **data.split_counts(splits)}})
    extra = {"stats": stats, "table1": row.reset_index().to_dict("records")[0]}
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"step": step, "seconds": seconds, "peak_gib": peak, **extra}, default=str))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=20_000_000)
    parser.add_argument("--out", default="results/benchmarks/ml20m")
    args = parser.parse_args()
    out = Path(args.out)
    folder = out / "raw"
    inter = folder / "ml-20m.inter"
    if not inter.is_file():
        start = time.perf_counter()
        generate(inter, args.ratings)
        print(f"generated {args.ratings:,} ratings in {time.perf_counter() - start:.0f} s "
              f"({inter.stat().st_size / 2**30:.2f} GiB)")  # fmt: skip
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}")
    for step in ("copy", "preprocess", "split", "stats"):
        result = subprocess.run(
            [sys.executable, "-c", STEP, step, str(folder), str(out)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(result.stdout.strip())
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
