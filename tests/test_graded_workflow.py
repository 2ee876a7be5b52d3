"""The workflow side of the opt-in measures (docs/measures.md#opt-in-measures): the grades
kept by preprocessing and the split, the config keys measures.relevance and
measures.similarities, and the measures job that adds the opt-in measures."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from userfair.inputs import load_inputs
from userfair.io import read_inter, read_json, write_inter
from userfair.measures import GROUPS, NAMES, conventions, optional_names
from userfair.variants import evaluate_variants
from userfair.workflow import preprocess as data
from userfair.workflow import tables
from userfair.workflow.schema import variant_errors
from userfair.workflow.steps import data as data_steps
from userfair.workflow.steps import measures as measure_steps

from conftest import copy_run, snakemake


def _frame(with_rating: bool = True) -> pd.DataFrame:
    """Users a, b, c over items x, y, z; a's (a, x) twice, the later one with rating 5."""
    rows = [
        ("a", "x", 2.0, 1),
        ("a", "y", 4.0, 2),
        ("b", "x", 3.0, 3),
        ("a", "x", 5.0, 4),
        ("b", "y", 1.0, 5),
        ("c", "z", 4.5, 6),
    ]
    frame = pd.DataFrame(rows, columns=["user_id", "item_id", "rating", "timestamp"])
    return frame if with_rating else frame.drop(columns="rating")


def test_grades_are_the_kept_ratings_by_hand():
    binary = data.preprocess(_frame(), min_rating=3, core=1)
    graded = data.preprocess(_frame(), min_rating=3, core=1, grades=True)
    assert "rating" not in binary
    # worked by hand: (a,x) keeps its latest rating 5; (b,y) rated 1 < 3 goes
    assert graded[["user_id", "item_id", "rating"]].values.tolist() == [
        ["a", "y", 4.0],
        ["b", "x", 3.0],
        ["a", "x", 5.0],
        ["c", "z", 4.5],
    ]
    pd.testing.assert_frame_equal(graded.drop(columns="rating"), binary)


def test_a_dataset_without_ratings_gets_grade_one():
    graded = data.preprocess(_frame(with_rating=False), min_rating=3, core=1, grades=True)
    assert graded["rating"].tolist() == [1.0] * len(graded) and len(graded) == 5


@pytest.mark.parametrize("protocol", ["global", "per-user"])
def test_graded_split_carries_the_grades_and_keeps_the_binary_bytes(
    tiny_ml100k, tmp_path, protocol
):
    outs = {}
    for grades in (False, True):
        pre = tmp_path / f"pre-{grades}.parquet"
        data_steps.preprocess("ml-100k", {}, tiny_ml100k, pre, min_rating=3, core=5, grades=grades)
        parts = {name: tmp_path / f"{grades}.{name}.inter" for name in data.SPLITS}
        data_steps.split(
            pre, parts, temporal=True, seed=1, valid_share=0.1, test_share=0.2, min_train=5,
            protocol=protocol,
        )  # fmt: skip
        outs[grades] = parts
    raw = pd.read_csv(
        tiny_ml100k / "ml-100k.inter", sep="\t", header=0,
        names=["user_id", "item_id", "rating", "timestamp"], dtype={0: str, 1: str},
    )  # fmt: skip
    latest = raw.drop_duplicates(["user_id", "item_id"], keep="last").set_index(
        ["user_id", "item_id"]
    )["rating"]
    for name in data.SPLITS:
        binary_path, graded_path = outs[False][name], outs[True][name]
        assert (
            binary_path.read_text().splitlines()[0]
            == "user_id:token\titem_id:token\ttimestamp:float"
        )
        graded = read_inter(graded_path)
        assert graded_path.read_text().splitlines()[0].split("\t")[2] == "rating:float"
        # the binary file is the graded one without its grades, byte for byte
        again = tmp_path / f"again.{name}.inter"
        write_inter(graded.drop(columns="rating").astype({"timestamp": "int64"}), again)
        assert again.read_bytes() == binary_path.read_bytes()
        # each grade is the raw rating of that (user, item), all >= min_rating
        expected = latest.loc[list(zip(graded["user_id"], graded["item_id"]))].to_numpy()
        np.testing.assert_array_equal(graded["rating"].to_numpy(), expected)
        assert graded["rating"].min() >= 3


@pytest.mark.parametrize(
    ("measures", "key", "words"),
    [
        ({"relevance": ["graded"]}, "measures.relevance", "must include binary"),
        ({"similarities": ["cos", "genre"]}, "measures.similarities", "jacc missing"),
        ({"similarities": ["cos", "jacc", "rcos"]}, "measures.similarities", "add graded"),
    ],
)
def test_opt_in_config_errors_name_the_key(measures, key, words):
    (error,) = variant_errors({"measures": measures})
    assert error.startswith(f"config key {key}:") and words in error and "\n" not in error


def test_opt_in_config_defaults_and_allowed_settings_pass():
    assert variant_errors({}) == []
    both = {"relevance": ["binary", "graded"], "similarities": ["cos", "jacc", "rcos", "genre"]}
    assert variant_errors({"measures": both}) == []


# --- the real workflow (the session's tiny run) ------------------------------------------

OPT_IN_CONFIG = (
    'measures={"relevance": ["binary", "graded"], "similarities": ["cos", "jacc", "rcos", '
    '"genre"], "device": "cpu"}'
)


@pytest.mark.slow
def test_graded_workflow_split_and_measures(tiny_run, tmp_path):
    """With measures.relevance [binary, graded] the real preprocess and split rules write the
    grades, and nothing else changes in the split; the measures step adds the opt-in
    measures, the 18 unchanged, the dense ones equal to the streamed row passes."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    data_dir = test_dir / "results" / "ml-100k" / "data"
    before = {name: (data_dir / f"ml-100k.{name}.inter").read_bytes() for name in data.SPLITS}
    targets = [f"results/ml-100k/data/ml-100k.{name}.inter" for name in data.SPLITS]
    snakemake(repo, "--directory", ".test", "--cores", "1", *targets, "--config", OPT_IN_CONFIG)
    for name in data.SPLITS:
        graded = read_inter(data_dir / f"ml-100k.{name}.inter")
        assert list(graded.columns) == ["user_id", "item_id", "rating", "timestamp"]
        assert graded["rating"].min() >= 1 and graded["rating"].max() <= 5
        again = tmp_path / f"again.{name}.inter"
        write_inter(graded.drop(columns="rating").astype({"timestamp": "int64"}), again)
        assert again.read_bytes() == before[name]

    results = tiny_run.test_dir / "results" / "ml-100k"
    paths = {name: str(data_dir / f"ml-100k.{name}.inter") for name in data.SPLITS}
    out = tmp_path / "UserKNN.json"
    result = measure_steps.measures(
        paths["train"], paths["valid"], paths["test"],
        str(results / "models" / "UserKNN" / "topk.parquet"), out, route="dense", k=10,
        epsilon=0.05, envy_utility="precision", gamma=1.0, block_size=64, device="cpu",
        cos=str(results / "similarity" / "cos.npz"), jacc=str(results / "similarity" / "jacc.npz"),
        item=[str(results / "data" / "ml-100k.item")], graded=True,
        extra_similarities=["rcos", "genre"],
    )  # fmt: skip
    default = read_json(results / "measures" / "UserKNN.json")
    written = json.loads(out.read_text())
    for name in NAMES:
        assert written[name] == default[name] or (
            math.isnan(written[name]) and default[name] is None
        )
    opt_in = optional_names(True, ("RCos", "Genre"))
    assert [key for key in written if key not in NAMES][: len(opt_in)] == list(opt_in)
    assert all(0 <= written[name] for name in opt_in)
    assert 0 < written["gNDCG"] <= 1
    # the same opt-in measures by the streamed route's row passes (never m x m)
    inputs = load_inputs(
        paths["train"], paths["test"], results / "models" / "UserKNN" / "topk.parquet", k=10,
        valid=paths["valid"], grade="rating", item_features=results / "data" / "ml-100k.item",
    )  # fmt: skip
    streamed, _ = evaluate_variants(inputs, 10, ["rcos", "genre"], route="stream", block_size=16)
    for name in opt_in:
        assert streamed[name] == pytest.approx(result[name], rel=1e-9, abs=1e-12), name


@pytest.mark.slow
def test_opt_in_config_error_stops_the_run_at_parse_time(tiny_run):
    proc = tiny_run.snakemake(
        "-n", "--config", 'measures={"similarities": ["cos", "jacc", "rcos"]}', check=False
    )
    assert proc.returncode != 0
    assert "config key measures.similarities: rcos reads the grades" in proc.stdout + proc.stderr


# --- Table 2 with the opt-in measures ------------------------------------------------------


def _records(opt_in=()):
    rng = np.random.default_rng(3)
    records = {}
    for model in ("UserKNN", "BPR"):
        record = {name: float(rng.random()) for name in NAMES + tuple(opt_in)}
        record["seconds"] = {}
        record["conventions"] = conventions("precision", 0.05, 1.0)
        records[("d", model)] = record
    return records


def test_table2_default_rows_unchanged_and_opt_in_groups_in_place(tmp_path):
    plain = _records()
    table, _ = tables.table_scores(plain, ["d"], ["UserKNN", "BPR"])
    assert list(table.index) == list(NAMES)
    assert list(table["Group"].unique()) == list(GROUPS)

    opt_in = optional_names(True, ("RCos", "Genre"))
    records = _records(opt_in)
    table = tables.write_scores(
        records, ["d"], ["UserKNN", "BPR"], tmp_path / "s.csv", tmp_path / "s.tex"
    )
    groups = list(table["Group"].unique())
    assert groups == [
        "Eff", "Eff (graded)", "Fair (existing)", "Fair (graded)", "Fair (PUF)",
        "Fair (PUF variants)",
    ]  # fmt: skip
    assert sorted(table.index) == sorted(NAMES + opt_in)
    assert list(table.index[table["Group"] == "Fair (PUF variants)"]) == [
        name for name in opt_in if name.startswith("PUF-")
    ]
    assert table.loc["gNDCG", "Better"] == "higher" and table.loc["PUF-P-RCos", "Better"] == "lower"
    assert table.loc["PUF-gNDCG-Genre", "BPR"] == records[("d", "BPR")]["PUF-gNDCG-Genre"]
    # the default rows hold the same values with or without the opt-in ones
    for name in NAMES:
        assert table.loc[name, "BPR"] == records[("d", "BPR")][name]
    assert "PUF-NDCG-RCos" in (tmp_path / "s.tex").read_text()


def test_table2_refuses_files_with_different_opt_in_measures():
    records = _records(optional_names(True))
    del records[("d", "BPR")]["gNDCG"]
    with pytest.raises(ValueError, match=r"opt-in measures \['gNDCG'\]"):
        tables.table_scores(records, ["d"], ["UserKNN", "BPR"])


@pytest.mark.parametrize(
    ("similarity", "words"),
    [
        ("embedding:UserKNN", "a KNN model has no user embedding"),
        ("embedding:NCL", "not one of the configured models"),
    ],
)
def test_embedding_similarity_names_a_trained_configured_model(similarity, words):
    config = {"models": ["UserKNN", "BPR"], "measures": {"similarities": ["cos", "jacc"]}}
    config["measures"]["similarities"].append(similarity)
    (error,) = variant_errors(config)
    assert error.startswith(f"config key measures.similarities: {similarity}: ") and words in error
    config["measures"]["similarities"][-1] = "embedding:BPR"
    assert variant_errors(config) == []


@pytest.mark.slow
def test_embedding_similarity_in_the_workflow(tiny_run, tmp_path):
    """embedding:BPR: the user_vectors rule writes BPR's user vectors from its checkpoint
    (no retraining), and every model's measures file gains PUF-{P,NDCG}-Vec over them; the
    18 measures are those of the default run."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    config = 'measures={"similarities": ["cos", "jacc", "embedding:BPR"], "device": "cpu"}'
    target = "results/ml-100k/measures/UserKNN.json"
    dry = snakemake(repo, "--directory", ".test", "-n", target, "--config", config)
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, re.M))  # the job stats table
    assert jobs.get("user_vectors") == "1" and "tune" not in jobs and "topk" not in jobs
    snakemake(repo, "--directory", ".test", "--cores", "1", target, "--config", config)
    results = test_dir / "results" / "ml-100k"
    vectors = pd.read_parquet(results / "models" / "BPR" / "user_vectors.parquet")
    assert vectors.columns[0] == "user_id" and vectors.shape[1] > 2
    written = read_json(results / "measures" / "UserKNN.json")
    default = read_json(tiny_run.test_dir / "results" / "ml-100k" / "measures" / "UserKNN.json")
    assert [key for key in written if key not in NAMES][:2] == ["PUF-P-Vec", "PUF-NDCG-Vec"]
    assert all(written[name] == default[name] for name in NAMES if default[name] is not None)
    assert 0 <= written["PUF-P-Vec"] and 0 <= written["PUF-NDCG-Vec"]
