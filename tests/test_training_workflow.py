"""The models stage through the real Snakemake: tune per grid point, select, topk."""

import json

import pandas as pd
import pytest
import yaml

from userfair.files.io import read_inter

from conftest import copy_run

pytestmark = pytest.mark.slow

GRID = {"UserKNN": {"k": [5, 40]}, "BPR": {"learning_rate": [0.001, 0.01]}}


@pytest.fixture(scope="module")
def run(tiny_run, tmp_path_factory):
    """A copy of the session's tiny run (conftest ``tiny_run``) retrained on the two-point
    grids above with 2 epochs: its data stage is reused, every grid point is tuned anew."""
    copy = copy_run(tiny_run, tmp_path_factory.mktemp("models") / "run")
    (copy.test_dir / "grid2.yaml").write_text(yaml.safe_dump(GRID))
    config = {
        "models": list(GRID),
        "grid": "grid2.yaml",
        "training": {"epochs": 2, "stopping_step": 1, "device": "cpu"},
    }
    (copy.test_dir / "test-config.yaml").write_text(yaml.safe_dump(config))
    targets = [f"results/ml-100k/models/{m}/topk.parquet" for m in GRID]
    copy.snakemake(
        *targets, "--cores", "2", "--configfile", str(copy.test_dir / "test-config.yaml")
    )
    return copy


@pytest.mark.parametrize("model", list(GRID))
def test_every_grid_point_is_tuned_and_the_best_is_selected(run, model):
    models = run.test_dir / "results" / "ml-100k" / "models" / model
    tuning = pd.read_csv(models / "tuning.tsv", sep="\t")
    assert list(tuning["point"]) == [0, 1]
    ((key, values),) = GRID[model].items()
    assert [json.loads(p) for p in tuning["params"]] == [{key: v} for v in values]
    for point in (0, 1):
        valid = json.loads((models / "grid" / str(point) / "valid.json").read_text())
        assert valid["point"] == point
        assert valid["valid"]["NDCG"] == pytest.approx(tuning.loc[point, "NDCG"])
        assert (models / "grid" / str(point) / "model.pth").is_file()
    best = json.loads((models / "best.json").read_text())
    assert best["point"] == int(tuning["NDCG"].idxmax())
    assert best["params"] == json.loads(tuning.loc[best["point"], "params"])
    log = (run.test_dir / "results" / "logs" / "tune" / "ml-100k" / model / "0.log").read_text()
    assert "epoch 0 training" in log and "\x1b[" not in log  # progress, no colour codes


@pytest.mark.parametrize("model", list(GRID))
def test_topk_covers_exactly_the_test_users(run, model):
    models = run.test_dir / "results" / "ml-100k" / "models" / model
    lists = pd.read_parquet(models / "topk.parquet")
    test = read_inter(run.test_dir / "results" / "ml-100k" / "data" / "ml-100k.test.inter")
    assert set(lists["user_id"]) == set(test["user_id"])
    assert lists.groupby("user_id").size().eq(10).all()
    metrics = json.loads((models / "recbole_test.json").read_text())
    assert list(metrics) == ["HR", "MRR", "P", "R", "MAP", "NDCG"]


def test_a_second_run_has_nothing_to_do(run):
    proc = run.snakemake(
        "results/ml-100k/models/BPR/topk.parquet",
        "--cores",
        "1",
        "-n",
        "--configfile",
        str(run.test_dir / "test-config.yaml"),
    )
    assert "Nothing to be done" in proc.stdout + proc.stderr
