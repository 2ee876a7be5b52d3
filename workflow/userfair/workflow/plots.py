"""Figures of docs/method.md#analyses in one seaborn style (config ``plots:``), each saved
as PDF and PNG.

Every function takes the tidy frames written by the experiment and agreement rules and the
style settings, and returns nothing but files. Legends sit outside the panels, clear of the
data; widths are multiples of the configured column width.
"""

from __future__ import annotations

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import matplotlib  # noqa: E402  (after the check, which names the extra to install)

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from userfair.formulas.agreement import EQUIVALENT  # noqa: E402
from userfair.measures import NAMES  # noqa: E402
from userfair.workflow import figure_reading  # noqa: E402
from userfair.workflow.figure_registry import csv, figure, optional_csv, stacked  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    COLUMN_WIDTH_IN,
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    Style,
    check_columns,
    honest_span,
    model_styles,
    percent,
    save,
)

PERCENT_LABEL = "% users with zero relevance"
# Panels of Fig. 2: groups of measures that share a scale.
RELEVANCE_PANELS = {
    "Eff": ["P", "NDCG"],
    "SD": ["SD-P", "SD-NDCG"],
    "Gini": ["Gini-P", "Gini-NDCG"],
    "Envy": ["ME", "MME", "PEU"],
    "UF": ["UF"],
    "PUF": ["PUF-P-Jacc", "PUF-NDCG-Jacc"],
}
SIMILARITY_MEASURES = ["SD-P", "SD-NDCG", "UF", "PUF-P", "PUF-NDCG"]


def relevance_panels(relevance: pd.DataFrame) -> dict[str, list[str]]:
    """Fig. 2's panels: :data:`RELEVANCE_PANELS` and, when the experiment holds plugin
    measures (docs/plugins.md), one more panel of them (at most 7)."""
    drawn = {name for names in RELEVANCE_PANELS.values() for name in names}
    extra = [name for name in dict.fromkeys(relevance["measure"]) if name not in drawn]
    return {**RELEVANCE_PANELS, **({"Plugins": extra[:7]} if extra else {})}


# --- Fig. 1 ----------------------------------------------------------------------------


def _tau_annotations(part: pd.DataFrame, measures: list[str], rows=None) -> np.ndarray:
    """Cell texts: tau with two decimals and a star when its interval excludes 0 (the
    intervals themselves are in agreement_ci.csv and the report's table); ``rows``: the row
    labels when they are not ``measures`` (the group panel's), taken from ``part["row"]``."""
    rows = list(measures) if rows is None else rows
    key = "measure_a" if "row" not in part else "row"
    wide = part.set_index([key, "measure_b"])
    texts = np.full((len(rows), len(measures)), "", dtype=object)
    for i, first in enumerate(rows):
        for j, second in enumerate(measures):
            if (first, second) not in wide.index or (key == "measure_a" and i == j):
                continue
            row = wide.loc[(first, second)]
            if not np.isfinite(row["tau"]):
                texts[i, j] = "nan"
                continue
            star = "*" if "excludes_zero" in row.index and bool(row["excludes_zero"]) else ""
            texts[i, j] = f"{short(row['tau'])}{star}"
    return texts


def short(tau: float) -> str:
    """tau with two decimals and no leading zero, as tables in papers print it: -.52, 1.00."""
    return f"{tau:.2f}".replace("0.", ".", 1) if abs(tau) < 1 else f"{tau:.2f}"


def agreement_figure(
    agreement: pd.DataFrame,
    style: Style,
    pdf_path,
    png_path,
    measures=NAMES,
    intervals: pd.DataFrame | None = None,
    groups: pd.DataFrame | None = None,
    source: str = "users",
) -> None:
    """Kendall tau-b between the model orderings of every pair of measures, as the paper's
    Fig. 1: one lower triangle per dataset (tau is symmetric), ``measures`` in registry
    order, |tau| >= 0.9 boxed, drawn for a page (:data:`PAGE_WIDTH_IN`; two datasets a row).
    A cell shows its tau where the cell is large enough for it at :data:`ANNOTATION_POINTS`
    (one dataset), else only the star.

    With ``intervals`` (``inference.tau_intervals`` per dataset: dataset, measure_a,
    measure_b, tau, low, high, excludes_zero) a star marks the cells whose bootstrap
    interval excludes 0 (the intervals: agreement_ci.csv); ``source`` says what they cover
    (``users``: the bootstrap; ``replicates and users``: the two-level draws, whose ``tau``
    is that of the replicate means and then colours the cells too).

    With ``groups`` (``groups_agreement.csv``: dataset, by, measure_a a group measure,
    measure_b an individual one, tau[, low, high, excludes_zero]) each dataset gets a second
    panel below its triangle: a row per group measure and grouping (``UserMAD-P
    (activity:0.05)``), a column per individual measure."""
    fig = agreement_axes(agreement, style, measures, intervals, groups, source)
    save(fig, pdf_path, png_path, style)


@figure(
    "fig_agreement",
    reads={"data": csv, "intervals": optional_csv, "groups": optional_csv},
    params=("replicates",),
)
def agreement_of_run(
    agreement: pd.DataFrame,
    intervals: pd.DataFrame | None,
    groups: pd.DataFrame | None,
    style: Style,
    *,
    replicates: int = 1,
) -> plt.Figure:
    """Fig. 1 as rule fig_agreement draws it (:func:`agreement_axes`): with the intervals of
    tau when the workflow computes them, over the users (``agreement_ci.csv``), or over
    replicates and users when ``replicates`` > 1 (``agreement_replicates.csv``); with the
    groups stage on (``groups_agreement.csv``) a second panel per dataset."""
    source = "replicates and users" if replicates > 1 else "users"
    return agreement_axes(agreement, style, intervals=intervals, groups=groups, source=source)


#: The font size of a heatmap cell's text, in points: the figures' least (MIN_FONT_PT).
ANNOTATION_POINTS = MIN_FONT_PT
#: The width of a cell's text ("-0.85*") in units of its font size.
CELL_TEXT_EMS = 3.2


def group_label(measure: str, by: str) -> str:
    """A group measure of one grouping as Table 2 and Fig. 1 name it:
    ``UserMAD-P (activity:0.05)``."""
    return f"{measure} ({by})"


def agreement_axes(
    agreement: pd.DataFrame,
    style: Style,
    measures=NAMES,
    intervals: pd.DataFrame | None = None,
    groups: pd.DataFrame | None = None,
    source: str = "users",
) -> plt.Figure:
    """The figure of :func:`agreement_figure`, returned."""
    check_columns(agreement, ["dataset", "measure_a", "measure_b", "tau"], "agreement")
    if intervals is not None:
        check_columns(
            intervals,
            ["dataset", "measure_a", "measure_b", "tau", "low", "high", "excludes_zero"],
            "tau intervals",
        )
    if groups is not None and groups.empty:
        groups = None
    if groups is not None:
        check_columns(groups, ["dataset", "by", "measure_a", "measure_b", "tau"], "group tau")
    if intervals is not None and source != "users":
        # the two-level draws' tau is that of the replicate means: it colours the cells
        agreement = intervals[["dataset", "measure_a", "measure_b", "tau"]]
    style.apply()
    measures = list(measures)
    datasets = list(dict.fromkeys(agreement["dataset"]))
    ncols = min(2, len(datasets))
    side = PAGE_WIDTH_IN / ncols
    cell_pt = 72 * side * 0.8 / (len(measures) - 1)  # labels and colour bar take the rest
    annotate = cell_pt >= CELL_TEXT_EMS * ANNOTATION_POINTS
    group_rows = 0
    if groups is not None:
        group_rows = max(
            len(groups[groups["dataset"] == d][["by", "measure_a"]].drop_duplicates())
            for d in datasets
        )
    heights = [side * (0.85 if ncols == 1 else 1.1)] + (
        [side * 0.78 * (group_rows + 6) / len(measures)] if group_rows else []
    )
    nrows = -(-len(datasets) // ncols)
    fig = plt.figure(figsize=(PAGE_WIDTH_IN, sum(heights) * nrows + 0.3), layout="constrained")
    grid = fig.add_gridspec(nrows * len(heights), ncols, height_ratios=heights * nrows)
    for index, dataset in enumerate(datasets):
        row, col = divmod(index, ncols)
        ax = fig.add_subplot(grid[row * len(heights), col])
        part = agreement[agreement["dataset"] == dataset]
        matrix = part.pivot(index="measure_a", columns="measure_b", values="tau").reindex(
            index=measures, columns=measures
        )
        shown = intervals[intervals["dataset"] == dataset] if intervals is not None else part
        annot = _tau_annotations(shown, measures)
        if not annotate:  # only the stars fit
            annot = np.where(np.char.endswith(annot.astype(str), "*"), "*", "")
        # the lower triangle (tau is symmetric), without its empty first row and last column
        mask = np.triu(np.ones(matrix.shape, dtype=bool))[1:, :-1]
        matrix, annot = matrix.iloc[1:, :-1], annot[1:, :-1]
        _tau_heatmap(ax, matrix, annot, mask)
        for i, j in zip(*np.nonzero(np.abs(matrix.to_numpy()) >= EQUIVALENT)):
            if not mask[i, j]:
                ax.add_patch(plt.Rectangle((j, i), 1, 1, fill=False, lw=0.6, ec="black"))
        ax.set(title=dataset, xlabel="", ylabel="")
        ax.tick_params(labelsize=ANNOTATION_POINTS, length=0)
        if group_rows:
            below = fig.add_subplot(grid[row * len(heights) + 1, col])
            _group_agreement_panel(below, groups[groups["dataset"] == dataset], annotate)
    panels = [ax for ax in fig.axes if ax.collections]
    bar = fig.colorbar(panels[0].collections[0], ax=panels, location="bottom", shrink=0.3,
                       aspect=30, pad=0.01)  # fmt: skip
    bar.set_label("Kendall's $\\tau_b$", fontsize=ANNOTATION_POINTS + 1)
    bar.ax.tick_params(labelsize=ANNOTATION_POINTS)
    over = "" if source == "users" else f" over {source}"
    key = f"boxed: |$\\tau$| ≥ {EQUIVALENT}"
    if intervals is not None:
        key += f"; *: the interval{over} excludes 0 (intervals: agreement_ci.csv)"
    fig.supxlabel(key, fontsize=ANNOTATION_POINTS + 1)
    _turn_crowded_labels(fig, panels)
    return fig


def _tau_heatmap(ax, matrix: pd.DataFrame, annot, mask=None) -> None:
    """A heatmap of Kendall's tau-b in [-1, 1] (Fig. 1's panels), cells written ``annot``
    (masked and missing cells left blank), every row and column labelled, the row labels
    level. Drawn as seaborn's ``heatmap`` draws it (its recentred "vlag" map, white cell
    edges, no spines, light text on dark cells), without the draw of the whole figure it
    makes after each panel to decide whether to turn its column labels: the figure decides
    once, when every panel is in (:func:`_turn_crowded_labels`)."""
    values = matrix.to_numpy(dtype=float)
    hidden = np.isnan(values) if mask is None else (np.asarray(mask, bool) | np.isnan(values))
    mesh = ax.pcolormesh(np.ma.masked_where(hidden, values), cmap=_TAU_CMAP, vmin=-1, vmax=1,
                         linewidths=0.2, edgecolor="white")  # fmt: skip
    for spine in ax.spines.values():
        spine.set_visible(False)
    rows, columns = values.shape
    ax.set(xlim=(0, columns), ylim=(0, rows))
    ax.invert_yaxis()
    ax.set_xticks(np.arange(columns) + 0.5, [str(c) for c in matrix.columns])
    ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in matrix.index], va="center")
    mesh.update_scalarmappable()
    for (i, j), colour in zip(np.ndindex(rows, columns), mesh.get_facecolors()):
        if not hidden[i, j]:  # seaborn's rule: dark text where the W3C luminance is high
            light = sns.utils.relative_luminance(colour) > 0.408
            ax.text(j + 0.5, i + 0.5, str(annot[i, j]), color=".15" if light else "w",
                    ha="center", va="center", fontsize=ANNOTATION_POINTS)  # fmt: skip
    ax.grid(False)


def _recentred(name: str) -> matplotlib.colors.Colormap:
    """Seaborn's diverging map ``name`` sampled at 256 points over [-1, 1] centred on 0, as
    ``seaborn.heatmap(center=0, vmin=-1, vmax=1)`` recentres it, its bad colour kept."""
    base = sns.color_palette(name, as_cmap=True)
    cmap = matplotlib.colors.ListedColormap(base(np.linspace(0, 1, 256)))
    cmap.set_bad(base(np.ma.masked_invalid([np.nan]))[0])
    return cmap


_TAU_CMAP = _recentred("vlag")


def _turn_crowded_labels(fig: plt.Figure, axes) -> None:
    """Turn the column labels of each of ``axes`` upright where, level, they overlap one
    another (seaborn's test, made once on the figure drawn whole at its final fonts)."""
    fig.canvas.draw()
    for ax in axes:
        labels = ax.get_xticklabels()
        if sns.utils.axis_ticklabels_overlap(labels):
            plt.setp(labels, rotation="vertical")


def _group_agreement_panel(ax, part: pd.DataFrame, annotate: bool = True) -> None:
    """Fig. 1's second panel of a dataset: tau-b of each group measure (row, per grouping)
    against each individual measure (column), starred when its interval excludes 0."""
    part = part.assign(row=[group_label(m, b) for m, b in zip(part["measure_a"], part["by"])])
    rows = list(dict.fromkeys(part["row"]))
    columns = list(dict.fromkeys(part["measure_b"]))
    matrix = part.pivot(index="row", columns="measure_b", values="tau").reindex(
        index=rows, columns=columns
    )
    annot = _tau_annotations(part, columns, rows)
    if not annotate:
        annot = np.where(np.char.endswith(annot.astype(str), "*"), "*", "")
    _tau_heatmap(ax, matrix, annot)
    ax.set(title="group against individual measures", xlabel="", ylabel="")
    ax.tick_params(labelsize=ANNOTATION_POINTS, length=0)


# --- Fig. 2 ----------------------------------------------------------------------------


def relevance_figure(relevance: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 2 (:func:`relevance_axes`), saved."""
    save(relevance_axes(relevance, style), pdf_path, png_path, style)


@figure("fig_relevance", reads={"data": stacked}, reading=figure_reading.relevance_reading)
def relevance_axes(relevance: pd.DataFrame, style: Style) -> plt.Figure:
    """Fig. 2: two rows of three panels (groups of measures) per dataset, x = % users with
    non-relevant lists, drawn for a page (:data:`PAGE_WIDTH_IN`). Gini has no point where
    every score is 0 (undefined). Each panel's y range is at least :data:`MIN_SPAN` of its
    largest value (:func:`honest_span`)."""
    check_columns(relevance, ["dataset", "share", "measure", "value"], "relevance")
    style.apply()
    datasets = list(dict.fromkeys(relevance["dataset"]))
    panels = relevance_panels(relevance)
    ncols = 3  # rows of three panels a dataset, drawn for a page (the plugins: a seventh)
    per_dataset = -(-len(panels) // ncols)
    nrows = per_dataset * len(datasets)
    fig, axes = plt.subplots(
        nrows, ncols, sharex=True, squeeze=False, layout="constrained",
        figsize=(PAGE_WIDTH_IN, 1.45 * nrows + 0.4),
    )  # fmt: skip
    for index, dataset in enumerate(datasets):
        part = relevance[relevance["dataset"] == dataset].assign(
            percent=lambda f: percent(f["share"])
        )
        for panel, (group, measures) in enumerate(panels.items()):
            ax = axes[per_dataset * index + panel // ncols, panel % ncols]
            for measure, marker in zip(measures, "os^Dv<>"):
                series = part[part["measure"] == measure].sort_values("percent")
                ax.plot(series["percent"], series["value"], marker=marker, markersize=3, lw=1,
                        label=measure)  # fmt: skip
            ax.set_title(f"{dataset}: {group}" if len(datasets) > 1 else group)
            ax.set_xticks([0, 50, 100])
            ax.tick_params(labelsize=MIN_FONT_PT + 1)
            honest_span(ax)
            ax.legend(loc="best", frameon=False, fontsize=MIN_FONT_PT, handlelength=1.2)
        for panel in range(len(panels), per_dataset * ncols):  # the row's empty places
            axes[per_dataset * index + panel // ncols, panel % ncols].set_visible(False)
    fig.supxlabel(PERCENT_LABEL)
    return fig


# --- Fig. 3 ----------------------------------------------------------------------------


def similarity_figure(similarity: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 3 (:func:`similarity_axes`), saved."""
    save(similarity_axes(similarity, style), pdf_path, png_path, style)


def similarity_measures(similarity: pd.DataFrame) -> list[str]:
    """The series of Fig. 3: :data:`SIMILARITY_MEASURES` and the plugin measures the
    experiment holds (docs/plugins.md), at most 5 of them."""
    extra = [m for m in dict.fromkeys(similarity["measure"]) if m not in SIMILARITY_MEASURES]
    return SIMILARITY_MEASURES + extra[:5]


def _datasets_grid(datasets: list[str], height: float, **kwargs):
    """One panel a dataset: a column's width (:data:`COLUMN_WIDTH_IN`) for one, else a
    page's (:data:`PAGE_WIDTH_IN`) with two panels a row; ``height`` inches a row."""
    ncols = min(2, len(datasets))
    nrows = -(-len(datasets) // ncols)
    width = COLUMN_WIDTH_IN if ncols == 1 else PAGE_WIDTH_IN
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                             figsize=(width, height * nrows + 0.6), **kwargs)  # fmt: skip
    for ax in axes.flat[len(datasets) :]:
        ax.set_visible(False)
    return fig, axes


@figure("fig_similarity", reads={"data": stacked}, reading=figure_reading.similarity_reading)
def similarity_axes(similarity: pd.DataFrame, style: Style) -> plt.Figure:
    """Fig. 3: each measure against the skewness of the sampled similarities, one panel a
    dataset (:func:`_datasets_grid`), one colour and marker a measure in every panel
    (:func:`figure_style.model_styles`); a grey dashed line marks the skewness of the
    dataset's Jaccard similarities. Each panel's y range is at least :data:`MIN_SPAN` of
    its largest value (:func:`honest_span`)."""
    check_columns(
        similarity, ["dataset", "distribution", "skewness", "measure", "value"], "similarity"
    )
    style.apply()
    datasets = list(dict.fromkeys(similarity["dataset"]))
    drawn = similarity_measures(similarity)
    looks = model_styles(drawn)
    fig, axes = _datasets_grid(datasets, 2.0)
    for ax, dataset in zip(axes.flat, datasets):
        part = similarity[similarity["dataset"] == dataset]
        sampled = part[part["distribution"] != "observed"].sort_values("skewness")
        for measure in drawn:
            series = sampled[sampled["measure"] == measure]
            colour, marker = looks[measure]
            ax.plot(series["skewness"], series["value"], color=colour, marker=marker,
                    markersize=3, lw=1, label=measure)  # fmt: skip
        observed = part.loc[part["distribution"] == "observed", "skewness"]
        if len(observed):
            ax.axvline(observed.iloc[0], color="grey", lw=1, ls="--", label="observed $sim_{Jacc}$")
        ax.set_title(dataset, fontsize=MIN_FONT_PT + 1)
        ax.set_xlabel("skewness of user similarity", fontsize=MIN_FONT_PT + 1)
        ax.set_ylabel("score", fontsize=MIN_FONT_PT + 1)
        ax.tick_params(labelsize=MIN_FONT_PT)
        honest_span(ax)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False,
               fontsize=MIN_FONT_PT, handlelength=1.5)  # fmt: skip
    return fig


# --- Fig. 4 ----------------------------------------------------------------------------

#: Fig. 4's assignments: line style and whether the marker is filled.
ASSIGNMENTS = {"MostFair": ("-", "full"), "MostUnfair": ("--", "none")}


def extreme_figure(extreme: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 4 (:func:`extreme_axes`), saved."""
    save(extreme_axes(extreme, style), pdf_path, png_path, style)


@figure("fig_extreme", reads={"data": stacked}, reading=figure_reading.extreme_reading)
def extreme_axes(extreme: pd.DataFrame, style: Style) -> plt.Figure:
    """Fig. 4: PUF and UF (and the plugin measures the experiment holds) under the MostFair
    (solid, filled markers) and MostUnfair (dashed, open markers) assignments; columns = P
    and NDCG, rows = datasets, drawn for a column (:data:`COLUMN_WIDTH_IN`); one colour and
    marker a measure (:func:`figure_style.model_styles`)."""
    check_columns(
        extreme, ["dataset", "share", "assignment", "score", "measure", "value"], "extreme"
    )
    style.apply()
    datasets = list(dict.fromkeys(extreme["dataset"]))
    scores = ["P", "NDCG"]
    fig, axes = plt.subplots(
        len(datasets), len(scores), squeeze=False, layout="constrained", sharex=True,
        sharey=True, figsize=(COLUMN_WIDTH_IN, 1.55 * len(datasets) + 0.9),
    )  # fmt: skip
    drawn = ["PUF", "UF"] + [m for m in dict.fromkeys(extreme["measure"]) if m not in ("PUF", "UF")]
    looks = model_styles(drawn)
    for row, dataset in enumerate(datasets):
        for col, score in enumerate(scores):
            ax = axes[row, col]
            part = extreme[(extreme["dataset"] == dataset) & (extreme["score"] == score)]
            for measure in drawn:
                colour, marker = looks[measure]
                for assignment, (line, fill) in ASSIGNMENTS.items():
                    series = part[(part["measure"] == measure) & (part["assignment"] == assignment)]
                    series = series.sort_values("share")
                    ax.plot(percent(series["share"]), series["value"], color=colour, ls=line,
                            marker=marker, fillstyle=fill, markersize=3, lw=1,
                            label=f"{measure} {assignment}")  # fmt: skip
            ax.set_title(f"{dataset}: {score}" if len(datasets) > 1 else score,
                         fontsize=MIN_FONT_PT + 1)  # fmt: skip
            ax.set_ylabel("score" if col == 0 else "", fontsize=MIN_FONT_PT + 1)
            ax.set_xticks([0, 50, 100])
            ax.tick_params(labelsize=MIN_FONT_PT)
            honest_span(ax)
    fig.supxlabel(PERCENT_LABEL, fontsize=MIN_FONT_PT + 1)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2, frameon=False,
               fontsize=MIN_FONT_PT, handlelength=2.2)  # fmt: skip
    return fig
