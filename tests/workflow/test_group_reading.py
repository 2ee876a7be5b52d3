"""The group figure's reading (userfair.workflow.group_reading, the report's caption of
results/figures/groups/D.png): read from the run's tables, so two synthetic runs with
opposite results read oppositely; the caption includes it as snakemake --report renders
captions (jinja2, then docutils)."""

from types import SimpleNamespace

import jinja2
import pandas as pd
import pytest
from docutils.core import publish_parts

from userfair.workflow.group_figure import groups_reading
from userfair.workflow.group_reading import bounds_text, fairest, reading, separated

from conftest import REPO

MODELS = ["U-KNN", "I-KNN", "BPR"]
TEST_COLUMNS = ["dataset", "measure", "model_a", "model_b", "difference", "p_holm", "significant"]


def comparisons(measure, significant_differences, by=None):
    """Every pair of MODELS (A before B) for ``measure``; ``significant_differences``:
    {(A, B): B - A} of the pairs Holm separates, the others a small insignificant one."""
    rows = []
    for i, a in enumerate(MODELS):
        for b in MODELS[i + 1 :]:
            d = significant_differences.get((a, b))
            rows.append(("d", measure, a, b, 0.001 if d is None else d,
                         0.5 if d is None else 0.01, d is not None))  # fmt: skip
    frame = pd.DataFrame(rows, columns=TEST_COLUMNS)
    return frame.assign(by=by) if by else frame


def taus_frame(tau, low, high):
    return pd.DataFrame(
        [("d", "activity:0.05", "UserMAD-P", "PUF-P-Cos", tau, low, high, low > 0 or high < 0)],
        columns=["dataset", "by", "measure_a", "measure_b", "tau", "low", "high", "excludes_zero"],
    )


def flat(text):
    return " ".join(text.split())


def test_separated_pairs_follow_the_direction_of_the_measure():
    """difference = B - A: for a fairness measure (lower is fairer) a positive difference
    makes A the fairer; for effectiveness (higher is better) B the better."""
    frame = comparisons("UF", {("U-KNN", "BPR"): 0.2, ("I-KNN", "BPR"): -0.1})
    assert separated(frame, "UF") == [("U-KNN", "BPR"), ("BPR", "I-KNN")]
    frame = comparisons("P", {("U-KNN", "BPR"): 0.2})
    assert separated(frame, "P") == [("BPR", "U-KNN")]
    assert fairest(MODELS, [("U-KNN", "BPR"), ("BPR", "I-KNN")]) == ["U-KNN"]
    assert fairest(MODELS, []) == MODELS


def test_two_runs_with_opposite_results_read_oppositely():
    # run 1: UserMAD-P separates no pair, PUF finds I-KNN fairer than U-KNN (B - A < 0)
    groups_alike = reading(
        "d", MODELS, comparisons("UserMAD-P", {}, by="activity:0.05"),
        comparisons("PUF-P-Cos", {("U-KNN", "I-KNN"): -0.05}), taus_frame(-0.33, -1.0, 0.6),
    )  # fmt: skip
    # run 2: UserMAD-P finds U-KNN fairer than both others, PUF separates none, tau > 0
    groups_differ = reading(
        "d", MODELS,
        comparisons("UserMAD-P", {("U-KNN", "I-KNN"): 0.03, ("U-KNN", "BPR"): 0.04},
                    by="activity:0.05"),
        comparisons("PUF-P-Cos", {}), taus_frame(0.82, 0.33, 1.0),
    )  # fmt: skip
    one, two = flat(groups_alike), flat(groups_differ)
    assert "PUF-P-Cos separates 1 of the 3 pairs of models (I-KNN fairer than U-KNN)" in one
    assert "UserMAD-P separates none of the 3 pairs" in one
    assert "cannot tell whether the two model orderings agree" in one and "-0.33" in one
    # no pair separated by the group measure: no model is called "among the fairest"
    assert "among the fairest" not in one and "look fair while" not in one
    assert ("UserMAD-P shows no model fairer to these groups than another, while PUF-P-Cos "
            "finds U-KNN less fair to individuals than I-KNN") in one  # fmt: skip
    assert "PUF-P-Cos separates none of the 3 pairs" in two
    assert "U-KNN fairer than I-KNN; U-KNN fairer than BPR" in two
    assert "the two model orderings agree (Kendall tau 0.82 [0.33, 1.00])" in two
    assert "look fair while individuals are not" not in two
    assert "No model that looks fairest to these groups" in two
    # the reading is valid reStructuredText
    for text in (groups_alike, groups_differ):
        body = publish_parts(text, writer="html", settings_overrides={"report_level": 2})
        assert "System Message" not in body["html_body"]


def test_two_models_have_one_pair():
    two = ["U-KNN", "BPR"]
    none = comparisons("UserMAD-P", {}, by="activity:0.05")
    none = none[none.model_a.isin(two) & none.model_b.isin(two)]
    puf = comparisons("PUF-P-Cos", {("U-KNN", "BPR"): 0.1})
    text = flat(reading("d", two, none, puf, taus_frame(1.0, 1.0, 1.0)))
    assert "PUF-P-Cos separates the one pair of models (U-KNN fairer than BPR)" in text
    assert "UserMAD-P does not separate the one pair of models" in text
    assert "among the fairest" not in text
    assert "while PUF-P-Cos finds BPR less fair to individuals than U-KNN" in text


def test_among_the_fairest_only_where_the_group_measure_separates_a_pair():
    """Made true: UserMAD-P finds BPR fairer than I-KNN (so BPR and U-KNN are unbeaten) and
    PUF finds BPR less fair than U-KNN: BPR is among the fairest to the groups. Made false:
    the same PUF result, the group measure separating nothing."""
    puf = comparisons("PUF-P-Cos", {("U-KNN", "BPR"): 0.1})
    some = comparisons("UserMAD-P", {("I-KNN", "BPR"): -0.05}, by="activity:0.05")
    text = flat(reading("d", MODELS, some, puf, taus_frame(0.5, -0.5, 1.0)))
    assert (
        "Groups look fair while individuals are not: BPR is among the fairest to these groups "
        "(no model is shown fairer to them) but less fair to individuals than U-KNN"
    ) in text
    none = comparisons("UserMAD-P", {}, by="activity:0.05")
    text = flat(reading("d", MODELS, none, puf, taus_frame(0.5, -0.5, 1.0)))
    assert "among the fairest" not in text and "look fair while" not in text


def test_an_interval_that_excludes_zero_never_prints_a_zero_bound():
    """Made false before: an interval [0.003, 0.9] printed as [0.00, 0.90] beside "agree"."""
    assert bounds_text(0.003, 0.9) == "[0.003, 0.900]"
    assert bounds_text(-0.9, -0.0004) == "[-0.9000, -0.0004]"
    assert bounds_text(-0.003, 0.9) == "[-0.00, 0.90]"  # it holds 0: two decimals say so
    text = flat(reading("d", MODELS, comparisons("UserMAD-P", {}, by="activity:0.05"),
                        comparisons("PUF-P-Cos", {}), taus_frame(0.5, 0.003, 0.9)))  # fmt: skip
    assert "agree (Kendall tau 0.50 [0.003, 0.900])" in text


def test_a_reversed_ordering_and_every_grouping():
    group = pd.concat([
        comparisons("UserMAD-P", {}, by="activity:0.05"),
        comparisons("UserMAD-P", {("U-KNN", "BPR"): -0.02}, by="feature:gender"),
    ])  # fmt: skip
    taus = pd.concat([taus_frame(-0.9, -1.0, -0.2),
                      taus_frame(float("nan"), float("nan"), float("nan")).assign(
                          by="feature:gender")])  # fmt: skip
    text = flat(reading("d", MODELS, group, comparisons("PUF-P-Cos", {}), taus))
    assert "Groups by ``activity:0.05``" in text and "Groups by ``feature:gender``" in text
    assert "are reversed (Kendall tau -0.90 [-1.00, -0.20])" in text
    assert "BPR fairer than U-KNN" in text and "undefined" in text
    assert "look fair while individuals are not" not in text


def test_over_replicates_the_group_rows_come_from_significance_replicates(tmp_path):
    """With replicates, the reading takes both the group rows (``UserMAD-P (by)``) and
    PUF's from significance_replicates.csv and says so."""
    both = pd.concat([
        comparisons("UserMAD-P (activity:0.05)", {}),
        comparisons("P[active] (activity:0.05)", {("U-KNN", "BPR"): 0.1}),
        comparisons("PUF-P-Cos", {("I-KNN", "BPR"): 0.05}),
    ])  # fmt: skip
    both.to_csv(tmp_path / "sig.csv", index=False)
    taus_frame(0.3, -0.5, 1.0).to_csv(tmp_path / "tau.csv", index=False)
    text = flat(groups_reading(
        None, None, None, pd.read_csv(tmp_path / "sig.csv"), pd.read_csv(tmp_path / "tau.csv"),
        dataset="d", models=["UserKNN", "ItemKNN", "BPR"], replicates=3,
    ))  # fmt: skip
    assert "over 3 training replicates and the users" in text
    assert "PUF-P-Cos separates 1 of the 3 pairs of models (I-KNN fairer than BPR)" in text
    assert "UserMAD-P separates none" in text
    assert "while PUF-P-Cos finds BPR less fair to individuals than I-KNN" in text


@pytest.mark.parametrize("dataset", ["ml-100k", "lastfm"])
def test_the_caption_names_its_dataset_and_includes_the_reading(tmp_path, monkeypatch, dataset):
    """As snakemake --report renders a caption: jinja2 with the job (its wildcards and
    output), then docutils in the working directory, where the include resolves."""
    reading_path = f"results/figures/groups/{dataset}.rst"
    (tmp_path / reading_path).parent.mkdir(parents=True)
    (tmp_path / reading_path).write_text(f"**What this run shows on {dataset}**: a reading.\n")
    monkeypatch.chdir(tmp_path)
    job = SimpleNamespace(wildcards=SimpleNamespace(dataset=dataset),
                          output=SimpleNamespace(reading=reading_path))  # fmt: skip
    text = (REPO / "workflow" / "report" / "fig_groups.rst").read_text()
    rendered = jinja2.Environment().from_string(text).render(snakemake=job)
    html = publish_parts(rendered, writer="html")["body"]
    assert f"Group against individual unfairness on {dataset}" in html
    assert f"What this run shows on {dataset}" in html
