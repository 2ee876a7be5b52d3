"""The join of the grades file onto a split (graded relevance, docs/measures.md#opt-in-measures)
at ML-20M size: the workflow's keyed lookup (``userfair.workflow.steps.graded_splits``)
against the naive route, a pandas merge of each split on its two id columns (the design
before 2026-11-26), beside a plain read of the two split files (what a binary measures job
reads anyway). A synthetic grades file of ``--rows`` interactions with ML-20M's users and
items (ids as text, as the workflow writes them), split 60/20/20 at random; each route runs
in a fresh process so that its peak resident memory is its own.

    python benchmarks/graded_join.py [--rows 20000000] [--out results/benchmarks/graded]

Prints wall seconds and peak RSS per route and the ratios to the naive route, with the
machine; stops if the two routes' grades differ. Results go to
docs/performance.md#graded-relevance-at-ml-20m-size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from data_rehearsal import ITEMS, USERS  # ML-20M's users and rated movies
from streaming import machine

ROUTE = r"""
import json, sys, time
# This process's peak from here on: a process's peak resident memory (VmHWM, ru_maxrss)
# starts at its parent's when it forks, and the parent held the data it wrote.
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")
import pandas as pd
from userfair.files.io import read_inter, read_parquet
from userfair.workflow.steps import GRADE, graded_splits
route, folder = sys.argv[1], sys.argv[2]
train, test, grades = (f"{folder}/d.train.inter", f"{folder}/d.test.inter",
                       f"{folder}/grades.parquet")
clock = time.perf_counter()
if route == "plain":  # what a binary measures job reads
    frames = [read_inter(train), read_inter(test)]
elif route == "keyed":  # the workflow's
    frames = graded_splits(train, test, grades, True)[:2]
else:  # naive: a merge of each split on (user_id, item_id), checked m:1
    table = read_parquet(grades)[["user_id", "item_id", GRADE]].astype(
        {"user_id": str, "item_id": str})
    frames = [read_inter(path)[["user_id", "item_id"]].merge(
        table, on=["user_id", "item_id"], how="left", validate="m:1") for path in (train, test)]
seconds = time.perf_counter() - clock
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
grades = [float(f[GRADE].sum()) if GRADE in f else None for f in frames]
print(json.dumps({"route": route, "seconds": seconds, "rows": [len(f) for f in frames],
                  "grade_sums": grades, "peak_rss_gib": peak / 2**20}))
"""


def write_data(rows: int, folder: Path, seed: int = 0) -> int:
    """The grades file and the train and test splits of ``rows`` random distinct
    (user, item) pairs; returns the number of distinct pairs."""
    from userfair.files.io import write_inter, write_parquet

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {"user_id": rng.integers(1, USERS + 1, rows), "item_id": rng.integers(1, ITEMS + 1, rows)}
    ).drop_duplicates(ignore_index=True)
    frame = frame.astype({"user_id": str, "item_id": str})
    frame["grade"] = rng.integers(1, 6, len(frame)).astype("float64")
    write_parquet(frame, folder / "grades.parquet", index=False)
    part = rng.random(len(frame))
    write_inter(frame.loc[part < 0.6, ["user_id", "item_id"]], folder / "d.train.inter")
    write_inter(frame.loc[part >= 0.8, ["user_id", "item_id"]], folder / "d.test.inter")
    return len(frame)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/graded"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"writing {args.rows:,} interactions to {args.out} ...", flush=True)
    pairs = write_data(args.rows, args.out)
    results = {}
    for route in ("plain", "keyed", "naive"):
        proc = subprocess.run(
            [sys.executable, "-c", ROUTE, route, str(args.out)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[route] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(results[route]), flush=True)
    naive = results["naive"]
    if results["keyed"]["grade_sums"] != naive["grade_sums"]:
        raise SystemExit(f"the routes disagree: {results['keyed']} against {naive}")
    report = {
        "pairs": pairs,
        "machine": machine(),
        "routes": results,
        "keyed_vs_naive": {
            "time": results["keyed"]["seconds"] / naive["seconds"],
            "memory": results["keyed"]["peak_rss_gib"] / naive["peak_rss_gib"],
        },
    }
    (args.out / "graded_join.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report["keyed_vs_naive"]), json.dumps(report["machine"]))
    return report


if __name__ == "__main__":
    main()
