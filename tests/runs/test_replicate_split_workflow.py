"""training.replicate_split through the real Snakemake, on a copy of the shared tiny run:
with R = 1 or a dataset split by time nothing new is scheduled (only the seed is replicated,
with a warning); on a dataset split at random (the tiny ml-100k declared without its
timestamps) replicate 1 redraws the split, the KNN model is retrained on it, and the tables
over replicates are nested (the replicates' spread alone)."""

import json
import math

import pandas as pd
import pytest
import yaml

from dag_jobs import scheduled
from userfair.files.io import read_inter
from userfair.measures import NAMES
from userfair.workflow.replication import replicate_seed

from conftest import REPO, copy_run

SEED = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text())["properties"]["seed"][
    "default"
]
# The tiny ml-100k without its timestamps: a dataset split at random (docs/your-data.md).
RANDOM_SPLIT = {
    "datasets": ["tiny"],
    "custom_datasets": {
        "tiny": {
            "path": "resources/tiny-ml-100k/ml-100k.inter",
            "format": "tsv",
            "columns": {"user": "user_id:token", "item": "item_id:token", "rating": "rating:float"},
            "min_rating": 3,
        }
    },
    "models": ["UserKNN", "BPR"],
    "training": {"replicates": 2, "replicate_split": True},
}


def overlay(run, name, config):
    path = run.test_dir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture(scope="module")
def split_run(tiny_run, tmp_path_factory):
    """A copy of the tiny run, then the random-split dataset with R = 2 and replicate_split
    to the tables over replicates."""
    run = copy_run(tiny_run, tmp_path_factory.mktemp("replicate-split") / "run")
    config = overlay(run, "split.yaml", RANDOM_SPLIT)
    run.snakemake("results/tables/conclusions.csv", "--cores", "2", "--configfile", config)
    return run, config


@pytest.mark.slow
def test_a_fixed_split_schedules_nothing_new(tiny_run, tmp_path):
    run = copy_run(tiny_run, tmp_path / "run")
    one = overlay(run, "one.yaml", {"training": {"replicate_split": True}})  # R = 1
    dry = run.snakemake("-n", "--configfile", one)
    text = dry.stdout + dry.stderr
    # nothing computed again; only the record of the run's config (results/run.json) follows
    assert set(scheduled(text)) <= {"run_config", "all"}, text[-2000:]
    two = overlay(run, "two.yaml", {"training": {"replicates": 2, "replicate_split": True}})
    dry = run.snakemake("-n", "--configfile", two)
    text = dry.stdout + dry.stderr
    assert "ml-100k split by time, so their split is not redrawn" in text
    planned = {line.split()[0] for line in dry.stdout.splitlines() if line.strip()}
    assert "replicate" in planned  # BPR's seed replicate
    assert not {"replicate_split", "replicate_similarity"} & planned
    assert "replicate 1 of UserKNN" not in text  # the KNN lists do not change with a seed


@pytest.mark.slow
def test_replicate_one_redraws_the_split_and_retrains_the_knn_model(split_run):
    run, config = split_run
    results = run.test_dir / "results/tiny"
    same = read_inter(results / "data/tiny.test.inter")
    other = read_inter(results / "replicates/1/data/tiny.test.inter")
    key = ["user_id", "item_id"]
    assert (
        not same[key]
        .sort_values(key)
        .reset_index(drop=True)
        .equals(other[key].sort_values(key).reset_index(drop=True))
    )
    for model in ("UserKNN", "BPR"):
        zero = pd.read_parquet(results / f"models/{model}/topk.parquet")
        one = pd.read_parquet(results / f"models/{model}/replicates/1/topk.parquet")
        assert not zero.equals(one), model
        record = json.loads((results / f"models/{model}/replicates/1/valid.json").read_text())
        assert record["seed"] == replicate_seed(SEED, 1)
    # the lists of replicate 1 are those of its own split's test users
    users = set(pd.read_parquet(results / "models/UserKNN/replicates/1/topk.parquet").user_id)
    assert users == set(other.user_id.astype(str))
    assert (results / "replicates/1/similarity/cos.npz").is_file()
    again = run.snakemake("results/tables/conclusions.csv", "-n", "--configfile", config)
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_the_tables_are_nested(split_run):
    tables = split_run[0].test_dir / "results/tables"
    values = pd.read_csv(tables / "replicates.csv")
    assert len(values[values.measure.isin(NAMES)]) == 2 * 2 * len(NAMES)
    # the group measures follow each replicate's own split (replicate_groups)
    gap = values[(values.model == "U-KNN") & (values.measure == "UserMAD-P (activity:0.05)")]
    assert sorted(gap.replicate) == [0, 1] and gap.value.nunique() == 2
    knn = values[values.model == "U-KNN"].pivot(
        index="measure", columns="replicate", values="value"
    )
    assert (knn[0] != knn[1]).any()  # another split: other values, even without a seed
    scores = pd.read_csv(tables / "scores_replicates.csv").dropna(subset=["se"])
    # nested: the variance is the replicates' spread alone, R - 1 = 1 degree of freedom
    assert (scores.var_users == 0).all()
    spread = scores[scores.var_training > 0]
    assert len(spread) and (spread.df == 1).all()
    row = spread.iloc[0]
    pair = values[(values.model == row.model) & (values.measure == row.measure)].value
    assert row.var_training == pytest.approx(pair.var(ddof=1) / 2)
    assert math.isfinite(row.low) and row.low < row.value < row.high


@pytest.mark.slow
def test_replicate_jobs_record_their_energy(split_run):
    """Each replicate job writes its energy record (docs/cluster.md#measured-energy):
    estimated on a machine without counters, from the seconds it used."""
    results = split_run[0].test_dir / "results/tiny/models"
    for model in ("UserKNN", "BPR"):
        record = json.loads((results / f"{model}/replicates/1/energy.json").read_text())
        assert record["source"] in ("estimated", "mixed", "measured")
        assert 0 < record["cpu"]["seconds"] and 0 < record["wall_seconds"]
