"""Bootstrap over evaluated users (userfair.bootstrap.uncertainty): every resampled value of the 18
measures against a loop over the materialised resampled population, all-ones weights =
evaluate(), paired comparisons, Holm, tau intervals, and the command's options."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import inference, uncertainty
from userfair.cli import main
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import write_inter
from userfair.formulas import agreement
from userfair.measures import NAMES as KEYS
from userfair.measures import NAMES as MEASURES

import reference as ref
from measures_data import python_views, random_split, write_item_file

K = 10


def close(a, b, rel=1e-9):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """A 20-user split, its inputs (with genres) and the loop views."""
    path = tmp_path_factory.mktemp("split")
    train, test, topk, item_genres = random_split(11, m=20)
    write_item_file(path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=path / "d.item")
    views = python_views(inputs, train, test, topk)
    return inputs, views, item_genres


def hand_weights(m):
    """Awkward multiplicities: zeros, a user drawn 4 times, the two identical users."""
    w = np.zeros(m, dtype=np.int64)
    w[[0, 1, 2, 5, 7, 11]] = [3, 1, 4, 2, 1, 1]
    w[3] = m - w.sum()
    return w


@pytest.mark.parametrize("utility", ["precision", "ideal"])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
def test_every_resample_equals_the_materialised_loop(split, utility, gamma):
    inputs, (lists, relevant, train_sets, all_train), item_genres = split
    m = len(inputs.users)
    weights = np.vstack([uncertainty.resample_weights(m, 3, seed=7), hand_weights(m)])
    frame = uncertainty.bootstrap(
        inputs, weights, k=K, gamma=gamma, envy_utility=utility, device="cpu", block_size=6
    )
    assert list(frame.columns) == list(KEYS) and frame.index.name == "resample"
    assert frame.attrs["conventions"]["envy_utility"] == utility
    assert frame.attrs["conventions"]["gamma"] == gamma
    cos, jacc = ref.cosine(train_sets), ref.jaccard(train_sets)
    sim_uf = ref.jaccard_raw(train_sets)
    if gamma < 1:
        genres = sorted({g for gs in item_genres.values() for g in gs})
        sim_uf = ref.uf_similarity(
            sim_uf, ref.genre_js_similarity(train_sets, item_genres, genres), gamma
        )
    for b, w in enumerate(weights):
        expected = ref.resampled(
            list(w), lists, relevant, all_train, cos, jacc, sim_uf, K, utility=utility
        )
        for key in KEYS:
            assert close(frame.loc[b, key], expected[key]), (
                b,
                key,
                frame.loc[b, key],
                expected[key],
            )


@pytest.mark.parametrize("utility", ["precision", "ideal"])
def test_all_ones_weights_reproduce_evaluate(split, utility):
    inputs = split[0]
    m = len(inputs.users)
    point = evaluate(inputs, k=K, device="cpu", envy_utility=utility)
    frame = uncertainty.bootstrap(inputs, np.ones(m, dtype=int), envy_utility=utility, device="cpu")
    for key in KEYS:
        assert close(frame.loc[0, key], point[key], rel=1e-12), key


def test_degenerate_resamples_give_nan_pair_measures(split):
    inputs, (lists, relevant, train_sets, all_train), _ = split
    m = len(inputs.users)
    single = np.zeros(m, dtype=int)
    single[4] = m  # one user drawn m times: every pair is a copy pair
    two = np.zeros(m, dtype=int)
    two[[0, 9]] = [m - 1, 1]  # two distinct users: pairs exist, but UF's log(P_w) needs 2
    frame = uncertainty.bootstrap(inputs, np.vstack([single, two]), device="cpu")
    assert frame.loc[0, "SD-P"] == 0.0
    for key in ("ME", "MME", "PEU", "UF", "PUF-P-Cos", "PUF-NDCG-Jacc"):
        assert math.isnan(frame.loc[0, key]), key
    expected = ref.resampled(
        list(two),
        lists,
        relevant,
        all_train,
        ref.cosine(train_sets),
        ref.jaccard(train_sets),
        ref.jaccard_raw(train_sets),
        K,
    )
    for key in KEYS:
        assert close(frame.loc[1, key], expected[key]), key


@pytest.mark.parametrize("users", [["a"], ["a", "b"]])
def test_one_or_two_users_give_nan_not_errors(users):
    train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["1", "2", "3"]})
    test = pd.DataFrame({"user_id": users, "item_id": ["3"] * len(users)})
    topk = pd.DataFrame(
        {
            "user_id": [u for u in users for _ in range(2)],
            "item_id": ["1", "3"] * len(users),
            "rank": [1, 2] * len(users),
        }
    )
    inputs = load_inputs(train, test, topk, k=2)
    weights = uncertainty.resample_weights(len(users), 6, seed=0)
    frame = uncertainty.bootstrap(
        inputs, np.vstack([np.ones(len(users), int), weights]), k=2, device="cpu"
    )
    point = evaluate(inputs, k=2, device="cpu")
    for key in KEYS:
        assert close(frame.loc[0, key], point[key]), key
    assert frame["UF"].isna().all() and (frame["P"] == 0.5).all()


def test_paths_and_blocks_agree(split):
    inputs = split[0]
    weights = uncertainty.resample_weights(len(inputs.users), 5, seed=3)
    numpy_frame = uncertainty.bootstrap(inputs, weights, device="cpu")
    torch_frame = uncertainty.bootstrap(inputs, weights, device="torch-cpu", block_size=4)
    for key in KEYS:
        for a, b in zip(numpy_frame[key], torch_frame[key]):
            assert close(a, b, rel=1e-12), key


def test_resample_weights_are_seeded_counts():
    w = uncertainty.resample_weights(12, 50, seed=1)
    assert w.shape == (50, 12) and w.dtype == np.int64 and (w.sum(axis=1) == 12).all()
    draws = np.random.default_rng(1).integers(0, 12, size=(50, 12))
    assert (w[7] == np.bincount(draws[7], minlength=12)).all()
    assert (uncertainty.resample_weights(12, 50, seed=1) == w).all()
    assert (uncertainty.resample_weights(12, 10, seed=1) == w[:10]).all()  # prefix-stable
    assert (uncertainty.resample_weights(12, 50, seed=2) != w).any()
    with pytest.raises(ValueError, match="resamples"):
        uncertainty.resample_weights(12, -1)


def test_bad_weights_are_errors(split):
    inputs = split[0]
    with pytest.raises(ValueError, match="weights must be"):
        uncertainty.bootstrap(inputs, np.ones((2, 3)))
    with pytest.raises(ValueError, match=">= 0"):
        uncertainty.bootstrap(inputs, -np.ones(len(inputs.users)))
    with pytest.raises(ValueError, match="integers"):
        uncertainty.bootstrap(inputs, np.full(len(inputs.users), 0.5))


def test_a_model_compared_with_itself(split):
    inputs = split[0]
    weights = uncertainty.resample_weights(len(inputs.users), 30, seed=0)
    frame = uncertainty.bootstrap(inputs, weights, device="cpu")
    point = evaluate(inputs, device="cpu")
    table = inference.compare(frame, frame.copy(), point, point)
    assert list(table.index) == list(KEYS)
    assert (table["difference"] == 0).all() and (table["p"] == 1).all()
    assert (table[["low", "high"]] == 0).all().all()


def test_rounding_differences_count_as_zero():
    """Two models equal up to summation order must not differ significantly."""
    a = pd.DataFrame({"UF": np.linspace(0.4, 0.5, 50), "P": np.linspace(0.1, 0.2, 50)})
    b = a.copy()
    b["UF"] *= 1 + 1e-15  # rounding of another summation order, always the same sign
    b["P"] += 1e-3
    table = inference.compare(a, b, {"UF": 0.45, "P": 0.15}, {"UF": 0.45 * (1 + 1e-15), "P": 0.151})
    assert table.loc["UF", "difference"] == 0 and table.loc["UF", "p"] == 1
    assert table.loc["P", "difference"] == pytest.approx(1e-3)
    assert table.loc["P", "p"] == pytest.approx(2 / 51)


def planted_split(seed=0, m=40, subgroup=12):
    """Lists A give every user 5 hits in 10; lists B differ only for a subgroup of users,
    whose lists hold no hit: an unfair subgroup among similar users."""
    rng = np.random.default_rng(seed)
    items = [f"i{j:03d}" for j in range(120)]
    train, test, list_a, list_b = [], [], [], []
    for u in range(m):
        user = f"u{u:02d}"
        pool = rng.permutation(120)
        train += [(user, items[j]) for j in rng.choice(30, size=8, replace=False)]
        relevant = [items[j] for j in pool[pool >= 30][:5]]
        other = [items[j] for j in pool[pool >= 30][5:15]]
        test += [(user, item) for item in relevant]
        list_a += [(user, item, r + 1) for r, item in enumerate(relevant + other[:5])]
        unfair = other if u < subgroup else relevant + other[:5]
        list_b += [(user, item, r + 1) for r, item in enumerate(unfair)]
    train += [("t00", item) for item in items[30:]]  # a train-only user: every item is known
    train = pd.DataFrame(train, columns=["user_id", "item_id"])
    test = pd.DataFrame(test, columns=["user_id", "item_id"])
    columns = ["user_id", "item_id", "rank"]
    return train, test, pd.DataFrame(list_a, columns=columns), pd.DataFrame(list_b, columns=columns)


def test_a_planted_unfair_subgroup_is_significant():
    train, test, list_a, list_b = planted_split()
    inputs_a = load_inputs(train, test, list_a)
    inputs_b = load_inputs(train, test, list_b)
    sims = uncertainty.dataset_similarities(inputs_a)
    weights = uncertainty.resample_weights(len(inputs_a.users), 200, seed=5)
    points, frames = {}, {}
    for name, inputs in (("A", inputs_a), ("B", inputs_b)):
        points[name] = evaluate(inputs, similarities=sims, device="cpu")
        frames[name] = uncertainty.bootstrap(inputs, weights, similarities=sims, device="cpu")
    assert points["A"]["PUF-P-Jacc"] == 0.0  # every user has P = 0.5
    table = inference.compare(frames["A"], frames["B"], points["A"], points["B"])
    for key in ("PUF-P-Cos", "PUF-P-Jacc", "PUF-NDCG-Cos", "PUF-NDCG-Jacc"):
        assert table.loc[key, "difference"] > 0 and table.loc[key, "low"] > 0
        assert table.loc[key, "p"] < 0.05, key
        assert table.loc[key, "p"] == pytest.approx(2 / 201)


def test_p_value_rules():
    assert inference.p_value(np.zeros(10)) == 1.0
    assert inference.p_value(np.ones(99)) == pytest.approx(2 / 100)
    assert inference.p_value(-np.ones(99)) == pytest.approx(2 / 100)
    # 3 of 9 below 0, one exactly 0: below (4 + 1) / 10, above (6 + 1) / 10
    d = np.array([-3, -2, -1, 0, 1, 2, 3, 4, 5.0])
    assert inference.p_value(d) == pytest.approx(2 * 5 / 10)
    assert inference.p_value(np.r_[np.ones(9), np.nan]) == pytest.approx(2 / 10)
    assert math.isnan(inference.p_value([np.nan]))


def test_holm_hand_worked():
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 -> max 0.06
    adjusted = inference.holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    with_nan = inference.holm([0.01, np.nan, 0.04])  # n = 2: 0.02, 0.04
    assert with_nan[0] == pytest.approx(0.02) and math.isnan(with_nan[1])
    assert with_nan[2] == pytest.approx(0.04)
    assert inference.holm([0.3, 0.5]) == pytest.approx([0.6, 0.6])
    assert inference.holm([0.7, 0.9]) == pytest.approx([1.0, 1.0])  # capped
    series = inference.holm(pd.Series([0.02, 0.01], index=["x", "y"]))
    assert list(series.index) == ["x", "y"] and series.tolist() == pytest.approx([0.02, 0.02])
    assert inference.holm({"a": 0.01, "b": 0.2}) == pytest.approx({"a": 0.02, "b": 0.2})


def test_intervals_are_percentiles_of_the_finite_resamples():
    frame = pd.DataFrame({"P": np.arange(101.0), "UF": [np.nan] * 100 + [1.0]})
    frame["ME"] = np.nan
    result = inference.intervals(frame, 0.9)
    assert result["P"] == pytest.approx((5.0, 95.0))
    assert result["UF"] == (1.0, 1.0)
    assert all(math.isnan(x) for x in result["ME"])
    with pytest.raises(ValueError, match="level"):
        inference.intervals(frame, 1.5)


def test_tau_b_equals_the_agreement_conventions():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, size=(6, 7, 5)).astype(float)  # ties
    values[0, 2, 1] = values[3, :, 4] = np.nan  # a NaN model, an all-NaN measure
    values[4, :, 0] = 1.0  # a constant measure
    taus = inference.resampled_tau_b(values)
    for b in range(values.shape[0]):
        for i in range(5):
            for j in range(5):
                expected = agreement.kendall_tau_b(values[b, :, i], values[b, :, j])
                assert close(taus[b, i, j], expected), (b, i, j)


def test_tau_intervals_and_significance_of_three_models(split):
    inputs, *_ = split
    rng = np.random.default_rng(4)
    m = len(inputs.users)
    weights = uncertainty.resample_weights(m, 40, seed=9)
    frames, points = {}, {}
    for name in ("X", "Y", "Z"):
        topk = np.array([rng.permutation(len(inputs.items))[:K] for _ in range(m)])
        shuffled = type(inputs)(**{**inputs.__dict__, "topk": topk})
        points[name] = evaluate(shuffled, device="cpu")
        frames[name] = uncertainty.bootstrap(shuffled, weights, device="cpu")
    taus = inference.tau_intervals(frames, points, level=0.9)
    assert len(taus) == len(MEASURES) ** 2
    full = agreement.agreement_matrix(pd.DataFrame(points).T[list(MEASURES)].astype(float))
    for row in taus.itertuples():
        assert close(row.tau, full.loc[row.measure_a, row.measure_b])
        assert row.excludes_zero == (row.low > 0 or row.high < 0)
    table = inference.significance(frames, points, level=0.95)
    assert len(table) == 3 * len(KEYS)
    assert list(table["measure"].unique()) == list(KEYS)
    for _, group in table.groupby("measure"):
        assert group["p_holm"].tolist() == pytest.approx(
            inference.holm(group["p"]).tolist(), nan_ok=True
        )
    assert (table["significant"] == (table["p_holm"] < 0.05)).all()
    ci = inference.summary(frames, points, level=0.95)
    assert len(ci) == 3 * len(KEYS) and list(ci.columns) == [
        "model",
        "measure",
        "value",
        "low",
        "high",
    ]


# ------------------------------------------------------------------------- command


@pytest.fixture()
def files(tmp_path):
    train, test, topk, _ = random_split(5, m=20)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    return tmp_path, train, test, topk


def args(path, command, *extra):
    return [
        command,
        "--train",
        str(path / "d.train.inter"),
        "--test",
        str(path / "d.test.inter"),
        *extra,
    ]


def without_seconds(record):
    return {key: value for key, value in record.items() if key != "seconds"}


def test_cli_resamples_add_intervals(files, capsys):
    path, train, test, topk = files
    topk_arg = ["--topk", str(path / "a.tsv"), "--device", "cpu"]
    assert main(args(path, "evaluate", *topk_arg, "--json")) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(args(path, "evaluate", *topk_arg, "--json", "--resamples", "0")) == 0
    zero = json.loads(capsys.readouterr().out)
    assert list(zero) == list(plain) == list(KEYS) + ["seconds", "conventions"]
    assert without_seconds(zero) == without_seconds(plain)
    extra = ["--json", "--resamples", "25", "--level", "0.9", "--seed", "3"]
    assert main(args(path, "evaluate", *topk_arg, *extra)) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == list(KEYS) + [
        "seconds",
        "conventions",
        "intervals",
        "resamples",
        "level",
        "seed",
    ]
    assert printed["resamples"] == 25 and printed["level"] == 0.9 and printed["seed"] == 3
    for key in KEYS:
        assert close(printed[key], plain[key]), key
    inputs = load_inputs(train, test, topk)
    weights = uncertainty.resample_weights(len(inputs.users), 25, seed=3)
    expected = inference.intervals(uncertainty.bootstrap(inputs, weights, device="cpu"), 0.9)
    assert list(printed["intervals"]) == list(KEYS)
    for key in KEYS:
        assert all(close(a, b) for a, b in zip(printed["intervals"][key], expected[key])), key
    assert main(args(path, "evaluate", *topk_arg, "--resamples", "10")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["measure", "value", "low", "high", "seconds"]
    assert [line.split()[0] for line in lines[1:19]] == list(KEYS)
    assert lines[-1].startswith("conventions:")
    assert "10 resamples" in lines[-2]


def test_cli_compare(files, capsys):
    path, train, test, topk = files
    shuffled = topk.copy()
    shuffled["rank"] = K + 1 - shuffled["rank"]  # the same items in reverse order
    shuffled.to_csv(path / "b.tsv", sep="\t", index=False)
    same = ["--topk", str(path / "a.tsv"), "--topk", str(path / "a.tsv")]
    assert main(args(path, "compare", *same, "--resamples", "20", "--json")) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed["measures"]) == list(KEYS)
    assert printed["resamples"] == 20
    for key in KEYS:
        entry = printed["measures"][key]
        assert list(entry) == ["difference", "low", "high", "p"]
        assert entry["difference"] == 0 and entry["p"] == 1, key
    pair = ["--topk", str(path / "a.tsv"), "--topk", str(path / "b.tsv")]
    assert main(args(path, "compare", *pair, "--resamples", "20", "--json", "--seed", "4")) == 0
    printed = json.loads(capsys.readouterr().out)
    inputs_a, inputs_b = load_inputs(train, test, topk), load_inputs(train, test, shuffled)
    weights = uncertainty.resample_weights(len(inputs_a.users), 20, seed=4)
    expected = inference.compare(
        uncertainty.bootstrap(inputs_a, weights, device="cpu"),
        uncertainty.bootstrap(inputs_b, weights, device="cpu"),
        evaluate(inputs_a, device="cpu"),
        evaluate(inputs_b, device="cpu"),
    )
    for key in KEYS:
        for field in ("difference", "low", "high", "p"):
            assert close(printed["measures"][key][field], expected.loc[key, field]), (key, field)
    assert main(args(path, "compare", *pair, "--resamples", "20")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["measure", "A", "B", "B-A", "low", "high", "p"]
    assert [line.split()[0] for line in lines[1:19]] == list(KEYS)


@pytest.mark.parametrize(
    "command, extra, message",
    [
        ("compare", ["--topk", "a.tsv"], "exactly two --topk"),
        ("compare", ["--topk", "a.tsv", "--topk", "a.tsv", "--resamples", "0"], "resamples"),
        ("evaluate", ["--topk", "a.tsv", "--resamples", "-1"], "resamples"),
        ("evaluate", ["--topk", "a.tsv", "--resamples", "5", "--level", "1"], "level"),
    ],
)
def test_cli_bad_options(files, capsys, command, extra, message):
    path = files[0]
    extra = [str(path / x) if x.endswith(".tsv") else x for x in extra]
    try:
        code = main(args(path, command, *extra))
    except SystemExit as exit:  # refused by the option's bound (userfair.bounds)
        code = exit.code
    assert code == 2
    err = capsys.readouterr().err
    assert "error:" in err and message in err, err
