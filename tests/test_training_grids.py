"""Grid files: validation before any training, expansion order, selection of the winner."""

from pathlib import Path

import pytest
import yaml

from userfair.files.io import InputError
from userfair.workflow import grids, models, tuning

from conftest import REPO, make_workdir, snakemake

# The paper's models (config/config.yaml), which every shipped grid covers.
ALL = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]


@pytest.mark.parametrize("name", ["quick.yaml", "paper.yaml"])
def test_shipped_grids_are_valid_and_cover_every_model(name):
    points = grids.load_points(REPO / "config" / "grids" / name, ALL)
    assert set(points) == set(ALL)
    assert all(len(p) >= 1 for p in points.values())
    if name == "quick.yaml":
        assert all(len(p) <= 3 for p in points.values())
    else:
        assert all(len(p) >= 8 for p in points.values())


def test_grid_keys_are_recbole_model_parameters():
    """Every allowed key of a RecBole model exists in RecBole's own model defaults (or is a
    training setting), so a grid can never set a parameter RecBole silently ignores."""
    import recbole

    properties = Path(recbole.__file__).parent / "properties"
    overall = yaml.safe_load((properties / "overall.yaml").read_text())
    for model in models.names():
        if model == "UserKNN":
            continue
        keys = grids.model_keys(model)
        path = properties / "model" / f"{model}.yaml"
        defaults = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
        for key in keys:
            assert key in defaults or key in overall, (model, key)


def test_points_are_the_cartesian_product_last_key_fastest():
    grid = {"BPR": {"learning_rate": [0.1, 0.2], "embedding_size": [8, 16, 32]}}
    points = grids.grid_points(grid, "BPR")
    assert points[:4] == [
        {"learning_rate": 0.1, "embedding_size": 8},
        {"learning_rate": 0.1, "embedding_size": 16},
        {"learning_rate": 0.1, "embedding_size": 32},
        {"learning_rate": 0.2, "embedding_size": 8},
    ]
    assert len(points) == 6


def test_empty_model_grid_is_one_point_of_defaults():
    assert grids.grid_points({"BPR": None}, "BPR") == [{}]


@pytest.mark.parametrize(
    "grid, message",
    [
        ({"SASRec": {"learning_rate": [0.1]}}, "g.yaml: model 'SASRec' is not a RecBole"),
        ({"BPR": {"embeding_size": [8]}}, "unknown grid key 'embeding_size'"),
        ({"UserKNN": {"learning_rate": [0.1]}}, "unknown grid key 'learning_rate'"),
        ({"BPR": {"embedding_size": 8}}, "expected a non-empty list"),
        ({"BPR": {"embedding_size": []}}, "expected a non-empty list"),
        ({"BPR": [1, 2]}, "expected a mapping"),
        (yaml.safe_load("BPR: {learning_rate: [1e-3]}"), "'1e-3' is text, expected a number"),
    ],
)
def test_bad_grids_are_clear_errors(grid, message):
    with pytest.raises(InputError, match=message):
        grids.validate_grid(grid, ["BPR"], label="g.yaml")


def test_a_configured_model_without_grid_is_an_error():
    with pytest.raises(InputError, match="no grid for configured model.*NCL"):
        grids.validate_grid({"BPR": {}}, ["BPR", "NCL"])


def test_missing_grid_file_names_the_file(tmp_path):
    with pytest.raises(InputError, match="nope.yaml: grid file not found"):
        grids.load_grid(tmp_path / "nope.yaml")


def record(ndcg, **params):
    return {"params": params, "valid": {"HR": 1.0, "NDCG": ndcg}, "best_epoch": 1, "seconds": 0.5}


def test_select_best_takes_the_best_valid_ndcg_and_the_first_of_ties():
    table, best = tuning.select_best([record(0.1, k=1), record(0.3, k=2), record(0.3, k=3)])
    assert best["point"] == 1 and best["params"] == {"k": 2}
    assert list(table["point"]) == [0, 1, 2]
    assert list(table["NDCG"]) == [0.1, 0.3, 0.3]
    assert table.loc[2, "params"] == '{"k": 3}'


def test_select_best_rejects_a_record_without_ndcg():
    with pytest.raises(InputError, match="grid point 0"):
        tuning.select_best([{"params": {}, "valid": {"HR": 1.0}}])


@pytest.mark.slow
@pytest.mark.parametrize(
    "grid, message",
    [
        (
            {"UserKNN": {"k": [5]}, "BPR": {"embeding_size": [8]}},
            "unknown grid key 'embeding_size'",
        ),
        (
            {"UserKNN": {"k": [5]}, "GRU4Rec": {}},
            "model 'GRU4Rec' is not a RecBole 1.2.1 general recommender",
        ),
    ],
)
def test_workflow_rejects_a_bad_grid_before_any_job(tmp_path, grid, message):
    work = make_workdir(tmp_path / "run")
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(yaml.safe_dump(grid))
    proc = snakemake(
        work, "--cores", "1", "--config", f"grid={grid_file}", "models=[UserKNN,BPR]", check=False
    )
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert not (work / "results").exists()


def test_point_params_follow_grid_order():
    points = {"BPR": [{"learning_rate": 0.1}, {"learning_rate": 0.2}]}
    assert grids.point_params(points, "BPR", "1") == {"learning_rate": 0.2}
    with pytest.raises(InputError, match="BPR has 2 grid points, no point 2"):
        grids.point_params(points, "BPR", "2")


def test_device_cuda_without_a_gpu_is_a_clear_error():
    import torch

    from userfair.workflow import recbole_setup

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ValueError, match="training.device is 'cuda'"):
        recbole_setup.gpu_ids("cuda")
    assert recbole_setup.gpu_ids("auto") == ""  # auto falls back to the CPU
