"""Figures at publication size, checked by content with 2, 7 and 12 models: each drawn for a
column (3.5 in) or a page (7.2 in) and never grown, no text under 6 pt, no two texts
overlapping (userfair.workflow.figure_style.text_overlaps), and one colour and marker per
model in every figure, told apart with normal vision, protanopia and deuteranopia."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from userfair.measures import FAIR, NAMES
from userfair.workflow import analysis_figures, figure_style, gamma_figures, group_figure, plots
from userfair.workflow import replicate_figure as replicates
from userfair.workflow.tables import model_label

TWELVE = ["UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL", "LightGCN", "EASE",
          "SLIMElastic", "RecVAE", "DiffRec"]  # fmt: skip
STYLE = figure_style.Style(dpi=72)
WIDTHS = (figure_style.COLUMN_WIDTH_IN, figure_style.PAGE_WIDTH_IN)


def assert_publishable(fig):
    width = fig.get_size_inches()[0]
    assert any(np.isclose(width, w) for w in WIDTHS), width
    smallest, overlaps = figure_style.legibility(fig)
    assert smallest >= figure_style.MIN_FONT_PT
    assert overlaps == [], overlaps[:5]
    plots.plt.close(fig)


@pytest.fixture(params=[2, 7, 12], ids=lambda n: f"{n}-models")
def models(request):
    return TWELVE[: request.param]


@pytest.mark.parametrize("groupings", [1, 4])
def test_the_group_figure(models, groupings):
    rng = np.random.default_rng(len(models))
    labels = [model_label(m) for m in models]
    x = pd.DataFrame({"value": rng.uniform(0.05, 0.07, len(labels))}, index=labels)
    x = x.assign(low=x["value"] - 0.005, high=x["value"] + 0.005)
    rows = [(m, by, v, max(v - 0.02, 0), v + 0.02)
            for by in ("activity:0.05", "feature:gender", "feature:age", "feature:occupation")[
                :groupings]
            for m, v in zip(labels, rng.uniform(0, 0.05, len(labels)))]  # fmt: skip
    y = pd.DataFrame(rows, columns=["model", "by", "value", "low", "high"])
    fig = group_figure.groups_axes(x, y, labels, STYLE, dataset="ml-100k",
                                   measure="UserMAD-P", against="PUF-P-Cos")  # fmt: skip
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == groupings and all(len(ax.lines) == len(models) for ax in panels)
    looks = figure_style.model_styles(labels)
    for line in panels[0].lines:  # each model in its colour and marker
        assert (line.get_color(), line.get_marker()) == looks[line.get_label()]
    assert_publishable(fig)


def test_the_intervals_figure(models, tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    rows = [("d", m, f, v, v - 0.01, v + 0.01)
            for f in FAIR for m, v in zip(models, rng.uniform(0.1, 0.5, len(models)))]  # fmt: skip
    summary = pd.DataFrame(rows, columns=["dataset", "model", "measure", "value", "low", "high"])
    drawn = []
    monkeypatch.setattr(analysis_figures, "save", lambda fig, *a: drawn.append(fig))
    analysis_figures.intervals_figure(summary, FAIR, models, STYLE, "x.pdf", "x.png")
    assert_publishable(drawn[0])


def test_the_replicates_figure(models, tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    rows = [("d", m, r, f, rng.uniform())
            for m in models for r in range(3) for f in replicates.MEASURES]  # fmt: skip
    values = pd.DataFrame(rows, columns=["dataset", "model", "replicate", "measure", "value"])
    scores = values.groupby(["dataset", "model", "measure"], as_index=False)["value"].mean()
    scores = scores.assign(low=scores["value"] - 0.1, high=scores["value"] + 0.1)
    drawn = []
    monkeypatch.setattr(replicates, "save", lambda fig, *a: drawn.append(fig))
    replicates.replicates_figure(values, scores, models, STYLE, "x.pdf", "x.png")
    assert_publishable(drawn[0])


def test_the_who_figure(models):
    rows = []
    for model in models:
        for group in ("Q1", "Q2", "Q3", "Q4"):
            for measure in ("PUF-P-Cos", "UF"):
                rows.append(
                    {"dataset": "d", "model": model, "by": "activity", "group": group,
                     "users": 10, "user_share": 0.25, "low_value": 1.0, "high_value": 2.0,
                     "measure": measure, "total": 1.0, "share": 0.25, "low": 0.2, "high": 0.3}
                )  # fmt: skip
    fig = analysis_figures.who_axes(pd.DataFrame(rows), models, STYLE)
    assert_publishable(fig)


@pytest.mark.parametrize("datasets", [1, 2, 4])
def test_fig1(datasets):
    rng = np.random.default_rng(datasets)
    rows = [(f"d{k}", a, b, 1.0 if a == b else float(rng.uniform(-1, 1)))
            for k in range(datasets) for a in NAMES for b in NAMES]  # fmt: skip
    agreement = pd.DataFrame(rows, columns=["dataset", "measure_a", "measure_b", "tau"])
    # intervals that exclude 0 by a hair: no cell may show a bound of 0 beside its star
    intervals = agreement.assign(low=agreement["tau"] / 2, high=agreement["tau"] * 1.01)
    intervals["excludes_zero"] = True
    fig = plots.agreement_axes(agreement, STYLE, intervals=intervals)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert not any("[" in t or t.startswith(("0.0", "-0.0", "[0")) for t in texts), texts[:5]
    assert_publishable(fig)


def test_fig2():
    rows = [("d", s, m, s * (1 - s)) for s in np.linspace(0, 1, 11)
            for m in sum(plots.RELEVANCE_PANELS.values(), [])]  # fmt: skip
    fig = plots.relevance_axes(pd.DataFrame(rows, columns=["dataset", "share", "measure", "value"]),
                               STYLE)  # fmt: skip
    assert_publishable(fig)


@pytest.mark.parametrize("n", [2, 7, 12])
def test_models_differ_in_colour_and_marker_for_every_kind_of_vision(n):
    looks = figure_style.model_styles(TWELVE[:n])
    assert len(set(looks.values())) == n and len({m for _, m in looks.values()}) == n
    assert figure_style.model_styles(TWELVE[:n]) == looks  # the same in every figure
    colours = [c for c, _ in looks.values()]
    for vision in (None, "protan", "deutan"):
        seen = [figure_style.as_seen(c, vision) if vision else c for c in colours]
        distances = [np.linalg.norm(figure_style.lab(a) - figure_style.lab(b))
                     for a, b in itertools.combinations(seen, 2)]  # fmt: skip
        assert min(distances) >= 15, (vision, min(distances))


def test_a_figure_is_never_grown(tmp_path):
    """save writes the size the figure was drawn at (make_legible grew agreement.png to
    28 x 13 in and the group figure to 27 x 22 in)."""
    fig, ax = plots.plt.subplots(figsize=(3.5, 2))
    ax.set_xticks(range(30), [f"label {i}" for i in range(30)])  # they overlap
    figure_style.save(fig, tmp_path / "x.pdf", tmp_path / "x.png", STYLE)
    from PIL import Image

    with Image.open(tmp_path / "x.png") as image:
        assert image.size[0] <= 3.5 * STYLE.dpi * 1.6  # bbox tight may add the labels' overhang


def _similarity_frame(datasets: int, plugins: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(datasets)
    measures = plots.SIMILARITY_MEASURES + [f"Plugin{i}" for i in range(plugins)]
    rows = [(f"d{k}", f"weibull{shape}", skew, m, float(rng.uniform(0, 0.6)))
            for k in range(datasets) for shape, skew in enumerate(np.linspace(-1, 3, 8))
            for m in measures]  # fmt: skip
    rows += [(f"d{k}", "observed", 1.7, m, 0.3) for k in range(datasets) for m in measures]
    return pd.DataFrame(rows, columns=["dataset", "distribution", "skewness", "measure", "value"])


@pytest.mark.parametrize("datasets, plugins", [(1, 0), (2, 3), (3, 5)])
def test_fig3(datasets, plugins):
    fig = plots.similarity_axes(_similarity_frame(datasets, plugins), STYLE)
    width = fig.get_size_inches()[0]
    assert width == (figure_style.COLUMN_WIDTH_IN if datasets == 1 else figure_style.PAGE_WIDTH_IN)
    looks = figure_style.model_styles(plots.similarity_measures(_similarity_frame(1, plugins)))
    for line in fig.axes[0].lines[: len(looks)]:  # each measure in its colour and marker
        assert (line.get_color(), line.get_marker()) == looks[line.get_label()]
    assert_publishable(fig)


@pytest.mark.parametrize("datasets, plugins", [(1, 0), (2, 2), (4, 0)])
def test_fig4(datasets, plugins):
    measures = ["PUF", "UF"] + [f"Plugin{i}" for i in range(plugins)]
    rows = [(f"d{k}", share, a, score, m, share * (0.2 if a == "MostFair" else 0.8))
            for k in range(datasets) for share in np.linspace(0, 1, 11)
            for a in ("MostFair", "MostUnfair") for score in ("P", "NDCG")
            for m in measures]  # fmt: skip
    frame = pd.DataFrame(
        rows, columns=["dataset", "share", "assignment", "score", "measure", "value"]
    )
    fig = plots.extreme_axes(frame, STYLE)
    assert np.isclose(fig.get_size_inches()[0], figure_style.COLUMN_WIDTH_IN)
    looks = figure_style.model_styles(measures)
    for line in fig.axes[0].lines:  # a measure's colour and marker; its assignment's fill
        measure, assignment = line.get_label().split()
        assert (line.get_color(), line.get_marker()) == looks[measure]
        assert line.get_fillstyle() == plots.ASSIGNMENTS[assignment][1]
    assert_publishable(fig)


@pytest.mark.parametrize("datasets", [1, 2])
def test_the_gamma_figures(models, datasets):
    rng = np.random.default_rng(len(models))
    gammas = [0.0, 0.25, 0.5, 0.75, 1.0]
    rows = [(f"d{k}", m, g, measure, float(rng.uniform(0, 1)))
            for k in range(datasets) for m in models for g in gammas
            for measure in gamma_figures.GAMMA_MEASURES]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["dataset", "model", "gamma", "measure", "value"])
    fig = gamma_figures.gamma_models_axes(frame, STYLE)
    looks = figure_style.model_styles([model_label(m) for m in models])
    lines = fig.axes[0].lines
    assert len(lines) == len(models)  # one line a model, in its colour and marker
    for line in lines:
        assert (line.get_color(), line.get_marker()) == looks[line.get_label()]
    assert np.isclose(fig.get_size_inches()[0], figure_style.PAGE_WIDTH_IN)
    assert_publishable(fig)
    rows = [(f"d{k}", s, g, measure, float(rng.uniform(0, 1)))
            for k in range(datasets) for s in np.linspace(0, 1, 11) for g in gammas
            for measure in gamma_figures.GAMMA_MEASURES]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["dataset", "share", "gamma", "measure", "value"])
    fig = gamma_figures.gamma_relevance_axes(frame, STYLE)
    assert len(fig.axes[0].lines) == len(gammas)
    assert np.isclose(fig.get_size_inches()[0], figure_style.PAGE_WIDTH_IN)
    assert_publishable(fig)
