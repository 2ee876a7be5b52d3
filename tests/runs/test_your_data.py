"""docs/your-data.md through the real workflow on tiny data: a dataset declared from a CSV
with its own column names, a ';' separator and a rating threshold, split per user, with
LightGCN (not a paper model) next to a paper model, run to Table 2 and a figure; and the
mistakes of that page as clear errors, at parse time where the config can tell (one by a
real dry run, two by the Snakefile's own checks in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config

from userfair.files.io import InputError
from userfair.workflow import grids
from userfair.workflow.schema import check_config
from userfair.workflow.testdata import write_tiny_ml100k

from conftest import REPO, make_workdir, snakemake

GRID = {
    "UserKNN": {"k": [50], "shrink": [0.0]},
    "ItemKNN": {"k": [50], "shrink": [0.0]},
    "BPR": {"learning_rate": [0.005], "embedding_size": [32]},
    "LightGCN": {"learning_rate": [0.005], "embedding_size": [32], "n_layers": [2]},
}
DECLARATION = {
    "path": "shop.csv",
    "separator": ";",
    "columns": {
        "user": "customer",
        "item": "product",
        "rating": "stars",
        "timestamp": "time",
        "genres": "category",
    },
    "min_rating": 4,
}


def write_shop_csv(path: Path, folder: Path) -> Path:
    """The tiny ml-100k as a ';'-separated CSV with other column names and '|' genres."""
    inter = pd.read_csv(folder / "ml-100k.inter", sep="\t", dtype=str)
    items = pd.read_csv(folder / "ml-100k.item", sep="\t", dtype=str, encoding_errors="replace")
    genres = dict(zip(items["item_id:token"], items["class:token_seq"].str.replace(" ", "|")))
    frame = pd.DataFrame(
        {
            "customer": "c" + inter["user_id:token"],
            "product": "p" + inter["item_id:token"],
            "stars": inter["rating:float"],
            "time": inter["timestamp:float"],
            "category": inter["item_id:token"].map(genres).fillna(""),
        }
    )
    frame.to_csv(path, sep=";", index=False)
    return path


def run_config(**overrides) -> dict:
    """The run.yaml of the page's example (its keys replaced by ``overrides``)."""
    return {
        "datasets": ["shop"],
        "custom_datasets": {"shop": DECLARATION},
        "models": list(GRID),
        "grid": "grid.yaml",
        "preprocessing": {"protocol": "per-user"},
        "training": {"epochs": 1, "stopping_step": 1, "device": "cpu"},
        "measures": {"device": "cpu"},
        **overrides,
    }


def workdir(tmp_path: Path, **overrides) -> Path:
    work = make_workdir(tmp_path / "run")
    write_shop_csv(work / "shop.csv", write_tiny_ml100k(tmp_path / "tiny"))
    (work / "grid.yaml").write_text(yaml.safe_dump(GRID))
    (work / "run.yaml").write_text(yaml.safe_dump(run_config(**overrides)))
    return work


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    # LightGCN beside one paper model: what the page shows, at half the training of all four
    work = workdir(tmp_path_factory.mktemp("your-data"), models=["UserKNN", "LightGCN"])
    targets = [
        "results/tables/scores.csv",
        "results/figures/agreement.pdf",
        "results/shop/data/shop.item",
    ]
    snakemake(
        work, *targets, "results/tables/stats.csv", "--cores", "2", "--configfile", "run.yaml"
    )
    return work


@pytest.mark.slow
def test_the_declared_csv_runs_to_table_2_and_a_figure(run):
    data = run / "results" / "shop" / "data"
    pre = pd.read_parquet(data / "preprocessed.parquet")
    assert pre["user_id"].str.startswith("c").all() and pre["item_id"].str.startswith("p").all()
    raw = pd.read_csv(run / "shop.csv", sep=";")
    assert len(pre) <= (raw["stars"] >= 4).sum()  # the declared threshold, not the default 3
    stats = json.loads((data / "stats.json").read_text())
    assert stats["protocol"] == "per-user"
    table1 = pd.read_csv(run / "results" / "tables" / "stats.csv")
    assert table1["split protocol"].tolist() == ["per-user"]
    assert (data / "shop.item").is_file()  # a genres column gives D.item
    scores = pd.read_csv(run / "results" / "tables" / "scores.csv")
    assert {"U-KNN", "LightGCN"} <= set(scores.columns)
    assert (run / "results" / "figures" / "agreement.pdf").stat().st_size > 0
    lists = pd.read_parquet(run / "results" / "shop" / "models" / "LightGCN" / "topk.parquet")
    assert lists["user_id"].astype(str).str.startswith("c").all()


def _fails_at_parse_time(tmp_path, message, **overrides):
    """A real dry run stops before any job, naming the key."""
    work = workdir(tmp_path, **overrides)
    proc = snakemake(work, "-n", "--configfile", "run.yaml", check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in output, output[-3000:]
    assert not (work / "results").exists()


def _refused_by_the_snakefiles_checks(tmp_path, message, **overrides):
    """The checks the Snakefile makes before any job, in-process on the config Snakemake
    would merge (config/config.yaml, then run.yaml): the schema and names
    (schema.check_config), then the grid (grids.load_points, as rules/common/settings.smk
    calls it). One real dry run per kind of error is enough: the one below,
    tests/packaging/test_contract.py and tests/workflow/test_training_grids.py."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(config, run_config(**{"grid": str(grid), **overrides}))
    with pytest.raises(InputError) as error:
        check_config(config, REPO / "config" / "config.schema.yaml")
        grids.load_points(config["grid"], config["models"])
    assert message in str(error.value)


@pytest.mark.slow
def test_a_model_recbole_lacks_is_a_parse_time_error(tmp_path):
    _fails_at_parse_time(
        tmp_path,
        "config key models[3]: 'LightGNC' is not one of the models",
        models=["UserKNN", "ItemKNN", "BPR", "LightGNC"],
    )


def test_a_grid_key_the_model_does_not_take_is_a_parse_time_error(tmp_path):
    grid = tmp_path / "bad-grid.yaml"
    grid.write_text(yaml.safe_dump({**GRID, "LightGCN": {"layers": [2]}}))
    _refused_by_the_snakefiles_checks(
        tmp_path, "model 'LightGCN': unknown grid key 'layers'", grid=str(grid)
    )


def test_a_declaration_without_user_column_is_a_parse_time_error(tmp_path):
    columns = {k: v for k, v in DECLARATION["columns"].items() if k != "user"}
    _refused_by_the_snakefiles_checks(
        tmp_path,
        "config custom_datasets.shop.columns.user: required",
        custom_datasets={"shop": {**DECLARATION, "columns": columns}},
    )


@pytest.mark.slow
def test_a_wrong_separator_fails_in_preprocess_naming_the_key(tmp_path):
    work = workdir(tmp_path, custom_datasets={"shop": {**DECLARATION, "separator": ","}})
    target = "results/shop/data/preprocessed.parquet"
    proc = snakemake(work, target, "--cores", "1", "--configfile", "run.yaml", check=False)
    assert proc.returncode != 0
    log = (work / "results" / "logs" / "preprocess" / "shop.log").read_text()
    assert "missing column 'customer'" in log, log[-2000:]
    assert "config custom_datasets.shop.columns.user" in log
    assert "is custom_datasets.shop.separator right?" in log
    assert not (work / target).exists()
