"""The workflow side of the opt-in measures (docs/measures.md#opt-in-measures): the grades
kept by preprocessing and the split, the config keys measures.relevance and
measures.similarities, and the measures job that adds the opt-in measures."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from userfair.files.io import InputError, read_inter, read_json, write_inter
from userfair.measures import GROUPS, NAMES, conventions, optional_names
from userfair.opt_in.variants import evaluate_variants
from userfair.workflow import preprocess as data
from userfair.workflow import tables
from userfair.workflow.schema import variant_errors
from userfair.workflow.steps import GRADE, graded_splits
from userfair.workflow.steps import data as data_steps

from conftest import copy_run, snakemake
from graded_run import NO_RERUN, job_counts, latest_ratings, previous_design_inputs


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


@pytest.fixture(scope="module")
def graded_data(tiny_ml100k, tmp_path_factory):
    """The real preprocess, grades and split steps on the tiny ml-100k: their files."""
    root = tmp_path_factory.mktemp("graded")
    files = {"pre": root / "preprocessed.parquet", "grades": root / "grades.parquet"}
    options = {"min_rating": 3, "core": 5}
    data_steps.preprocess("ml-100k", {}, tiny_ml100k, files["pre"], **options)
    data_steps.grades("ml-100k", {}, tiny_ml100k, files["grades"], **options)
    files.update({name: root / f"ml-100k.{name}.inter" for name in data.SPLITS})
    data_steps.split(
        files["pre"], {name: files[name] for name in data.SPLITS}, temporal=True, seed=1,
        valid_share=0.1, test_share=0.2, min_train=5, protocol="global",
    )  # fmt: skip
    return files


def test_grades_cover_exactly_the_preprocessed_rows(graded_data, tiny_ml100k):
    pre = pd.read_parquet(graded_data["pre"])
    grades = pd.read_parquet(graded_data["grades"])
    assert list(pre.columns) == ["user_id", "item_id", "timestamp"]  # binary: no grade
    assert list(grades.columns) == ["user_id", "item_id", GRADE]
    assert grades[GRADE].dtype == np.float64
    pd.testing.assert_frame_equal(grades[["user_id", "item_id"]], pre[["user_id", "item_id"]])
    # each grade is the raw rating of that (user, item), all >= min_rating
    latest = latest_ratings(tiny_ml100k)
    expected = latest.loc[list(zip(grades["user_id"], grades["item_id"]))].to_numpy()
    np.testing.assert_array_equal(grades[GRADE].to_numpy(), expected)
    assert grades[GRADE].min() >= 3


def test_graded_splits_join_each_split_interaction_its_grade(graded_data, tiny_ml100k):
    latest = latest_ratings(tiny_ml100k)
    for name in data.SPLITS:  # the split files are binary, whatever measures.relevance says
        header = graded_data[name].read_text().splitlines()[0]
        assert header == "user_id:token\titem_id:token\ttimestamp:float"
    train, test, grade = graded_splits(
        graded_data["train"], graded_data["test"], [str(graded_data["grades"])], True
    )
    assert grade == GRADE
    for frame, name in ((train, "train"), (test, "test")):
        split = read_inter(graded_data[name])
        pd.testing.assert_frame_equal(frame[["user_id", "item_id"]], split[["user_id", "item_id"]])
        expected = latest.loc[list(zip(split["user_id"], split["item_id"]))].to_numpy()
        np.testing.assert_array_equal(frame[GRADE].to_numpy(), expected)
    # binary: the paths as they are, no grades read
    assert graded_splits("a", "b", [], False) == ("a", "b", None)
    with pytest.raises(ValueError, match="no grades file"):
        graded_splits("a", "b", [], True)


@pytest.mark.parametrize("integer_ids", [False, True])
def test_graded_splits_equal_a_lookup_loop_on_random_ids(tmp_path, integer_ids):
    """The keyed lookup (steps.GradeLookup) against a dict of (user, item) -> grade, looked
    up row by row, on random ids (text, or integers in the grades file: read as text),
    splits in random order that share users and items."""
    rng = np.random.default_rng(11)
    pairs = {(int(u), int(i)) for u, i in rng.integers(0, 60, size=(900, 2))}
    table = pd.DataFrame(sorted(pairs), columns=["user_id", "item_id"]).sample(
        frac=1.0, random_state=3
    )
    table[GRADE] = rng.uniform(1, 5, len(table)).round(1)
    if not integer_ids:
        text = {"user_id": "u" + table.user_id.astype(str), "item_id": table.item_id.astype(str)}
        table = table.assign(**text)
    table.to_parquet(tmp_path / "grades.parquet", index=False)
    grade_of = {(str(u), str(i)): g for u, i, g in table.itertuples(index=False)}
    rows = table[["user_id", "item_id"]].astype(str).sample(frac=1.0, random_state=5)
    parts = {"train": rows.iloc[: len(rows) // 2], "test": rows.iloc[len(rows) // 2 :]}
    for name, part in parts.items():
        write_inter(part, tmp_path / f"d.{name}.inter")
    train, test, _ = graded_splits(
        tmp_path / "d.train.inter", tmp_path / "d.test.inter", tmp_path / "grades.parquet", True
    )
    for frame, part in ((train, parts["train"]), (test, parts["test"])):
        assert frame[["user_id", "item_id"]].values.tolist() == part.values.tolist()
        expected = [grade_of[(u, i)] for u, i in zip(frame.user_id, frame.item_id)]
        assert frame[GRADE].tolist() == expected and frame[GRADE].dtype == np.float64


def test_a_split_interaction_without_a_grade_is_named(graded_data, tmp_path):
    grades = pd.read_parquet(graded_data["grades"])
    test = read_inter(graded_data["test"])
    user, item = test["user_id"].iloc[3], test["item_id"].iloc[3]
    lacking = tmp_path / "grades.parquet"
    grades[(grades.user_id != user) | (grades.item_id != item)].to_parquet(lacking)
    with pytest.raises(InputError) as error:
        graded_splits(graded_data["train"], graded_data["test"], str(lacking), True)
    message = str(error.value)
    assert message.startswith(f"{lacking}: no grade for user {user!r} item {item!r} of ")
    assert str(graded_data["test"]) in message and "\n" not in message
    assert message.endswith(f"rebuild it: snakemake --force {lacking}")
    pd.concat([grades, grades.iloc[[0]]]).to_parquet(lacking)
    with pytest.raises(InputError, match="a \\(user_id, item_id\\) appears twice"):
        graded_splits(graded_data["train"], graded_data["test"], str(lacking), True)
    grades.drop(columns=GRADE).to_parquet(lacking)
    with pytest.raises(InputError, match=f"{lacking}: no column \\['grade'\\]"):
        graded_splits(graded_data["train"], graded_data["test"], str(lacking), True)


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
def test_graded_workflow_retrains_nothing_and_keeps_the_graded_measures(tiny_run, tmp_path):
    """With measures.relevance [binary, graded] on a copy of the shared run, only rule grades
    and the measures job run: no preprocess, split, tune, select or topk job (the models
    and their lists are the default run's), the split files byte for byte the default's; the
    18 measures unchanged and the graded ones equal to those of the previous design (the
    grades carried in the split's rating column), computed here, to 1e-12."""
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    results = test_dir / "results" / "ml-100k"
    files = [*(results / "data").glob("ml-100k.*.inter"), *results.glob("models/*/topk.parquet")]
    before = {path: path.read_bytes() for path in files}
    target = "results/ml-100k/measures/UserKNN.json"
    dry = snakemake(repo, "--directory", ".test", "-n", target, "--config", OPT_IN_CONFIG)
    jobs = job_counts(dry)
    assert jobs["grades"] == 1 and jobs["measures"] == 1, jobs
    assert not NO_RERUN & set(jobs), jobs
    snakemake(repo, "--directory", ".test", "--cores", "1", target, "--config", OPT_IN_CONFIG)
    assert {path: path.read_bytes() for path in files} == before
    grades = pd.read_parquet(results / "data" / "grades.parquet")
    pre = pd.read_parquet(results / "data" / "preprocessed.parquet")
    pd.testing.assert_frame_equal(grades[["user_id", "item_id"]], pre[["user_id", "item_id"]])

    written = read_json(results / "measures" / "UserKNN.json")
    default = read_json(tiny_run.test_dir / "results" / "ml-100k" / "measures" / "UserKNN.json")
    for name in NAMES:
        assert written[name] == default[name], name
    opt_in = optional_names(True, ("RCos", "Genre"))
    assert [key for key in written if key not in NAMES][: len(opt_in)] == list(opt_in)
    assert 0 < written["gNDCG"] <= 1
    inputs = previous_design_inputs(results, test_dir / "resources" / "tiny-ml-100k", "UserKNN")
    expected, _ = evaluate_variants(inputs, 10, ["rcos", "genre"], route="dense")
    for name in opt_in:
        assert written[name] == pytest.approx(expected[name], rel=0, abs=1e-12), name
    # the streamed route's row passes (never m x m) give them too
    streamed, _ = evaluate_variants(inputs, 10, ["rcos", "genre"], route="stream", block_size=16)
    for name in opt_in:
        assert streamed[name] == pytest.approx(written[name], rel=1e-9, abs=1e-12), name


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
