"""The workflow side of the opt-in measures (docs/measures.md#opt-in-measures): the grades
kept by preprocessing and the split, the config keys measures.relevance and
measures.similarities, and the measures job that adds the opt-in measures."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import copy_run, snakemake
from userfair.io import read_inter, read_json, write_inter
from userfair.measures import NAMES, optional_names
from userfair.workflow import preprocess as data
from userfair.workflow.schema import variant_errors
from userfair.workflow.steps import data as data_steps
from userfair.workflow.steps import measures as measure_steps


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
