"""What the graded workflow tests share: the job counts of a Snakemake run or dry run, and
the graded measures' inputs as the design before rule grades gave them (the grades in the
split's rating column), to check the measure jobs against."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml
from snakemake.utils import validate

from userfair.files.inputs import Inputs, load_inputs
from userfair.files.io import read_inter

#: The rules whose jobs would retrain, re-rank or re-split: graded relevance reruns none.
NO_RERUN = {"preprocess", "split", "stats", "tune", "select", "topk", "similarity"}


def job_counts(proc) -> dict[str, int]:
    """The job counts by rule of a ``snakemake`` run or dry run (its job stats table)."""
    table = re.findall(r"^(\w+)\s+(\d+)$", proc.stdout + proc.stderr, re.M)
    return {rule: int(n) for rule, n in table}


def latest_ratings(raw_dir: Path) -> pd.Series:
    """The raw ml-100k rating of each (user, item) in ``raw_dir``, its latest where
    repeated: the grade graded relevance gives it (docs/method.md#graded-relevance)."""
    raw = pd.read_csv(
        raw_dir / "ml-100k.inter", sep="\t", header=0,
        names=["user_id", "item_id", "rating", "timestamp"], dtype={0: str, 1: str},
    )  # fmt: skip
    return raw.drop_duplicates(["user_id", "item_id"], keep="last").set_index(
        ["user_id", "item_id"]
    )["rating"]


def previous_design_inputs(results: Path, raw_dir: Path, model: str) -> Inputs:
    """The inputs of ``model``'s graded measures on the ml-100k ``results`` as they were
    before rule grades: the split files with each interaction's raw rating in a ``rating``
    column, read with grade="rating" (independent of rule grades and of
    userfair.workflow.steps.graded_splits)."""
    latest = latest_ratings(raw_dir)
    data_dir = results / "data"
    frames = {}
    for name in ("train", "test"):
        split = read_inter(data_dir / f"ml-100k.{name}.inter")
        frames[name] = split.assign(
            rating=latest.loc[list(zip(split["user_id"], split["item_id"]))].to_numpy()
        )
    return load_inputs(
        frames["train"], frames["test"], results / "models" / model / "topk.parquet", k=10,
        valid=data_dir / "ml-100k.valid.inter", grade="rating",
        item_features=data_dir / "ml-100k.item",
    )  # fmt: skip


def run_config(repo: Path, test_dir: Path) -> dict:
    """The config a .test run ran with: its config/config.yaml (the Snakefile's configfile,
    relative to --directory .test) with the schema's defaults filled in, as the Snakefile
    does (snakemake.utils.validate)."""
    config = yaml.safe_load((test_dir / "config" / "config.yaml").read_text())
    validate(config, str(repo / "config" / "config.schema.yaml"))
    return config
