"""Inputs for timing the workflow's scattered streamed measures (docs/performance.md).

    python benchmarks/workflow_scatter.py RUN_DIR [--users 20000] [--density qk|ml]
        [--parts 1 2]

Writes the synthetic input of ``benchmarks/streaming.py`` as the files of a workflow run of
ml-100k x UserKNN from the split on (``results/ml-100k/data/ml-100k.{train,valid,test}.inter``,
``stats.json``, ``results/ml-100k/models/UserKNN/topk.parquet``; the valid split holds one
row per listed item seen in no other split, so that every listed item is known), links the
workflow into RUN_DIR and writes ``n1.yaml`` and ``n2.yaml`` (streamed, ``measures.scatter``
1 and 2, one thread per job; ``--parts`` for other N). Then, in RUN_DIR (a copy per N):

    snakemake results/ml-100k/measures/UserKNN.json --configfile n2.yaml \
        --allowed-rules pairs_part pairs measure_sums measures --profile profiles/slurm
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from streaming import DENSITIES, K, synthetic  # noqa: E402
from userfair.files.io import write_inter  # noqa: E402
from userfair.workflow.preprocess import dataset_stats  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--density", default="qk", choices=list(DENSITIES))
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    print(write_run(args.run_dir, args.users, args.density, args.parts))


def write_run(out: Path, users: int, density: str, parts: list[int], threads: int = 1) -> str:
    """Write the run folder ``out`` (see the module's docstring) with one ``nN.yaml`` per N
    of ``parts`` (``threads`` per job); return a line saying what it holds."""
    inputs = synthetic(users, DENSITIES[density])
    m = len(inputs.users)

    def frame(matrix):
        coo = matrix.tocoo()
        return pd.DataFrame({"user_id": inputs.users[coo.row], "item_id": inputs.items[coo.col]})

    data = out / "results/ml-100k/data"
    data.mkdir(parents=True, exist_ok=True)
    train, test = frame(inputs.train), frame(inputs.relevant)
    write_inter(train, data / "ml-100k.train.inter")
    write_inter(test, data / "ml-100k.test.inter")
    listed = inputs.items[np.unique(inputs.topk)]
    unseen = sorted(set(listed) - set(train["item_id"]) - set(test["item_id"]))
    valid = pd.DataFrame({"user_id": inputs.users[0], "item_id": unseen})
    write_inter(valid, data / "ml-100k.valid.inter")
    splits = {"train": train, "valid": valid, "test": test}
    stats = dataset_stats(pd.concat(list(splits.values())), splits, protocol="per-user")
    (data / "stats.json").write_text(json.dumps(stats))
    models = out / "results/ml-100k/models/UserKNN"
    models.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "user_id": np.repeat(inputs.users, K),
            "item_id": inputs.items[inputs.topk.ravel()],
            "rank": np.tile(np.arange(1, K + 1), m),
            "score": np.tile(np.arange(K, 0, -1.0), m),
        }
    ).to_parquet(models / "topk.parquet")
    (out / "raw").mkdir(exist_ok=True)  # dataset_options path: must exist, never read
    for name in ("config", "workflow", "envs", "profiles"):
        if not (out / name).exists():
            (out / name).symlink_to(REPO / name)
    (out / "grid.yaml").write_text(yaml.safe_dump({"UserKNN": {"k": [50], "shrink": [0.0]}}))
    for n in parts:
        config = {
            "datasets": ["ml-100k"],
            "dataset_options": {"ml-100k": {"path": "raw"}},
            "models": ["UserKNN"],
            "grid": "grid.yaml",
            "measures": {"stream_above": 0, "scatter": n, "threads": threads, "device": "cpu"},
        }
        (out / f"n{n}.yaml").write_text(yaml.safe_dump(config))
    return f"{out}: {m} users, {train.shape[0]} train, {test.shape[0]} test interactions"


if __name__ == "__main__":
    main()
