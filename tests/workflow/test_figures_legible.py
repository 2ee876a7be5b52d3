"""Figures stay legible under every documented ``plots:`` setting and with 7+ models
(issue 33), checked by content: no two texts overlap (tick labels, cell annotations,
titles), cell texts of at least 5 pt, models' colours pairwise distinct in CIELAB, and a
line panel's y range not narrower than 10 % of its values."""

import itertools

import numpy as np
import pandas as pd
import pytest

from userfair.measures import NAMES
from userfair.workflow import analysis_figures, figure_style, plots

SEVEN = ["UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL"]


def relevance_frame(uf=(0.601, 0.603)):
    rows = []
    for share in np.linspace(0, 1, 11):
        for measure in sum(plots.RELEVANCE_PANELS.values(), []):
            value = share * (1 - share)
            if measure == "UF":  # Fig. 2's UF: 0.601 to 0.603, a 0.3 % change
                value = uf[0] + (uf[1] - uf[0]) * share
            rows.append(("ml-100k", share, measure, value))
    return pd.DataFrame(rows, columns=["dataset", "share", "measure", "value"])


@pytest.mark.parametrize("font_scale", [1.0, 1.4])
def test_fig2_tick_labels_never_run_together(font_scale):
    """At a page's width, never grown: two rows of three panels leave room for the ticks
    ("050100" ran together in one row of six at font_scale 1.4)."""
    style = figure_style.Style(font_scale=font_scale, dpi=60)
    fig = plots.relevance_axes(relevance_frame(), style)
    assert fig.get_size_inches()[0] == figure_style.PAGE_WIDTH_IN
    smallest, overlaps = figure_style.legibility(fig)
    assert overlaps == []
    assert smallest >= figure_style.MIN_FONT_PT
    plots.plt.close(fig)


def test_the_overlap_check_sees_labels_running_together():
    """The check itself: six narrow panels with ticks 0, 50, 100 at 12 pt run together."""
    fig, axes = plots.plt.subplots(1, 6, figsize=(4, 1.2), layout="constrained")
    for ax in axes:
        ax.plot([0, 100], [0, 1])
        ax.set_xticks([0, 50, 100])
        ax.tick_params(labelsize=12)
    assert figure_style.text_overlaps(fig)
    plots.plt.close(fig)


def test_a_small_change_does_not_fill_its_panel():
    fig = plots.relevance_axes(relevance_frame(), figure_style.Style(dpi=60))
    (uf,) = [ax for ax in fig.axes if ax.get_title() == "UF"]
    bottom, top = uf.get_ylim()
    assert top - bottom >= figure_style.MIN_SPAN * 0.603 - 1e-12  # not 0.601..0.603
    assert bottom <= 0.601 and top >= 0.603
    # a panel that varies a lot keeps matplotlib's own range
    (eff,) = [ax for ax in fig.axes if ax.get_title() == "Eff"]
    assert eff.get_ylim()[1] - eff.get_ylim()[0] < 0.4
    plots.plt.close(fig)


def agreement_frames():
    rng = np.random.default_rng(0)
    rows = [("d", a, b, 1.0 if a == b else float(rng.uniform(-1, 1))) for a in NAMES for b in NAMES]
    agreement = pd.DataFrame(rows, columns=["dataset", "measure_a", "measure_b", "tau"])
    intervals = agreement.assign(low=agreement["tau"] - 0.45, high=agreement["tau"] + 0.35)
    intervals["excludes_zero"] = (intervals["low"] > 0) | (intervals["high"] < 0)
    return agreement, intervals


@pytest.mark.slow
@pytest.mark.parametrize("font_scale", [1.0, 1.4])
def test_fig1_cells_are_readable(font_scale):
    """One dataset: every cell of the lower triangle shows its tau (and star) at 6 pt or
    more, on a page's width, no two texts overlapping; the intervals are not in the cells
    (agreement_ci.csv holds them), so no cell shows '[0.0, 0.9]' beside the star."""
    agreement, intervals = agreement_frames()
    style = figure_style.Style(font_scale=font_scale, dpi=200)
    fig = plots.agreement_axes(agreement, style, intervals=intervals)
    assert fig.get_size_inches()[0] == figure_style.PAGE_WIDTH_IN
    (heat,) = [ax for ax in fig.axes if ax.texts]
    cells = [t.get_text() for t in heat.texts]
    assert len(cells) == len(NAMES) * (len(NAMES) - 1) // 2  # 153: one triangle
    assert not any("[" in c for c in cells)
    smallest, overlaps = figure_style.legibility(fig)
    assert smallest >= figure_style.MIN_FONT_PT
    assert overlaps == []
    plots.plt.close(fig)


@pytest.mark.parametrize("palette", ["colorblind", "deep", "Set2", "viridis", "pastel", "muted"])
@pytest.mark.parametrize("n", [7, 10])
def test_models_get_distinct_colours(palette, n):
    colours = figure_style.model_colours(n, palette)
    assert len(colours) == n
    distances = [
        np.linalg.norm(figure_style.lab(a) - figure_style.lab(b))
        for a, b in itertools.combinations(colours, 2)
    ]
    assert min(distances) >= figure_style.MIN_COLOUR_DISTANCE
    assert np.allclose(colours[0], plots.sns.color_palette(palette, n)[0])  # the user's choice


def test_the_colorblind_pinks_are_told_apart():
    """NGCF and NCL are the 5th and 7th models of the default list: the colorblind palette's
    two pinks (20.7 apart in CIELAB) no longer both appear."""
    palette = plots.sns.color_palette("colorblind", 7)
    assert np.linalg.norm(figure_style.lab(palette[4]) - figure_style.lab(palette[6])) < 25
    colours = figure_style.model_colours(7, "colorblind")
    assert np.allclose(colours[4], palette[4]) and not np.allclose(colours[6], palette[6])


def test_the_who_figure_gives_seven_models_seven_colours():
    rows = []
    for model in SEVEN:
        for g in ("Q1", "Q2", "Q3"):
            for measure in ("PUF-P-Cos", "UF"):
                rows.append(
                    {"dataset": "d", "model": model, "by": "activity", "group": g, "users": 10,
                     "user_share": 1 / 3, "low_value": 1.0, "high_value": 2.0,
                     "measure": measure, "total": 1.0, "share": 1 / 3, "low": 0.3, "high": 0.4}
                )  # fmt: skip
    table = pd.DataFrame(rows)
    fig = analysis_figures.who_axes(
        table, SEVEN, figure_style.Style(dpi=60), measures=("PUF-P-Cos", "UF")
    )
    ax = fig.axes[0]
    colours = [c.lines[0].get_color() for c in ax.containers]
    assert len(colours) == 7
    distances = [
        np.linalg.norm(figure_style.lab(a) - figure_style.lab(b))
        for a, b in itertools.combinations(colours, 2)
    ]
    assert min(distances) >= figure_style.MIN_COLOUR_DISTANCE
    plots.plt.close(fig)
