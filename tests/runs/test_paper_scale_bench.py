"""benchmarks/paper_scale.py: the synthetic raw files give the requested Table-1 shape after
the workflow's own preprocessing, and a tiny run writes the JSON the cost model reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from userfair.workflow import preprocess as data

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import paper_scale  # noqa: E402

STAGE_KEYS = {"seconds", "peak_rss_mb"}
LOOP_KEYS = STAGE_KEYS | {"batches", "batches_measured", "extrapolated"}


@pytest.mark.parametrize("name", ["ml-20m", "qk-video"])
def test_synthetic_raw_file_preprocesses_to_the_requested_shape(tmp_path, name):
    """Each format (RecBole atomic file with low ratings and older duplicates; Tenrec CSV
    with share 0 rows) read by the workflow's reader, deduplicated, binarised and 5-cored
    gives exactly the requested users, items, interactions and heaviest user."""
    shape = paper_scale.SHAPES["qk-video" if name == "qk-video" else "ml-20m"].scaled(0.02)
    path = shape.write_raw(tmp_path / "raw")
    with open(path) as handle:  # rows that preprocessing must drop are there
        assert sum(1 for _ in handle) - 1 > 1.1 * shape.interactions
    frame = data.preprocess_file(
        shape.dataset, path if name == "qk-video" else path.parent, min_rating=3, core=5
    )
    assert frame["user_id"].nunique() == shape.users
    assert frame["item_id"].nunique() == shape.items
    assert len(frame) == shape.interactions
    assert frame["user_id"].value_counts().max() == shape.max_user
    assert frame["item_id"].value_counts().min() >= 5


@pytest.mark.slow
def test_tiny_run_writes_the_schema_and_reuses_the_split(tmp_path):
    """A tiny BPR run with --max-batches 1 (train has 2 batches: extrapolated) and then an
    ItemKNN run on the cached split; the JSON keys are those of the cost model's contract."""
    cache = tmp_path / "cache"

    def run(model, *extra):
        out = tmp_path / model
        subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "paper_scale.py"), "--shape", "tiny",
             "--model", model, "--epochs", "1", "--out", str(out), "--cache", str(cache),
             *extra],
            check=True, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        return json.loads((out / "paper_scale.json").read_text())

    bpr = run("BPR", "--max-batches", "1")
    assert bpr["benchmark"] == "paper_scale" and bpr["version"] == 1
    assert {"cpu", "cores", "ram_gib", "gpu", "load_1min_start", "date"} <= set(bpr["machine"])
    shape = bpr["shape"]
    wanted = paper_scale.SHAPES["tiny"]
    assert shape["within_tolerance"] is True
    assert (shape["users"], shape["items"]) == (wanted.users, wanted.items)
    assert shape["train"] + shape["valid"] + shape["test"] <= wanted.interactions
    assert shape["max_history"] == wanted.max_user  # the heaviest user is all train
    assert abs(shape["evaluated_users"] - wanted.test_users) <= 0.5 * wanted.test_users
    assert bpr["model"] == "BPR" and bpr["params"] == {"learning_rate": 0.001, "embedding_size": 64}
    stages = bpr["stages"]
    for name in ("dataset_build", "dataset_load", "model_init"):
        assert STAGE_KEYS <= set(stages[name]), name
    for name in ("train_epoch", "validation", "topk"):
        assert LOOP_KEYS <= set(stages[name]), name
        assert stages[name]["seconds"] > 0 and stages[name]["peak_rss_mb"] > 50
    epoch = stages["train_epoch"]
    assert epoch["batches"] == 2 and epoch["batches_measured"] == 1 and epoch["extrapolated"]
    assert epoch["seconds"] == pytest.approx(2 * epoch["measured_seconds"], rel=1e-2, abs=2e-3)
    assert stages["validation"]["extrapolated"] is False  # one batch only
    assert bpr["data"]["cached"] is False

    knn = run("ItemKNN")
    assert knn["data"]["cached"] is True
    assert knn["shape"] == shape
    assert knn["stages"]["topk"]["users_listed"] == shape["evaluated_users"]
    assert knn["stages"]["train_epoch"]["extrapolated"] is False


@pytest.mark.slow  # three fresh processes
def test_the_graded_join_benchmark_compares_the_routes_on_the_same_grades(tmp_path):
    """benchmarks/graded_join.py at a tiny size: the keyed lookup and the naive merge give
    the same grades (it stops otherwise), and the report has both ratios."""
    import graded_join

    report = graded_join.main(["--rows", "3000", "--out", str(tmp_path)])
    routes = report["routes"]
    assert routes["keyed"]["grade_sums"] == routes["naive"]["grade_sums"]
    assert routes["keyed"]["rows"] == routes["plain"]["rows"] == routes["naive"]["rows"]
    assert routes["plain"]["grade_sums"] == [None, None]
    assert set(report["keyed_vs_naive"]) == {"time", "memory"}
    assert json.loads((tmp_path / "graded_join.json").read_text())["pairs"] == report["pairs"]
