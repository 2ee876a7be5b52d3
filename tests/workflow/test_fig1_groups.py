"""The group measures in Table 2 with intervals and in Fig. 1, and Fig. 1's intervals over
replicates and users (issues 30 and 32), checked by content."""

import re
import shutil
import subprocess
import sys
from types import SimpleNamespace

import jinja2
import numpy as np
import pandas as pd
import pytest

from userfair.measures import FAIR_GROUP, NAMES
from userfair.workflow import figure_style, plots, tables
from userfair.workflow.steps.groups import INDIVIDUAL

from conftest import REPO, make_workdir, snakemake

MODELS = ["BPR", "UserKNN", "NCL"]
BYS = ["activity:0.05", "feature:gender"]


def summary_frame(rng):
    rows = []
    for model in MODELS:
        for measure in NAMES:
            value = float(rng.uniform(0.1, 0.9))
            rows.append(("d", model, measure, value, value - 0.05, value + 0.05))
    return pd.DataFrame(rows, columns=["dataset", "model", "measure", "value", "low", "high"])


def groups_frame(rng):
    rows = []
    for by in BYS:
        for model in MODELS:
            for measure in (*FAIR_GROUP, "mean-P:F"):  # a group mean is not a Table 2 row
                value = float(rng.uniform(0, 0.2))
                rows.append(("d", by, model, measure, value, value / 2, value * 2))
    columns = ["dataset", "by", "model", "measure", "value", "low", "high"]
    return pd.DataFrame(rows, columns=columns)


def test_table2_ends_with_the_group_measures_per_grouping():
    rng = np.random.default_rng(1)
    summary, groups = summary_frame(rng), groups_frame(rng)
    plain, _, _ = tables.table_scores_ci(summary, ["d"], MODELS)
    csv, tex, bold = tables.table_scores_ci(summary, ["d"], MODELS, groups)
    labels = [f"{m} ({by})" for by in BYS for m in FAIR_GROUP]
    assert list(csv.index) == list(plain.index) + labels  # individual rows unchanged, first
    pd.testing.assert_frame_equal(csv.iloc[: len(plain)], plain)
    assert set(csv.loc[labels, "Group"]) == {tables.GROUP_FAIRNESS}
    assert set(csv.loc[labels, "Better"]) == {"lower"}
    for by in BYS:
        for measure in FAIR_GROUP:
            label = f"{measure} ({by})"
            for model in MODELS:
                row = groups[(groups["by"] == by) & (groups["measure"] == measure)
                             & (groups["model"] == model)].iloc[0]  # fmt: skip
                name = tables.model_label(model)
                assert csv.loc[label, name] == row["value"]
                assert (csv.loc[label, f"{name} low"], csv.loc[label, f"{name} high"]) == (
                    row["low"], row["high"])  # fmt: skip
                assert tex.loc[label, name].startswith(f"{row['value']:.4f} [")
            # lower is fairer: the smallest UserMAD is bold
            values = [csv.loc[label, tables.model_label(m)] for m in MODELS]
            best = tables.model_label(MODELS[int(np.argmin(values))])
            assert bold.loc[label, best] and bold.loc[label].sum() == 1


def agreement_frames(rng):
    rows = [("d", a, b, 1.0 if a == b else float(rng.uniform(-1, 1))) for a in NAMES for b in NAMES]
    agreement = pd.DataFrame(rows, columns=["dataset", "measure_a", "measure_b", "tau"])
    intervals = agreement.assign(low=agreement["tau"] - 0.4, high=agreement["tau"] + 0.3)
    intervals["excludes_zero"] = (intervals["low"] > 0) | (intervals["high"] < 0)
    return agreement, intervals


def group_tau(rng):
    rows = [("d", by, a, b, float(rng.uniform(-1, 1))) for by in BYS for a in FAIR_GROUP
            for b in INDIVIDUAL]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["dataset", "by", "measure_a", "measure_b", "tau"])
    frame = frame.assign(low=frame["tau"] - 0.5, high=frame["tau"] + 0.5)
    return frame.assign(excludes_zero=(frame["low"] > 0) | (frame["high"] < 0))


def heatmaps(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.texts]


def test_fig1_without_groups_is_one_panel_per_dataset():
    agreement, intervals = agreement_frames(np.random.default_rng(2))
    for groups in (None, pd.DataFrame()):  # groups off, or a table written empty
        fig = plots.agreement_axes(agreement, plots.Style(dpi=60), intervals=intervals,
                                   groups=groups)  # fmt: skip
        (heat,) = heatmaps(fig)
        assert heat.get_title() == "d"
        assert "*: the interval excludes 0" in fig.get_supxlabel()
        plots.plt.close(fig)


def test_fig1_group_panel_reads_the_group_taus():
    rng = np.random.default_rng(3)
    agreement, intervals = agreement_frames(rng)
    taus = group_tau(rng)
    fig = plots.agreement_axes(agreement, plots.Style(dpi=60), intervals=intervals, groups=taus)
    main, panel = heatmaps(fig)
    rows = [t.get_text() for t in panel.get_yticklabels()]
    assert rows == [plots.group_label(m, by) for by in BYS for m in FAIR_GROUP]
    assert [t.get_text() for t in panel.get_xticklabels()] == list(INDIVIDUAL)
    cells = [t.get_text() for t in panel.texts]
    assert len(cells) == len(taus)
    for _, row in taus.iterrows():
        star = "*" if row["excludes_zero"] else ""
        assert f"{plots.short(row['tau'])}{star}" in cells
    # the main panel is the one without groups: one triangle
    assert len(main.texts) == len(NAMES) * (len(NAMES) - 1) // 2
    smallest, overlaps = figure_style.legibility(fig)
    assert smallest >= plots.ANNOTATION_POINTS
    assert overlaps == []
    plots.plt.close(fig)


def test_fig1_group_panel_without_intervals_shows_tau():
    rng = np.random.default_rng(4)
    agreement, _ = agreement_frames(rng)
    taus = group_tau(rng)[["dataset", "by", "measure_a", "measure_b", "tau"]]
    fig = plots.agreement_axes(agreement, plots.Style(dpi=60), groups=taus)
    _, panel = heatmaps(fig)
    assert sorted(t.get_text() for t in panel.texts) == sorted(map(plots.short, taus["tau"]))
    plots.plt.close(fig)


def test_fig1_over_replicates_colours_and_titles_by_the_replicate_means():
    rng = np.random.default_rng(5)
    agreement, intervals = agreement_frames(rng)
    means = intervals.assign(tau=-intervals["tau"])  # the replicate means' tau differs
    fig = plots.agreement_axes(agreement, plots.Style(dpi=60), intervals=means,
                               source="replicates and users")  # fmt: skip
    (heat,) = heatmaps(fig)
    assert "interval over replicates and users excludes 0" in fig.get_supxlabel()
    a, b = NAMES[1], NAMES[0]  # the triangle's first cell: row NAMES[1], column NAMES[0]
    cell = means[(means["measure_a"] == a) & (means["measure_b"] == b)].iloc[0]
    texts = [t.get_text() for t in heat.texts]
    assert texts[0].startswith(plots.short(cell["tau"]))
    colours = heat.collections[0].get_array().reshape(len(NAMES) - 1, len(NAMES) - 1)
    assert np.isclose(colours[0, 0], cell["tau"])
    plots.plt.close(fig)


@pytest.fixture(scope="module")
def dry_workdir(tmp_path_factory):
    """A run directory of the .test/ config with its tiny data, nothing built: enough for
    the rule graph of a dry run."""
    workdir = make_workdir(tmp_path_factory.mktemp("fig1-dag"))
    shutil.copytree(REPO / ".test" / "config", workdir / ".test" / "config")
    subprocess.run(
        [sys.executable, "-m", "userfair.workflow.testdata", ".test/resources/tiny-ml-100k"],
        cwd=workdir,
        check=True,
        capture_output=True,
    )
    return workdir


def rule_edges(workdir, overlay: str | None = None) -> set[tuple[str, str]]:
    """(producer, consumer) rule pairs of ``snakemake --rulegraph`` for Table 2 with
    intervals and Fig. 1, under the .test config and an optional YAML overlay."""
    args = ["--directory", ".test", "--rulegraph", "dot"]
    if overlay is not None:
        (workdir / ".test" / "overlay.yaml").write_text(overlay)
        args += ["--configfile", ".test/config/config.yaml", ".test/overlay.yaml"]
    dot = snakemake(workdir, *args, "--", "results/figures/agreement.pdf",
                    "results/tables/scores_ci.csv").stdout  # fmt: skip
    names = dict(re.findall(r'(\d+)\[label = "(\w+)"', dot))
    return {(names[a], names[b]) for a, b in re.findall(r"(\d+) -> (\d+)", dot)}


@pytest.mark.slow
def test_the_rules_read_the_group_and_replicate_tables_only_when_on(dry_workdir):
    """Default (.test: bootstrap on, groups null, one replicate): Table 2 with intervals
    reads groups.csv and Fig. 1 the users' tau intervals and the group tau. Groups off:
    neither reads table_groups (Fig. 1 as before). Three replicates: Fig. 1 reads the tau
    intervals over replicates and users (table_replicates) instead of agreement_ci.csv."""
    edges = rule_edges(dry_workdir)
    assert {("table_groups", "table_uncertainty"), ("table_groups", "fig_agreement"),
            ("table_uncertainty", "fig_agreement")} <= edges  # fmt: skip
    assert "table_replicates" not in {a for a, _ in edges}
    off = rule_edges(dry_workdir, "measures:\n  groups: []\n")
    assert ("table_uncertainty", "fig_agreement") in off
    assert not {e for e in off if e[0] == "table_groups"}
    replicated = rule_edges(dry_workdir, "training:\n  replicates: 3\n")
    assert ("table_replicates", "fig_agreement") in replicated
    assert ("table_uncertainty", "fig_agreement") not in replicated
    assert ("table_groups", "fig_agreement") in replicated


@pytest.mark.parametrize(
    "replicates, resamples, says, not_says",
    [
        (3, 30, "3 training replicates and the evaluated users", "users only"),
        (1, 30, "evaluated users only (30 bootstrap resamples", "training replicates and"),
        (1, 0, "second panel per dataset", "evaluated users only"),
    ],
)
def test_fig1_caption_names_the_sources_of_its_intervals(replicates, resamples, says, not_says):
    """The caption as snakemake --report renders it (jinja2, the rule's params)."""

    class Snakemake:
        params = SimpleNamespace(replicates=replicates, resamples=resamples)

    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = (REPO / "workflow" / "report" / "fig_agreement.rst").read_text()
    caption = " ".join(env.from_string(text).render(snakemake=Snakemake).split())
    assert says in caption and not_says not in caption


def test_the_groups_figure_places_every_model_whatever_its_label():
    """groups.csv names models (UserKNN), intervals.csv labels them (U-KNN, as every table
    of the uncertainty stage): the figure (rule fig_groups's declared drawing) joins them
    and places all seven."""
    from userfair.workflow.group_figure import groups_of_run

    seven = ["UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL"]
    rows = [("d", "activity:0.05", m, "UserMAD-P", 0.1 + i / 100, 0.05, 0.2)
            for i, m in enumerate(seven)]  # fmt: skip
    groups = pd.DataFrame(rows, columns=["dataset", "by", "model", "measure", "value", "low",
                                         "high"])  # fmt: skip
    rows = [("d", tables.models.label(m), "PUF-P-Cos", 0.05 + i / 100, 0.04, 0.09)
            for i, m in enumerate(seven)]  # fmt: skip
    intervals = pd.DataFrame(rows, columns=["dataset", "model", "measure", "value", "low", "high"])
    unread = pd.DataFrame()  # the reading's tables
    drawn = [groups_of_run(groups, intervals, unread, unread, unread, figure_style.Style(),
                           dataset="d", models=seven)]  # fmt: skip
    (ax,) = [ax for ax in drawn[0].axes if ax.get_visible()]
    labels = [tables.models.label(m) for m in seven]
    assert [line.get_label() for line in ax.lines] == labels  # a point per model
    (legend,) = drawn[0].legends  # named once, below the panels: no label beside a point
    assert [t.get_text() for t in legend.get_texts()] == labels
    assert not ax.texts
