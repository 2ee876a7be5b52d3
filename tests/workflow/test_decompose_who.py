"""userfair.workflow.who: groups of users with their share of each measure and bootstrap intervals,
the worst-case table, the declared user features of a .user file, and the who figure's
content (axes, series, labels)."""

import math
import zipfile

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import uncertainty
from userfair.files.inputs import load_inputs
from userfair.workflow import analysis_figures, figure_style, who

from measures_data import random_split

MODELS = ["BPR", "ItemKNN", "UserKNN"]


@pytest.fixture(scope="module")
def frames():
    """Three 'models' (three sets of lists) on the same split and users, with features."""
    train, test, _, _ = random_split(0)
    out = {}
    for i, model in enumerate(MODELS):
        topk = random_split(i)[2]
        inputs = load_inputs(train, test, topk)
        m = len(inputs.users)
        features = pd.DataFrame(
            {
                "user_id": inputs.users.astype(str),
                "gender": np.where(np.arange(m) % 3 == 0, "F", "M"),
                "age": (18 + (np.arange(m) * 7) % 40).astype(str),
            }
        )
        frame, worst = who.users_job(
            inputs, route="stream", k=10, epsilon=0.05, gamma=1.0, envy_utility="precision",
            block_size=8, features=features, worst=4,
        )  # fmt: skip
        out[model] = (frame, worst)
    return out


def test_quantile_groups_are_equal_sized_and_ordered():
    values = np.array([5, 1, 1, 1, 9, 3, 2, 8, 7, 1])
    labels, order = who.quantile_labels(values, 5)
    assert order == ["Q1", "Q2", "Q3", "Q4", "Q5"]
    assert pd.Series(labels).value_counts().tolist() == [2] * 5
    # every user of a lower group has at most the activity of every user of a higher one
    for a, b in zip(order, order[1:]):
        assert values[labels == a].max() <= values[labels == b].min()
    assert list(labels[[1, 2]]) == ["Q1", "Q1"]  # ties split in the given (user) order
    assert who.quantile_labels(values[:3], 5)[1] == ["Q1", "Q2", "Q3"]


def test_feature_groups_numeric_quantiles_or_values():
    labels, order, numbers = who.group_labels(pd.Series(["M", "F", "", "F"]), 5)
    assert order == ["F", "M", "(missing)"] and numbers is None
    assert list(labels) == ["M", "F", "(missing)", "F"]
    ages = pd.Series([str(a) for a in range(20, 40)])
    labels, order, numbers = who.group_labels(ages, 4)
    assert order == ["Q1", "Q2", "Q3", "Q4"] and numbers[0] == 20.0
    few = who.group_labels(pd.Series(["3", "10", "3"]), 4)
    assert few[1] == ["3", "10"]  # numerically sorted values, not quantiles


def test_group_shares_sum_to_one_and_intervals_contain_them(frames, caplog):
    table = who.group_table(
        {("d", m): frames[m][0] for m in MODELS}, groups=5, features=["gender", "age", "nope"],
        resamples=300, seed=1,
    )  # fmt: skip
    assert list(table.columns) == who.GROUP_COLUMNS
    # a configured feature the data lacks is reported in a row of its own, not dropped
    missing = table[table["by"] == "nope"]
    assert sorted(missing["model"]) == sorted(MODELS)
    assert (missing["group"] == who.MISSING_GROUP).all() and (missing["users"] == 0).all()
    assert missing["share"].isna().all()
    assert "config key who.features: d has no user feature 'nope'" in caplog.text
    table = table[table["by"] != "nope"]
    assert set(table["by"]) == {"activity", "gender", "age"}
    sums = table.groupby(["model", "by", "measure"])["share"].sum()
    finite = sums[np.isfinite(sums)]
    assert len(finite) == len(sums) and np.allclose(finite, 1.0, atol=1e-12)
    # the share is the group's column sum over the measure, recomputed here
    frame = frames["BPR"][0]
    labels, _ = who.quantile_labels(frame.train_items.to_numpy(), 5)
    row = table[(table.model == "BPR") & (table.by == "activity") & (table.group == "Q1")]
    row = row.set_index("measure")
    for measure in ("PUF-P-Cos", "MME", "PUF-NDCG-Jacc:disadvantaged"):
        column = frame[measure].to_numpy()
        assert math.isclose(row.share[measure], column[labels == "Q1"].sum() / column.sum())
        assert math.isclose(row.total[measure], column.sum())
    assert (row.users == (labels == "Q1").sum()).all() and (row.user_share == 0.2).all()
    # sane intervals: low <= share <= high (shares that are nonnegative per user)
    positive = table[table.measure.str.startswith(("PUF", "ME", "MME", "PEU"))]
    assert (positive.low <= positive.share + 1e-12).all()
    assert (positive.share <= positive.high + 1e-12).all()
    assert (positive.high > positive.low).any()
    assert ((positive.low >= 0) & (positive.high <= 1)).all()


def test_intervals_use_the_uncertainty_resamples_for_every_model(frames):
    frame = frames["BPR"][0]
    labels, order = who.quantile_labels(frame.train_items.to_numpy(), 2)
    weights = uncertainty.resample_weights(len(frame), 200, 5)
    got = who.group_shares(frame, labels, order, weights, ["PUF-P-Cos"], level=0.9)
    share = frame["PUF-P-Cos"].to_numpy()
    resampled = (weights * share)[:, labels == "Q1"].sum(1) / (weights * share).sum(1)
    low, high = np.quantile(resampled, [0.05, 0.95])
    assert math.isclose(got.low.iloc[0], low) and math.isclose(got.high.iloc[0], high)
    # a group that carries everything: share 1 and interval [1, 1] whatever the resample
    only = frame.assign(one=np.where(labels == "Q2", share, 0.0))
    got = who.group_shares(only, labels, order, weights, ["one"])
    assert np.allclose(got.set_index("group").loc["Q2", ["share", "low", "high"]], 1.0)
    with pytest.raises(ValueError, match="other evaluated users"):
        who.group_table({("d", "A"): frame, ("d", "B"): frame.iloc[::-1]}, resamples=2)


def test_worst_table_reads_as_sentences(frames):
    table = who.worst_table({("d", m): frames[m][1] for m in MODELS})
    assert len(table) == 12 and list(table.columns[:4]) == ["dataset", "model", "rank", "measure"]
    first = table[table.model == "BPR"].iloc[0]
    frame = frames["BPR"][0]
    worst_user = frame.user_id[frame["PUF-P-Cos:disadvantaged"].idxmax()]
    assert first.user_id == worst_user and first["rank"] == 1
    assert first.text.startswith(f"user {worst_user}: P@10 ")
    assert (table.disadvantaged.diff()[table["rank"] > 1] <= 0).all()


def test_user_features_from_a_folder_or_a_zip(tmp_path, caplog):
    lines = "user_id:token\tage:token\tgender:token\n1\t24\tM\n2\t53\tF\n"
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "d.user").write_text(lines)
    (tmp_path / "raw" / "d.inter").write_text("user_id:token\titem_id:token\n")
    got = who.read_user_features("d", str(tmp_path / "raw"), ["gender", "height"])
    assert list(got.columns) == ["user_id", "gender"] and list(got.gender) == ["M", "F"]
    assert "no user feature 'height'" in caplog.text
    with zipfile.ZipFile(tmp_path / "d.zip", "w") as archive:
        archive.writestr("d/d.user", lines)
    got = who.read_user_features("d", str(tmp_path / "d.zip"), ["age"])
    assert list(got.age) == ["24", "53"]
    assert who.read_user_features("d", str(tmp_path / "raw"), []) is None
    (tmp_path / "raw" / "d.user").unlink()
    assert who.read_user_features("d", str(tmp_path / "raw"), ["age"]) is None
    (tmp_path / "t.csv").write_text("user,item\n")
    assert who.read_user_features("d", str(tmp_path / "t.csv"), ["age"]) is None


def test_figure_content(frames, tmp_path):
    table = who.group_table({("d", m): frames[m][0] for m in MODELS}, groups=4, resamples=50)
    fig = analysis_figures.who_axes(table, MODELS, figure_style.Style())
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == list(who.FIGURE_MEASURES)
    for ax in visible:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["Q1", "Q2", "Q3", "Q4"]
        assert len(ax.containers) == len(MODELS)  # one errorbar series per model
        line = ax.lines[-1]  # the users' share: 30 users in groups of 8, 7, 8, 7
        assert np.allclose(line.get_ydata(), 100 * np.array([8, 7, 8, 7]) / 30)
    ax = visible[0]
    expected = (
        100
        * table[
            (table.model == "ItemKNN")
            & (table.by == "activity")
            & (table.measure == ax.get_title())
        ].share.to_numpy()
    )
    assert np.allclose(ax.containers[1].lines[0].get_ydata(), expected)
    assert visible[0].get_ylabel() == "% of the measure"
    assert "least active" in visible[-1].get_xlabel()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-1] == "share of the users" and len(legend) == len(MODELS) + 1
    analysis_figures.who_figure(
        table, MODELS, figure_style.Style(), tmp_path / "w.pdf", tmp_path / "w.png"
    )
    assert (tmp_path / "w.png").stat().st_size > 10_000
    with pytest.raises(ValueError, match="no rows grouped by 'gender'"):
        analysis_figures.who_axes(table, MODELS, figure_style.Style(), by="gender")


@pytest.mark.parametrize("m, resamples, rows", [(7, 10, 3), (30, 9, 4), (101, 20, 7), (5, 3, 100)])
def test_resample_chunks_are_the_uncertainty_weights(m, resamples, rows):
    chunks = list(who.resample_chunks(m, resamples, 11, rows)())
    assert all(len(chunk) <= rows for chunk in chunks)
    expected = uncertainty.resample_weights(m, resamples, 11)
    assert np.array_equal(np.concatenate(chunks), expected)


def test_chunked_and_whole_weights_give_the_same_intervals(frames):
    frame = frames["ItemKNN"][0]
    labels, order = who.quantile_labels(frame.train_items.to_numpy(), 3)
    whole = uncertainty.resample_weights(len(frame), 250, 2)
    a = who.group_shares(frame, labels, order, whole, level=0.9)
    b = who.group_shares(
        frame, labels, order, who.resample_chunks(len(frame), 250, 2, 40), level=0.9
    )
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
