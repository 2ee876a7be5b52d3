"""The data stage run by the real Snakemake in temporary directories: the default config
(embedded ml-100k), a configured `path`, qk-video with and without its file, a bad config,
and the DAG of config/paper.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from userfair.files.io import InputError, read_inter
from userfair.workflow import preprocess as data
from userfair.workflow import schema

from conftest import REPO, make_workdir, snakemake

DATA_TARGETS = ("table_stats",)


def write_config(workdir: Path, **config) -> str:
    (workdir / "run.yaml").write_text(yaml.safe_dump(config))
    return "run.yaml"


def load_split(workdir: Path, dataset: str) -> dict[str, pd.DataFrame]:
    folder = workdir / "results" / dataset / "data"
    return {name: read_inter(folder / f"{dataset}.{name}.inter") for name in data.SPLITS}


def assert_stats_match_files(workdir: Path, dataset: str, min_train: int = 5) -> dict:
    """stats.json, the intermediate, the split files and Table 1 tell the same story."""
    folder = workdir / "results" / dataset / "data"
    stats = json.loads((folder / "stats.json").read_text())
    assert tuple(stats) == data.STATS_KEYS
    pre = pd.read_parquet(folder / "preprocessed.parquet")
    splits = load_split(workdir, dataset)
    users, items = pre["user_id"].nunique(), pre["item_id"].nunique()
    assert (stats["users"], stats["items"], stats["interactions"]) == (users, items, len(pre))
    assert stats["sparsity"] == pytest.approx(100 * (1 - len(pre) / (users * items)))
    assert [stats[name] for name in data.SPLITS] == [len(splits[name]) for name in data.SPLITS]
    assert stats["test_users"] == splits["test"]["user_id"].nunique() > 0
    evaluated = splits["train"][splits["train"]["user_id"].isin(splits["test"]["user_id"])]
    degrees = evaluated.groupby("item_id")["user_id"].nunique()
    assert stats["item_visits"] == int((degrees * (degrees - 1) // 2).sum()) > 0
    # 5-core holds after step 3; step 5 holds in the files
    assert pre["user_id"].value_counts().min() >= 5 and pre["item_id"].value_counts().min() >= 5
    train_counts = splits["train"]["user_id"].value_counts()
    assert train_counts.min() >= min_train
    for name in ("valid", "test"):
        assert set(splits[name]["user_id"]) <= set(train_counts.index)
    # the split is a partition of part of the preprocessed interactions
    split_pairs = pd.concat(splits.values())[["user_id", "item_id"]]
    assert not split_pairs.duplicated().any()
    assert len(split_pairs.merge(pre[["user_id", "item_id"]].astype(str))) == len(split_pairs)
    table = pd.read_csv(workdir / "results" / "tables" / "stats.csv", index_col="dataset")
    assert table.loc[dataset, "users"] == stats["users"]
    assert table.loc[dataset, "test users"] == stats["test_users"]
    assert table.loc[dataset, "sparsity (%)"] == pytest.approx(stats["sparsity"])
    assert "\\toprule" in (workdir / "results" / "tables" / "stats.tex").read_text()
    return stats


@pytest.mark.slow
def test_default_config_builds_the_data_stage(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    snakemake(workdir, "table_stats", "results/ml-100k/data/ml-100k.item", "--cores", "1")
    stats = assert_stats_match_files(workdir, "ml-100k")
    assert (stats["users"], stats["items"], stats["interactions"]) == (943, 1203, 81697)
    splits = load_split(workdir, "ml-100k")
    # temporal: every train interaction is no later than every valid one, and so on
    stamps = [splits[name]["timestamp"].to_numpy() for name in data.SPLITS]
    assert stamps[0].max() <= stamps[1].min() and stamps[1].max() <= stamps[2].min()
    genres = pd.read_csv(
        workdir / "results" / "ml-100k" / "data" / "ml-100k.item",
        sep="\t",
        dtype=str,
        keep_default_na=False,
    )
    assert genres.columns.tolist() == ["item_id:token", "genre:token_seq"]
    split_items = set(pd.concat(splits.values())["item_id"])
    assert set(genres["item_id:token"]) == split_items
    assert (
        genres.set_index("item_id:token").loc["1", "genre:token_seq"]
        == "Animation Children's Comedy"
    )
    # the download log names the file fetched (ml-100k.zip; a declared table: NAME.csv, ...)
    assert (workdir / "results" / "logs" / "download" / "ml-100k.zip.log").is_file()
    for rule in ("preprocess", "split", "stats", "genres"):
        assert (workdir / "results" / "logs" / rule / "ml-100k.log").is_file()
    # a second run has nothing to do
    again = snakemake(workdir, "table_stats", "--cores", "1", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_configured_path_replaces_the_download(tiny_run):
    """The .test/ run (conftest ``tiny_run``) configures a path for ml-100k: nothing is
    downloaded, and its data stage tells one story."""
    assert not (tiny_run.test_dir / "resources" / "raw").exists()
    assert not (tiny_run.test_dir / "results" / "logs" / "download").exists()
    stats = assert_stats_match_files(tiny_run.test_dir, "ml-100k")
    assert stats["users"] <= 120


def qk_video_csv(path: Path, users: int = 30, items: int = 25, seed: int = 1) -> Path:
    """A small file in Tenrec's QK-video.csv layout; about half of the rows are shares."""
    rng = np.random.default_rng(seed)
    lines = ["user_id,item_id,click,follow,like,share,video_category,watching_times,gender,age"]
    for user in range(users):
        for item in rng.choice(items, size=24, replace=False):
            share = int(rng.random() < 0.6)
            lines.append(f"{user},{1000 + item},1,0,0,{share},{item % 3},1,1,2")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_qk_video_is_never_downloaded(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    config = write_config(workdir, datasets=["qk-video"])
    # the missing file stops the run at parse time, before any job (nothing downloaded)
    failed = snakemake(workdir, *DATA_TARGETS, "--cores", "1", "--configfile", config, check=False)
    said = failed.stdout + failed.stderr
    assert failed.returncode != 0
    assert "QK-video.csv: not found" in said and "Tenrec" in said and "licence" in said
    assert not (workdir / "results").exists() and not (workdir / "resources").exists()
    csv_path = qk_video_csv(workdir / "resources" / "raw" / "qk-video" / "QK-video.csv")
    snakemake(workdir, *DATA_TARGETS, "--cores", "1", "--configfile", config)
    stats = assert_stats_match_files(workdir, "qk-video")
    raw = pd.read_csv(csv_path)
    assert stats["interactions"] <= int(raw["share"].sum())
    assert load_split(workdir, "qk-video")["train"].columns.tolist() == ["user_id", "item_id"]


def test_config_of_the_wrong_type_fails_before_any_job():
    """The Snakefile's first call (in-process here; one dry run per kind of error:
    tests/packaging/test_contract.py)."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["preprocessing"] = {**config["preprocessing"], "core": "five"}
    with pytest.raises(InputError) as error:
        schema.check_config(config, REPO / "config" / "config.schema.yaml")
    assert "preprocessing.core" in str(error.value)
    assert "'five' is not of type 'integer'" in str(error.value)


@pytest.mark.slow
def test_paper_config_resolves_the_dag_for_all_four_datasets(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    proc = snakemake(workdir, *DATA_TARGETS, "-n", "--configfile", "config/paper.yaml")
    out = proc.stdout + proc.stderr
    for dataset in ("lastfm", "qk-video", "ml-10m", "ml-20m"):
        assert f"results/{dataset}/data/stats.json" in out
    for dataset in ("lastfm", "ml-10m", "ml-20m"):
        assert f"resources/raw/{dataset}/{dataset}.zip" in out
    assert "qk-video.zip" not in out
    counts = dict(
        line.split()[:2]
        for line in out.splitlines()
        if line.split()[:1] and line.split()[0] in ("download", "preprocess", "split")
    )
    assert counts == {"download": "3", "preprocess": "4", "split": "4"}
