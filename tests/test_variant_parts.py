"""Each user's share of the opt-in measures (userfair.opt_in.variant_parts) on both routes against
loops from the definitions (docs/method.md#who), and the columns summing to the measures."""

import numpy as np
import pandas as pd
import pytest

from userfair.cli import main
from userfair.decomposition.decompose import COLUMNS
from userfair.files.inputs import load_inputs
from userfair.files.io import write_inter
from userfair.measures import PUF_SCORES
from userfair.opt_in import variant_parts, variants

import reference as ref
from measures_data import graded_split, python_views, write_item_file


def loop_parts(scores, sim, m):
    """share, disadvantaged, advantaged of sum over pairs sim |S_u - S_v| / (m (m - 1) / 2)."""
    share, worse, better = np.zeros(m), np.zeros(m), np.zeros(m)
    for (u, v), s in sim.items():
        term = s * abs(scores[u] - scores[v]) / (m * (m - 1) / 2)
        share[u] += term / 2
        share[v] += term / 2
        low, high = (u, v) if scores[u] < scores[v] else (v, u)
        if scores[u] != scores[v]:
            worse[low] += term
            better[high] += term
    return share, worse, better


@pytest.mark.parametrize("route", ["dense", "stream"])
@pytest.mark.parametrize("seed", [0, 1])
def test_shares_match_the_loops_and_sum_to_the_measures(tmp_path, seed, route):
    train, test, topk, item_genres = graded_split(seed, m=25)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item", grade="rating")
    lists, _, train_sets, _ = python_views(inputs, train, test, topk)
    vectors = np.random.default_rng(seed).normal(size=(len(inputs.users), 3))
    columns = variant_parts.variant_columns(inputs, 10, ["vec", "genre"], vectors, route, 6)
    values, _ = variants.evaluate_variants(inputs, 10, ["vec", "genre"], vectors, "dense")
    for key, value in values.items():
        if key != "gNDCG":
            assert columns[key].sum() == pytest.approx(value, rel=1e-9, abs=1e-12), key
        if key.startswith("PUF-"):
            for part in ("disadvantaged", "advantaged"):
                assert columns[f"{key}:{part}"].sum() == pytest.approx(value, rel=1e-9)
    m = len(inputs.users)
    scores = variants.per_user_scores(inputs, 10)
    sims = {"Cos": ref.cosine(train_sets), "Jacc": ref.jaccard(train_sets)}
    for label, sim in sims.items():
        for score in PUF_SCORES[2:]:  # with grades, Cos and Jacc come with gNDCG only
            key = f"PUF-{score}-{label}"
            expected = loop_parts(list(scores[score]), sim, m)
            for got, want in zip(
                (columns[key], columns[f"{key}:disadvantaged"], columns[f"{key}:advantaged"]),
                expected,
            ):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)
    assert "PUF-P-Cos" not in columns
    np.testing.assert_array_equal(columns["gNDCG"], scores["gNDCG"])


def test_routes_agree_on_every_column(tmp_path):
    train, test, topk, item_genres = graded_split(2, m=40)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item", grade="rating")
    vectors = np.random.default_rng(0).normal(size=(len(inputs.users), 5))
    dense = variant_parts.variant_columns(inputs, 10, ["vec", "genre"], vectors, "dense")
    streamed = variant_parts.variant_columns(inputs, 10, ["vec", "genre"], vectors, "stream", 7)
    assert list(dense) == list(streamed)
    for key in dense:
        np.testing.assert_allclose(streamed[key], dense[key], rtol=1e-9, atol=1e-14)


def test_users_command_appends_the_opt_in_columns(tmp_path):
    train, test, topk, _ = graded_split(3, m=20)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_parquet(tmp_path / "topk.parquet")
    files = ["--train", str(tmp_path / "d.train.inter"), "--test", str(tmp_path / "d.test.inter"),
             "--topk", str(tmp_path / "topk.parquet")]  # fmt: skip
    assert main(["users", *files, "--out", str(tmp_path / "plain.csv")]) == 0
    plain = pd.read_csv(tmp_path / "plain.csv", dtype={"user_id": str})
    assert list(plain.columns) == list(COLUMNS)
    out = tmp_path / "graded.csv"
    assert main(["users", *files, "--grade", "rating", "--out", str(out)]) == 0
    frame = pd.read_csv(out, dtype={"user_id": str})
    inputs = load_inputs(train, test, topk, grade="rating")
    columns = variant_parts.variant_columns(inputs, 10)
    assert list(frame.columns) == list(COLUMNS) + list(columns)
    pd.testing.assert_frame_equal(frame[list(COLUMNS)], plain)
    for key, values in columns.items():
        np.testing.assert_allclose(frame[key].to_numpy(), values, rtol=1e-12)
