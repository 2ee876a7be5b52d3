"""Bootstrap of the opt-in measures (userfair.opt_in.variant_uncertainty) against a loop over the
resampled population, and all-ones weights giving the point values."""

import json

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import uncertainty
from userfair.cli import main
from userfair.files.inputs import load_inputs
from userfair.files.io import write_inter
from userfair.measures import NAMES
from userfair.opt_in import variants
from userfair.opt_in.variant_uncertainty import bootstrap_variants

import reference as ref
from measures_data import graded_split, python_views, write_item_file


def test_resamples_match_the_loop_and_ones_give_the_point(tmp_path):
    train, test, topk, item_genres = graded_split(5, m=20)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item", grade="rating")
    m = len(inputs.users)
    vectors = np.random.default_rng(1).normal(size=(m, 3))
    weights = np.vstack([np.ones(m, dtype=np.int64), uncertainty.resample_weights(m, 4, 7)])
    frame = bootstrap_variants(inputs, weights, 10, ["vec", "genre"], vectors, block_size=6)
    point, _ = variants.evaluate_variants(inputs, 10, ["vec", "genre"], vectors)
    assert list(frame.columns) == list(point)
    for key, value in point.items():
        assert frame[key].iloc[0] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    # the loop: user u counted w_u times, pairs of distinct users' copies, dataset-level sims
    _, _, train_sets, _ = python_views(inputs, train, test, topk)
    cos = ref.cosine(train_sets)
    g = variants.per_user_scores(inputs, 10)["gNDCG"]
    for row, w in enumerate(weights[1:], start=1):
        expanded = np.repeat(g, w)
        assert frame["gNDCG"].iloc[row] == pytest.approx(expanded.mean(), rel=1e-12)
        assert frame["SD-gNDCG"].iloc[row] == pytest.approx(ref.sd(list(expanded)), rel=1e-9)
        assert frame["Gini-gNDCG"].iloc[row] == pytest.approx(ref.gini(list(expanded)), rel=1e-9)
        total = sum(w[u] * w[v] * s * abs(g[u] - g[v]) for (u, v), s in cos.items())
        pairs = (w.sum() ** 2 - (w**2).sum()) / 2
        assert frame["PUF-gNDCG-Cos"].iloc[row] == pytest.approx(total / pairs, rel=1e-9)


def test_evaluate_command_gives_intervals_of_the_opt_in_measures(tmp_path, capsys):
    train, test, topk, _ = graded_split(6, m=15)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_parquet(tmp_path / "topk.parquet")
    files = ["--train", str(tmp_path / "d.train.inter"), "--test", str(tmp_path / "d.test.inter"),
             "--topk", str(tmp_path / "topk.parquet")]  # fmt: skip
    args = [*files, "--grade", "rating", "--resamples", "20", "--json", "--route", "dense"]
    assert main(["evaluate", *args]) == 0
    result = json.loads(capsys.readouterr().out)
    inputs = load_inputs(train, test, topk, grade="rating")
    keys = list(NAMES) + list(variants.names_of(inputs))
    assert list(result["intervals"]) == keys
    weights = uncertainty.resample_weights(len(inputs.users), 20, 2024)
    frame = bootstrap_variants(inputs, weights)
    for key in frame.columns:
        low, high = result["intervals"][key]
        assert low == pytest.approx(np.percentile(frame[key], 2.5), rel=1e-9)
        assert high == pytest.approx(np.percentile(frame[key], 97.5), rel=1e-9)


def test_compare_gives_paired_intervals_of_the_opt_in_measures(tmp_path, capsys):
    # two lists of the same split: every opt-in measure gets B - A, its interval over the
    # same resampled users and p, as the 18 do
    train, test, topk, item_genres = graded_split(9, m=15)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    write_item_file(tmp_path / "d.item", item_genres)
    topk.to_parquet(tmp_path / "a.parquet")
    other = topk.assign(rank=topk.groupby("user_id")["rank"].transform(lambda r: r.max() + 1 - r))
    other.to_parquet(tmp_path / "b.parquet")  # each list reversed: P the same, NDCG not
    users = sorted(test.user_id.unique())
    vectors = np.random.default_rng(2).normal(size=(len(users), 3))
    pd.DataFrame(vectors, columns=["x", "y", "z"]).assign(user_id=users).to_csv(
        tmp_path / "v.csv", index=False
    )
    args = [
        "compare", "--train", str(tmp_path / "d.train.inter"), "--test",
        str(tmp_path / "d.test.inter"), "--topk", str(tmp_path / "a.parquet"), "--topk",
        str(tmp_path / "b.parquet"), "--grade", "rating", "--user-vectors",
        str(tmp_path / "v.csv"), "--similarity", "genre", "--item-features",
        str(tmp_path / "d.item"), "--resamples", "30", "--json",
    ]  # fmt: skip
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    frames, points = [], []
    for name in ("a", "b"):
        inputs = load_inputs(
            tmp_path / "d.train.inter", tmp_path / "d.test.inter", tmp_path / f"{name}.parquet",
            grade="rating", item_features=tmp_path / "d.item",
        )  # fmt: skip
        weights = uncertainty.resample_weights(len(inputs.users), 30, 2024)
        frames.append(bootstrap_variants(inputs, weights, 10, ["genre", "vec"], vectors))
        points.append(variants.evaluate_variants(inputs, 10, ["genre", "vec"], vectors)[0])
    opt_in = list(points[0])
    assert "PUF-gNDCG-Vec" in opt_in and "PUF-NDCG-Genre" in opt_in
    assert list(result["measures"]) == list(NAMES) + opt_in
    for key in opt_in:
        got = result["measures"][key]
        assert got["difference"] == pytest.approx(points[1][key] - points[0][key], abs=1e-12)
        differences = frames[1][key].to_numpy() - frames[0][key].to_numpy()
        assert got["low"] == pytest.approx(np.percentile(differences, 2.5), abs=1e-12), key
        assert got["high"] == pytest.approx(np.percentile(differences, 97.5), abs=1e-12), key
        assert result["a"]["values"][key] == pytest.approx(points[0][key], rel=1e-12)
    # P is the same for a reversed list: its difference is 0 in every resample
    assert result["measures"]["PUF-P-Vec"]["difference"] == 0.0
