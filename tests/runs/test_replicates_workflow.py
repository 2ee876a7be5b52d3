"""Training replicates through the real Snakemake on the tiny ml-100k (1 epoch): R = 1 runs
exactly today's jobs and R = 3 reruns none of them; R = 3 gives three different lists of
the trainable model and replicate 0's lists for the KNN model, and the tables over
replicates and users, the group measures' rows included, which the group figure's reading
names."""

import hashlib
import json

import pandas as pd
import pytest
import yaml

from userfair.measures import NAMES
from userfair.workflow.models import label
from userfair.workflow.replication import (
    STRIDE,
    redrawn_datasets,
    replicate_seed,
    replicate_split_problems,
    retrained,
)

from conftest import copy_run

# Two of the .test/ run's models: one KNN (no seed), one trained.
MODELS = ["UserKNN", "BPR"]
TODAY = [
    f"results/ml-100k/{kind}/{model}{suffix}"
    for model in MODELS
    for kind, suffix in (
        ("models", "/topk.parquet"),
        ("measures", ".json"),
        ("uncertainty", ".parquet"),
        ("groups", ".json"),
    )
]
TABLES = [
    "results/tables/replicates.csv",
    "results/tables/variance.csv",
    "results/tables/scores_replicates.csv",
    "results/tables/significance_replicates.csv",
    "results/tables/agreement_replicates.csv",
    "results/tables/conclusions.csv",
    "results/figures/replicates.png",
    "results/figures/groups/ml-100k.rst",  # the group figure's reading, over replicates
]


def test_replicate_seeds():
    assert replicate_seed(2024, 0) == 2024
    assert replicate_seed(2024, 1) == 2024 + STRIDE
    assert replicate_seed(2**31 - 2, 1) == (2**31 - 2 + STRIDE) % (2**31 - 1)
    assert len({replicate_seed(s, r) for s in (2024, 2025) for r in range(5)}) == 10
    assert retrained(True, 1) and not retrained(True, 0) and not retrained(False, 2)
    # a split redrawn per replicate (training.replicate_split) retrains the KNN models too
    assert retrained(False, 1, redrawn=True) and not retrained(False, 0, redrawn=True)
    with pytest.raises(ValueError, match="replicate must be >= 0"):
        replicate_seed(1, -1)


def test_which_splits_are_redrawn():
    temporal = {"ml-100k": True, "lastfm": False, "qk-video": False}
    assert redrawn_datasets(temporal, True, 3) == ["lastfm", "qk-video"]
    assert redrawn_datasets(temporal, True, 1) == []  # R = 1: nothing to redraw
    assert redrawn_datasets(temporal, False, 3) == []
    error, warning = replicate_split_problems(temporal, True, 3, None)
    assert error is None and warning.startswith(
        "config training.replicate_split: ml-100k split by time, so their split is not"
    )
    error, warning = replicate_split_problems(temporal, True, 3, "BPR")
    assert error.startswith("config training.replicate_split: measures.similarities embedding")
    assert replicate_split_problems(temporal, False, 3, "BPR") == (None, None)
    assert replicate_split_problems({"ml-100k": True}, True, 3, "BPR")[0] is None


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def run(tiny_run, tmp_path_factory):
    """On a copy of the session's tiny run (conftest ``tiny_run``: R = 1, today's files):
    their digests and times, then R = 3 to the tables, for UserKNN and BPR."""
    copy = copy_run(tiny_run, tmp_path_factory.mktemp("replicates") / "run")
    work = copy.test_dir
    overlay = {"models": MODELS}
    (work / "one.yaml").write_text(yaml.safe_dump(overlay))
    before = {p: (digest(work / p), (work / p).stat().st_mtime_ns) for p in TODAY}
    (work / "three.yaml").write_text(yaml.safe_dump({**overlay, "training": {"replicates": 3}}))
    dry = copy.snakemake(*TABLES, "-n", "--cores", "2", "--configfile", str(work / "three.yaml"))
    copy.snakemake(*TABLES, "--cores", "2", "--configfile", str(work / "three.yaml"))
    return work, before, dry.stdout, copy


@pytest.mark.slow
def test_three_replicates_rerun_none_of_todays_jobs(run):
    work, before, dry, _ = run
    for path, (sha, mtime) in before.items():
        assert digest(work / path) == sha and (work / path).stat().st_mtime_ns == mtime, path
    planned = {line.split()[0] for line in dry.splitlines() if line.split()[-1:] != []}
    for rule in ("tune", "topk", "select", "measures", "uncertainty", "similarity"):
        assert f"\n{rule} " not in dry, (rule, dry[-3000:])
    for rule in ("replicate", "replicate_measures", "replicate_uncertainty", "table_replicates"):
        assert rule in planned, (rule, dry[-3000:])
    one = run[3].snakemake(*TODAY, "-n", "--cores", "2", "--configfile", str(work / "one.yaml"))
    assert "Nothing to be done" in one.stdout + one.stderr


@pytest.mark.slow
def test_three_lists_of_the_trainable_model_one_of_the_knn(run):
    work = run[0]
    models = work / "results/ml-100k/models"
    bpr = [pd.read_parquet(models / "BPR/topk.parquet")] + [
        pd.read_parquet(models / f"BPR/replicates/{r}/topk.parquet") for r in (1, 2)
    ]
    assert all(len(lists) == len(bpr[0]) for lists in bpr)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert not bpr[a].equals(bpr[b]), (a, b)
    assert not (models / "UserKNN/replicates").exists()
    values = pd.read_csv(work / "results/tables/replicates.csv")
    assert len(values[values.measure.isin(NAMES)]) == 2 * 3 * len(NAMES)  # then the groups'
    knn = values[values.model == "U-KNN"].pivot(  # the tables label models (U-KNN)
        index="measure", columns="replicate", values="value"
    )
    assert (knn.nunique(axis=1, dropna=False) == 1).all()  # the same lists: the same values
    trained = values[(values.model == "BPR") & (values.measure == "P")]["value"]
    assert trained.nunique() > 1


@pytest.mark.slow
def test_the_tables_over_replicates_and_users(run):
    work = run[0]
    tables = work / "results/tables"
    variance = pd.read_csv(tables / "variance.csv")
    knn = variance[variance.model == "U-KNN"]
    assert (knn.var_training.fillna(0) == 0).all()
    scores = pd.read_csv(tables / "scores_replicates.csv")
    scores = scores[scores.measure.isin(NAMES)]  # the group rows: test_the_group_measures_...
    assert set(scores.columns) >= {"dataset", "model", "measure", "value", "low", "high", "df"}
    assert (scores.low <= scores.value + 1e-12).all() and (
        scores.value <= scores.high + 1e-12
    ).all()
    conclusions = pd.read_csv(tables / "conclusions.csv")
    assert set(conclusions.best) <= {label(m) for m in MODELS}
    assert conclusions.measure.isin(NAMES).sum() <= len(NAMES)
    assert conclusions.best_share.between(0, 1).all()
    assert (conclusions.paper_best.isna()).all()  # the paper has no ml-100k
    assert (work / "results/figures/replicates.pdf").stat().st_size > 0


@pytest.mark.slow
def test_the_group_measures_over_replicates_and_users(run):
    """The group stage's files of each replicate (replicate_groups; replicate 0's for the
    KNN model) give every grouping's UserMAD and group means rows in the tables over both
    sources, and the group figure's reading takes its comparisons from them."""
    work = run[0]
    tables = work / "results/tables"
    values = pd.read_csv(tables / "replicates.csv")
    gap = "UserMAD-P (activity:0.05)"
    bpr = values[(values.model == "BPR") & (values.measure == gap)].set_index("replicate")
    for r in (1, 2):
        record = json.loads((work / f"results/ml-100k/groups/BPR/replicates/{r}.json").read_text())
        expected = record["groupings"]["activity:0.05"]["values"]["UserMAD-P"]
        assert bpr.loc[r, "value"] == pytest.approx(expected, abs=1e-15)
    record = json.loads((work / "results/ml-100k/groups/BPR.json").read_text())
    assert bpr.loc[0, "value"] == pytest.approx(
        record["groupings"]["activity:0.05"]["values"]["UserMAD-P"], abs=1e-15
    )
    assert not (work / "results/ml-100k/groups/UserKNN/replicates").exists()
    scores = pd.read_csv(tables / "scores_replicates.csv").set_index(["model", "measure"])
    row = scores.loc[("BPR", gap)]
    assert row["value"] == pytest.approx(bpr["value"].mean(), abs=1e-15)
    assert row["low"] <= row["value"] <= row["high"] and row["replicates"] == 3
    assert scores.loc[("U-KNN", gap), "var_training"] == 0
    assert ("BPR", "P[active] (activity:0.05)") in scores.index
    for name in ("variance.csv", "significance_replicates.csv", "conclusions.csv"):
        assert gap in set(pd.read_csv(tables / name).measure), name
    reading = " ".join((work / "results/figures/groups/ml-100k.rst").read_text().split())
    assert "over 3 training replicates and the users" in reading
    assert "Groups by ``activity:0.05``: UserMAD-P" in reading
    assert "PUF-P-Cos separates the one pair of models" in reading or (
        "PUF-P-Cos does not separate the one pair of models" in reading
    )  # two models: U-KNN and BPR
