"""Group fairness (userfair.formulas.groups): groups from a file, a .user feature and activity, the
group means and UserMAD-{P,NDCG} against a direct loop over groups and pairs of groups
(random inputs and hand-worked cases, dense and streamed routes), and the bootstrap's group
columns against explicit resamples (docs/method.md#groups)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import inference, uncertainty
from userfair.evaluate import as_json, evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import InputError
from userfair.formulas import groups as G
from userfair.measures import FAIR_GROUP, NAMES, higher_is_better

import reference as ref
from measures_data import python_views, random_split

K = 10


def direct(scores, labels):
    """Group means (dict) and the mean |difference| over unordered pairs of groups, as loops;
    ``labels[u]`` is a group name or None."""
    members = {}
    for score, label in zip(scores, labels):
        if label is not None:
            members.setdefault(label, []).append(score)
    means = {g: sum(v) / len(v) for g, v in members.items()}
    pairs = list(itertools.combinations(sorted(means), 2))
    mad = sum(abs(means[a] - means[b]) for a, b in pairs) / len(pairs) if pairs else math.nan
    return means, mad


def close(a, b, tol=1e-9):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


# --- hand-worked cases -------------------------------------------------------------------


def test_hand_worked_three_groups():
    # means: a = (0.1 + 0.2) / 2 = 0.15, b = (0.3 + 0.5) / 2 = 0.4, c = 0.0;
    # pairs |0.15 - 0.4| + |0.15 - 0| + |0.4 - 0| = 0.8 over 3 pairs.
    groups = G.from_table(
        ["u1", "u2", "u3", "u4", "u5", "u6"],
        ["u1", "u2", "u3", "u4", "u5", "x9"],
        ["a", "a", "b", "b", "c", "d"],
        by="test",
        label="t",
    )
    assert groups.names == ("a", "b", "c") and groups.dropped == ("d",)
    assert groups.unassigned == 1 and list(groups.sizes) == [2, 2, 1]
    scores = {"P": np.array([0.1, 0.2, 0.3, 0.5, 0.0, 0.9]), "NDCG": np.zeros(6)}
    got = G.measures(scores, groups)
    assert abs(got["UserMAD-P"] - 0.8 / 3) <= 1e-15 and got["UserMAD-NDCG"] == 0.0
    rows = G.group_rows(scores, groups)
    assert [(r["group"], r["users"]) for r in rows] == [("a", 2), ("b", 2), ("c", 1)]
    assert abs(rows[1]["P"] - 0.4) <= 1e-15


def test_two_groups_is_the_gap_and_one_group_is_nan():
    assert G.mean_absolute_difference([0.25, 0.1]) == pytest.approx(0.15, abs=1e-15)
    assert math.isnan(G.mean_absolute_difference([0.3]))
    assert math.isnan(G.mean_absolute_difference([0.3, np.nan]))
    rows = G.mean_absolute_difference([[0.1, np.nan, 0.4], [0.0, 1.0, 0.5]])
    assert rows[0] == pytest.approx(0.3) and rows[1] == pytest.approx(1.0 / 3 * 2)


def test_activity_sizes_and_ties():
    counts = np.array([3, 5, 5, 1, 2])
    users = np.array(["a", "b", "c", "d", "e"])
    # p = 0.2: ceil(1.0) = 1 active user; b and c tie at 5, the earlier id wins.
    assert list(G.by_activity(counts, users, 0.2).labels) == [1, 0, 1, 1, 1]
    assert list(G.by_activity(counts, users, 0.3).labels) == [1, 0, 0, 1, 1]  # ceil(1.5)
    backwards = G.by_activity(counts[::-1], users[::-1], 0.2).labels  # another order
    assert list(backwards[::-1]) == [1, 0, 1, 1, 1]
    assert G.active_count(100, 0.07) == 7  # 0.07 * 100 = 7.000000000000001
    assert G.active_count(20, 0.05) == 1 and G.active_count(21, 0.05) == 2
    assert G.active_count(3, 0.99) == 2  # both groups non-empty
    assert G.by_activity([4], ["a"], 0.5).names == ("active",)
    with pytest.raises(ValueError, match="share"):
        G.active_count(10, 1.0)


def test_group_file_and_errors(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("user_id\tgroup\nu1\tx\nu2\ty\n")
    table = G.read_user_groups(path)
    assert list(table["group"]) == ["x", "y"]
    pd.DataFrame({"user_id": ["u1"], "group": ["x"]}).to_parquet(tmp_path / "g.parquet")
    assert list(G.read_user_groups(tmp_path / "g.parquet")["user_id"]) == ["u1"]
    (tmp_path / "bad.csv").write_text("user,group\nu1,x\n")
    with pytest.raises(InputError, match="bad.csv: missing column 'user_id'"):
        G.read_user_groups(tmp_path / "bad.csv")
    with pytest.raises(InputError, match="unknown suffix"):
        G.read_user_groups(tmp_path / "g.json")
    with pytest.raises(InputError, match="user 'u1' is in more than one group"):
        G.from_table(["u1"], ["u1", "u1"], ["x", "y"], by="t", label="g.csv")


def test_one_user_reader_dtype_rule(tmp_path):
    path = tmp_path / "d.user"
    path.write_text("user_id:token\tage:float\tgender:token\nu1\t24\tF\nu2\t\tM\n")
    typed = G.read_user_features(path)
    assert typed["age"].dtype == np.float64 and math.isnan(typed["age"][1])
    assert typed["gender"].tolist() == ["F", "M"] and typed["user_id"].tolist() == ["u1", "u2"]
    text = G.read_user_features(path, text=True)
    assert text["age"].tolist() == ["24", ""]
    with open(path, "rb") as handle:  # a handle, as the workflow's who reads a zip member
        assert G.read_user_features(handle, label="z:d.user")["age"][0] == 24.0
    path.write_text("user_id:token\tage:float\nu1\tyoung\n")
    with pytest.raises(InputError, match="column 'age:float' is typed float but holds 'young'"):
        G.read_user_features(path)
    path.write_text("id:token\tage:float\nu1\t3\n")
    with pytest.raises(InputError, match="missing column 'user_id'"):
        G.read_user_features(path)


# --- random inputs, both routes ------------------------------------------------------------


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    train, test, topk, _ = random_split(7, m=30)
    inputs = load_inputs(train, test, topk, k=K)
    lists, relevant, train_sets, _ = python_views(inputs, train, test, topk, K)
    per_user = ref.effectiveness(lists, relevant, K)
    rng = np.random.default_rng(3)
    users = list(inputs.users)
    labels = [None if rng.random() < 0.1 else f"g{int(rng.integers(4))}" for _ in users]
    folder = tmp_path_factory.mktemp("groups")
    table = [(u, g) for u, g in zip(users, labels) if g is not None] + [("nobody", "g9")]
    path = folder / "groups.csv"
    pd.DataFrame(table, columns=["user_id", "group"]).to_csv(path, index=False)
    return inputs, per_user, labels, train_sets, str(path)


@pytest.mark.parametrize("route", ["dense", "stream"])
def test_random_groups_equal_the_loop_on_both_routes(case, route):
    inputs, per_user, labels, _, path = case
    groups = G.groups_of(inputs, path)
    assert groups.dropped == ("g9",) and groups.unassigned == labels.count(None)
    result = evaluate(inputs, k=K, block_size=4, device="cpu", route=route, groups=groups)
    for score in ("P", "NDCG"):
        means, mad = direct(per_user[score], labels)
        assert close(result[f"UserMAD-{score}"], mad)
        for row in result["groups"]["rows"]:
            assert close(row[score], means[row["group"]])
            assert row["users"] == labels.count(row["group"])
    assert result["groups"]["dropped"] == ["g9"]
    assert set(as_json(result)) >= set(NAMES) | set(FAIR_GROUP) | {"groups"}
    plain = evaluate(inputs, k=K, block_size=4, device="cpu", route=route)
    assert not set(FAIR_GROUP) & set(plain) and "groups" not in plain


def test_random_activity_and_feature_groups(case, tmp_path):
    inputs, per_user, _, train_sets, _ = case
    share = 0.2
    m = len(inputs.users)
    ranked = sorted(range(m), key=lambda u: (-len(train_sets[u]), inputs.users[u]))
    top = set(ranked[: math.ceil(share * m)])
    labels = ["active" if u in top else "inactive" for u in range(m)]
    groups = G.groups_of(inputs, f"activity:{share}")
    assert groups.by == "activity:0.2" and list(groups.sizes) == [len(top), m - len(top)]
    got = G.measures({s: np.array(v) for s, v in per_user.items()}, groups)
    assert close(got["UserMAD-P"], direct(per_user["P"], labels)[1])
    path = tmp_path / "d.user"
    ages = [str(20 + u % 3) for u in range(m)]
    lines = ["user_id:token\tage:float"] + [f"{u}\t{a}" for u, a in zip(inputs.users, ages)]
    path.write_text("\n".join(lines) + "\n")
    by_age = G.groups_of(inputs, "feature:age", G.read_user_features(path), str(path))
    assert by_age.names == ("20", "21", "22")
    got = G.measures({s: np.array(v) for s, v in per_user.items()}, by_age)
    assert close(got["UserMAD-NDCG"], direct(per_user["NDCG"], ages)[1])
    with pytest.raises(InputError, match="no feature 'height'"):
        G.groups_of(inputs, "feature:height", G.read_user_features(path), str(path))


# --- bootstrap -----------------------------------------------------------------------------


def test_bootstrap_columns_equal_explicit_resamples(case):
    inputs, per_user, labels, _, path = case
    groups = G.groups_of(inputs, path)
    weights = uncertainty.resample_weights(len(inputs.users), 6, seed=5)
    weights[0] = 1
    weights[0, [u for u, g in enumerate(labels) if g == "g1"]] = 0  # g1 not drawn
    frame = uncertainty.bootstrap(inputs, weights, k=K, groups=groups)
    assert list(frame.columns[: len(NAMES)]) == list(NAMES)
    for b, row in enumerate(weights):
        drawn = [u for u, w in enumerate(row) for _ in range(w)]
        for score in ("P", "NDCG"):
            values = [per_user[score][u] for u in drawn]
            means, mad = direct(values, [labels[u] for u in drawn])
            assert close(frame[f"UserMAD-{score}"][b], mad)
            for name in groups.names:
                assert close(frame[G.mean_column(score, name)][b], means.get(name, math.nan))
    assert math.isnan(frame["P[g1]"][0])
    ones = uncertainty.bootstrap(inputs, np.ones((1, len(labels)), int), k=K, groups=groups)
    point = G.point({s: np.array(v) for s, v in per_user.items()}, groups)
    assert all(close(ones[key][0], value) for key, value in point.items())


def test_paired_comparisons_with_holm(case):
    inputs, _, _, _, path = case
    groups = G.groups_of(inputs, path)
    weights = uncertainty.resample_weights(len(inputs.users), 40, seed=1)
    shuffled = inputs.topk[:, ::-1].copy()  # another "model": the same items, reversed
    other = type(inputs)(**{**inputs.__dict__, "topk": shuffled})
    frames, points = {}, {}
    for name, run in (("A", inputs), ("B", other)):
        frames[name] = uncertainty.bootstrap(run, weights, k=K, groups=groups)
        points[name] = evaluate(run, k=K, device="cpu", route="dense", groups=groups)
    table = inference.significance(frames, points, measures=FAIR_GROUP)
    assert list(table["measure"]) == list(FAIR_GROUP)
    # UserMAD-P depends on the set of listed items only: reversing changes nothing.
    assert table.set_index("measure").loc["UserMAD-P", "difference"] == 0.0
    d = frames["B"]["UserMAD-NDCG"] - frames["A"]["UserMAD-NDCG"]
    assert close(table.set_index("measure").loc["UserMAD-NDCG", "p"], inference.p_value(d))
    assert not higher_is_better("UserMAD-P")


# --- the command -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from userfair.files.io import write_inter

    folder = tmp_path_factory.mktemp("cli")
    train, test, topk, _ = random_split(11, m=24)
    write_inter(train, folder / "train.inter")
    write_inter(test, folder / "test.inter")
    topk.to_csv(folder / "topk.csv", index=False)
    topk.assign(rank=K + 1 - topk["rank"]).to_csv(folder / "reversed.csv", index=False)
    users = sorted(test["user_id"].unique())
    rows = [f"{u}\t{'FM'[i % 2]}" for i, u in enumerate(users)]
    (folder / "d.user").write_text("user_id:token\tgender:token\n" + "\n".join(rows) + "\n")
    base = ["--train", str(folder / "train.inter"), "--test", str(folder / "test.inter")]
    inputs = load_inputs(train, test, topk, k=K)
    return folder, base, inputs


def run(capsys, argv):
    from userfair.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_command_group_measures(files, capsys):
    import json

    folder, base, inputs = files
    argv = ["evaluate", *base, "--topk", str(folder / "topk.csv")]
    code, out, _ = run(capsys, argv + ["--user-groups", "activity:0.25", "--json"])
    assert code == 0
    got = json.loads(out)
    want = evaluate(inputs, k=K, groups=G.groups_of(inputs, "activity:0.25"))
    for key in FAIR_GROUP:
        assert close(got[key], want[key])
    assert got["groups"]["rows"] == want["groups"]["rows"]
    assert [r["users"] for r in got["groups"]["rows"]] == [6, 18]  # ceil(0.25 * 24)
    feature = ["--user-groups", "feature:gender", "--user-features", str(folder / "d.user")]
    code, out, _ = run(capsys, argv + feature)
    assert code == 0 and "groups by feature:gender" in out and "UserMAD-NDCG" in out
    assert "\nF " in out and "\nM " in out
    code, out, _ = run(capsys, argv + feature + ["--resamples", "20", "--json"])
    record = json.loads(out)
    assert set(record["intervals"]) >= {"UserMAD-P", "P[F]", "NDCG[M]"}
    code, _, err = run(capsys, argv + ["--user-groups", "feature:gender"])
    assert code == 2 and "--user-features" in err and len(err.strip().splitlines()) == 1


def test_compare_and_users_with_groups(files, capsys):
    import io
    import json

    folder, base, inputs = files
    groups = ["--user-groups", "activity"]
    argv = ["compare", *base, "--topk", str(folder / "topk.csv")]
    argv += ["--topk", str(folder / "reversed.csv"), "--resamples", "20", "--json", *groups]
    code, out, _ = run(capsys, argv)
    measures = json.loads(out)["measures"]
    assert code == 0 and measures["UserMAD-P"]["difference"] == 0.0  # same items per list
    assert "P[active]" in measures and "NDCG[inactive]" in measures
    argv = ["users", *base, "--topk", str(folder / "topk.csv"), "--route", "dense", *groups]
    code, out, _ = run(capsys, argv)
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and list(frame.columns[:2]) == ["user_id", "group"]
    expected = G.user_labels(G.groups_of(inputs, "activity:0.05"))
    assert frame["group"].tolist() == list(expected) and (frame["group"] == "active").sum() == 2


def test_a_numeric_feature_with_many_values_is_cut_into_quintile_bands():
    """ML-100k's age (61 values) gives 5 bands at its quintiles, labelled by range and
    sorting by value; gender (2 values) and a feature of 10 numbers stay as they are."""
    from userfair.formulas.groups import MAX_FEATURE_GROUPS, bands

    ages = pd.Series([str(a) for a in range(10, 60)])  # 50 users, ages 10..59
    cut = bands(ages)
    assert list(dict.fromkeys(cut)) == [
        "[10, 19.8)", "[19.8, 29.6)", "[29.6, 39.4)", "[39.4, 49.2)", "[49.2, 59]"
    ]  # fmt: skip
    assert cut.value_counts().tolist() == [10] * 5
    assert cut.iloc[0] == "[10, 19.8)" and cut.iloc[-1] == "[49.2, 59]"
    few = pd.Series([str(v) for v in range(MAX_FEATURE_GROUPS)] * 3)
    pd.testing.assert_series_equal(bands(few), few)
    gender = pd.Series(["M", "F", "M"])
    pd.testing.assert_series_equal(bands(gender), gender)
