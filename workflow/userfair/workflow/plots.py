"""Figures of docs/method.md#analyses in one seaborn style (config ``plots:``), each saved
as PDF and PNG.

Every function takes the tidy frames written by the experiment and agreement rules and the
style settings, and returns nothing but files. Legends sit outside the panels, clear of the
data; widths are multiples of the configured column width.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

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

from userfair.agreement import EQUIVALENT  # noqa: E402
from userfair.io import atomic_path  # noqa: E402
from userfair.measures import NAMES  # noqa: E402
from userfair.workflow.tables import model_label  # noqa: E402
from userfair.workflow.who import ACTIVITY, FIGURE_MEASURES, GROUP_COLUMNS  # noqa: E402

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


@dataclass(frozen=True)
class Style:
    """The ``plots:`` section of the config."""

    style: str = "whitegrid"
    context: str = "paper"
    palette: str = "colorblind"
    font_scale: float = 1.0
    column_width_in: float = 3.5
    dpi: int = 200

    def apply(self) -> None:
        sns.set_theme(
            style=self.style, context=self.context, palette=self.palette, font_scale=self.font_scale
        )
        plt.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42, "savefig.bbox": "tight"})


#: The smallest CIELAB distance (Delta E 1976) between the colours of two models: the
#: colorblind palette's two pinks (its 5th and 7th colours, NGCF and NCL in the default
#: model list) are 20.7 apart and look alike; 25 tells them apart.
MIN_COLOUR_DISTANCE = 25.0
#: Where more distinct colours come from when the configured palette runs out of them.
FALLBACK_PALETTES = ("tab10", "Set1", "dark", "Set2", "husl")


def lab(colour) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour (a matplotlib colour)."""
    rgb = np.asarray(matplotlib.colors.to_rgb(colour), dtype=float)
    rgb = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = (xyz @ rgb) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def model_colours(n: int, palette: str) -> list:
    """``n`` colours for ``n`` models, pairwise at least :data:`MIN_COLOUR_DISTANCE` apart
    in CIELAB: the configured ``palette``'s colours in order (a continuous one sampled more
    finely), skipping any too close to one already taken, then those of
    :data:`FALLBACK_PALETTES`; the bar is lowered only when even those run out (n > ~20)."""
    candidates = [c for size in (n, 2 * n, 3 * n) for c in sns.color_palette(palette, size)]
    candidates += [c for name in FALLBACK_PALETTES for c in sns.color_palette(name)]
    points = [lab(c) for c in candidates]
    bar = MIN_COLOUR_DISTANCE
    while True:
        chosen: list[int] = []
        for i, point in enumerate(points):
            if all(np.linalg.norm(point - points[j]) >= bar for j in chosen):
                chosen.append(i)
            if len(chosen) == n:
                return [candidates[i] for i in chosen]
        bar *= 0.8


def _drawn_ticklabels(axis) -> list:
    """The tick labels of ``axis`` that are drawn: those of ticks inside its view limits
    (matplotlib keeps labels of ticks just outside them, not drawn)."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(abs(low), abs(high), 1e-300)
    return [t.label1 for t in axis.get_major_ticks() if low - slack <= t.get_loc() <= high + slack]


def _text_boxes(fig: plt.Figure) -> list:
    """(text, window extent) of every visible tick label, annotation and title of the
    visible axes of ``fig`` (drawn first, so the extents are final)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [*_drawn_ticklabels(ax.xaxis), *_drawn_ticklabels(ax.yaxis), *ax.texts, ax.title]
    return [
        (t.get_text(), t.get_window_extent(renderer))
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]


def text_overlaps(fig: plt.Figure, gap: float = 2.0) -> list[tuple[str, str]]:
    """The pairs of texts of :func:`_text_boxes` closer than ``gap`` points to each other
    in both directions (overlapping, or touching: e.g. Fig. 2's tick labels running
    together as "050100")."""
    boxes = _text_boxes(fig)
    if len(boxes) < 2:
        return []
    room = gap * fig.dpi / 72  # points to the canvas' pixels
    x0, y0, x1, y1 = (
        np.array([getattr(b, name) for _, b in boxes]) for name in ("x0", "y0", "x1", "y1")
    )
    wide = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
    tall = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
    clash = np.triu((wide > -room) & (tall > -room), k=1)
    return [(boxes[i][0], boxes[j][0]) for i, j in zip(*np.nonzero(clash))]


#: How often :func:`make_legible` may grow a figure, and by how much each time.
GROW_STEPS, GROW_FACTOR = 8, 1.2


def make_legible(fig: plt.Figure) -> float:
    """Grow ``fig`` (fonts keep their size in points, panels get wider and taller) until no
    two of its texts overlap (:func:`text_overlaps`), at most :data:`GROW_STEPS` times by
    :data:`GROW_FACTOR`: what keeps every figure legible under a larger ``font_scale`` or
    ``context``. Returns the factor the figure grew by (1.0: it was legible)."""
    grown = 1.0
    for _ in range(GROW_STEPS):
        if not text_overlaps(fig):
            break
        width, height = fig.get_size_inches()
        fig.set_size_inches(width * GROW_FACTOR, height * GROW_FACTOR)
        grown *= GROW_FACTOR
    return grown


#: The least y range of a line panel, as a share of its largest absolute value: a change of
#: 0.3 % (Fig. 2's UF, 0.601 to 0.603) must not fill the panel as if it were steep.
MIN_SPAN = 0.1


def honest_span(ax, share: float = MIN_SPAN) -> None:
    """Widen ``ax``'s y range about its centre to at least ``share`` of the largest
    absolute y value of its data (nothing when it is already that wide, or all 0)."""
    low, high = ax.dataLim.y0, ax.dataLim.y1
    if not (np.isfinite(low) and np.isfinite(high)):
        return
    need = share * max(abs(low), abs(high))
    bottom, top = ax.get_ylim()
    if need > 0 and top - bottom < need:
        centre = (low + high) / 2
        ax.set_ylim(centre - need / 2, centre + need / 2)


def save(
    fig: plt.Figure, pdf_path: str | os.PathLike, png_path: str | os.PathLike, style: Style
) -> None:
    """Write ``fig`` as PDF and PNG (atomically) and close it, grown first where its texts
    overlap (:func:`make_legible`). The PDF carries no creation date, so the same figure
    gives the same bytes on every run."""
    make_legible(fig)
    with atomic_path(pdf_path) as tmp:
        fig.savefig(tmp, format="pdf", metadata={"CreationDate": None})
    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, format="png", dpi=style.dpi)
    plt.close(fig)


def _legend_outside(fig: plt.Figure, handles, labels, ncol: int, where: str = "lower") -> None:
    """One figure legend outside the panels (``where``: lower or upper edge)."""
    fig.legend(handles, labels, loc=f"outside {where} center", ncol=ncol, frameon=False)


def _check_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing columns {missing}; have {list(frame.columns)}")


def _panel_grid(n_panels: int, width: float, height: float):
    """At most two panels per row, each ``width`` x ``height`` inches; spare panels hidden."""
    ncols = min(2, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, layout="constrained", figsize=(width * ncols, height * nrows)
    )
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, axes


def _percent(share: pd.Series) -> pd.Series:
    return (100 * share).round().astype(int)


# --- Fig. 1 ----------------------------------------------------------------------------


def _tau_annotations(part: pd.DataFrame, measures: list[str]) -> np.ndarray:
    """Cell texts 'tau' and, below, '[low, high]' with a star when the interval excludes 0."""
    wide = part.set_index(["measure_a", "measure_b"])
    texts = np.full((len(measures), len(measures)), "", dtype=object)
    for i, first in enumerate(measures):
        for j, second in enumerate(measures):
            if (first, second) not in wide.index or i == j:
                continue
            row = wide.loc[(first, second)]
            if not np.isfinite(row["tau"]):
                texts[i, j] = "nan"
                continue
            star = "*" if bool(row["excludes_zero"]) else ""
            texts[i, j] = f"{row['tau']:.2f}{star}\n[{row['low']:.1f},{row['high']:.1f}]"
    return texts


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
    """Annotated Kendall tau-b heatmap, one panel per dataset, ``measures`` in registry
    order; |tau| >= 0.9 is boxed.

    With ``intervals`` (``inference.tau_intervals`` per dataset: dataset, measure_a,
    measure_b, tau, low, high, excludes_zero) every cell also shows the bootstrap interval
    of tau and a star when that interval excludes 0 (in a panel twice as wide, the texts
    at :data:`ANNOTATION_POINTS`); ``source`` says what the intervals cover (``users``: the
    bootstrap; ``replicates and users``: the two-level draws, whose ``tau`` is that of the
    replicate means and then colours the cells too).

    With ``groups`` (``groups_agreement.csv``: dataset, by, measure_a a group measure,
    measure_b an individual one, tau[, low, high, excludes_zero]) each dataset gets a second
    panel: a row per group measure and grouping (``UserMAD-P (activity:0.05)``), a column
    per individual measure. Without it (groups off) the figure is the one above."""
    fig = agreement_axes(agreement, style, measures, intervals, groups, source)
    save(fig, pdf_path, png_path, style)


#: The least font size of a heatmap cell's text, in points (5 pt: 14 px at 200 dpi).
ANNOTATION_POINTS = 5.0


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
    _check_columns(agreement, ["dataset", "measure_a", "measure_b", "tau"], "agreement")
    if intervals is not None:
        _check_columns(
            intervals,
            ["dataset", "measure_a", "measure_b", "tau", "low", "high", "excludes_zero"],
            "tau intervals",
        )
    if groups is not None and groups.empty:
        groups = None
    if groups is not None:
        _check_columns(groups, ["dataset", "by", "measure_a", "measure_b", "tau"], "group tau")
    if intervals is not None and source != "users":
        # the two-level draws' tau is that of the replicate means: it colours the cells
        agreement = intervals[["dataset", "measure_a", "measure_b", "tau"]]
    style.apply()
    datasets = list(dict.fromkeys(agreement["dataset"]))
    side = 2 * style.column_width_in * (2 if intervals is not None else 1)
    per_dataset = 1 if groups is None else 2
    fig, axes = _panel_grid(len(datasets) * per_dataset, side, side * 0.9)
    panels = iter(axes.flat)
    for dataset in datasets:
        ax = next(panels)
        part = agreement[agreement["dataset"] == dataset]
        matrix = part.pivot(index="measure_a", columns="measure_b", values="tau").reindex(
            index=list(measures), columns=list(measures)
        )
        annot, fmt, size = True, ".2f", max(4.5, ANNOTATION_POINTS)
        if intervals is not None:
            annot = _tau_annotations(intervals[intervals["dataset"] == dataset], measures)
            fmt, size = "", ANNOTATION_POINTS
        sns.heatmap(
            matrix,
            ax=ax,
            vmin=-1,
            vmax=1,
            center=0,
            cmap="vlag",
            square=True,
            annot=annot,
            fmt=fmt,
            annot_kws={"fontsize": size},
            cbar_kws={"label": "Kendall's $\\tau_b$", "shrink": 0.6},
        )
        for i, j in zip(*np.nonzero(np.abs(matrix.to_numpy()) >= EQUIVALENT)):
            if i != j:
                ax.add_patch(plt.Rectangle((j, i), 1, 1, fill=False, lw=0.8, ec="black"))
        title = f"{dataset} (boxed: |$\\tau$| ≥ {EQUIVALENT}"
        over = "" if source == "users" else f" over {source}"
        title += f"; *: interval{over} excludes 0)" if intervals is not None else ")"
        ax.set(title=title, xlabel="", ylabel="")
        ax.tick_params(labelsize=6)
        if groups is not None:
            _group_agreement_panel(next(panels), groups[groups["dataset"] == dataset], dataset)
    return fig


def _group_agreement_panel(ax, part: pd.DataFrame, dataset: str) -> None:
    """Fig. 1's second panel of a dataset: tau-b of each group measure (row, per grouping)
    against each individual measure (column), with its interval when ``part`` has one."""
    part = part.assign(row=[group_label(m, b) for m, b in zip(part["measure_a"], part["by"])])
    rows = list(dict.fromkeys(part["row"]))
    columns = list(dict.fromkeys(part["measure_b"]))
    matrix = part.pivot(index="row", columns="measure_b", values="tau").reindex(
        index=rows, columns=columns
    )
    with_intervals = {"low", "high", "excludes_zero"} <= set(part.columns)
    if with_intervals:
        wide = part.set_index(["row", "measure_b"])
        annot = np.full(matrix.shape, "", dtype=object)
        for i, row in enumerate(rows):
            for j, column in enumerate(columns):
                if (row, column) not in wide.index:
                    continue
                cell = wide.loc[(row, column)]
                if not np.isfinite(cell["tau"]):
                    annot[i, j] = "nan"
                    continue
                star = "*" if bool(cell["excludes_zero"]) else ""
                annot[i, j] = f"{cell['tau']:.2f}{star}\n[{cell['low']:.1f},{cell['high']:.1f}]"
        fmt = ""
    else:
        annot, fmt = True, ".2f"
    sns.heatmap(
        matrix,
        ax=ax,
        vmin=-1,
        vmax=1,
        center=0,
        cmap="vlag",
        square=True,
        annot=annot,
        fmt=fmt,
        annot_kws={"fontsize": ANNOTATION_POINTS},
        cbar_kws={"label": "Kendall's $\\tau_b$", "shrink": 0.6},
    )
    ax.set(title=f"{dataset}: group against individual measures", xlabel="", ylabel="")
    ax.tick_params(labelsize=6)


# --- Fig. 2 ----------------------------------------------------------------------------


def relevance_figure(relevance: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 2 (:func:`relevance_axes`), saved."""
    save(relevance_axes(relevance, style), pdf_path, png_path, style)


def relevance_axes(relevance: pd.DataFrame, style: Style) -> plt.Figure:
    """Fig. 2: rows = datasets, columns = groups of measures, x = % users with non-relevant
    lists. Gini has no point where every score is 0 (undefined). Each panel's y range is at
    least :data:`MIN_SPAN` of its largest value (:func:`honest_span`)."""
    _check_columns(relevance, ["dataset", "share", "measure", "value"], "relevance")
    style.apply()
    datasets = list(dict.fromkeys(relevance["dataset"]))
    ncols = len(RELEVANCE_PANELS)
    fig, axes = plt.subplots(
        len(datasets),
        ncols,
        sharex=True,
        squeeze=False,
        layout="constrained",
        figsize=(2 * style.column_width_in, 1.5 * len(datasets) + 0.9),
    )
    for row, dataset in enumerate(datasets):
        part = relevance[relevance["dataset"] == dataset].assign(
            percent=lambda f: _percent(f["share"])
        )
        for col, (group, measures) in enumerate(RELEVANCE_PANELS.items()):
            ax = axes[row, col]
            for measure, marker in zip(measures, "os^"):
                series = part[part["measure"] == measure].sort_values("percent")
                ax.plot(
                    series["percent"],
                    series["value"],
                    marker=marker,
                    markersize=3,
                    lw=1,
                    label=measure,
                )
            ax.set_title(group if row == 0 else "")
            ax.set_ylabel(dataset if col == 0 else "")
            ax.set_xticks([0, 50, 100])
            honest_span(ax)
            if row == len(datasets) - 1:
                ax.legend(
                    loc="upper center",
                    bbox_to_anchor=(0.5, -0.45),
                    frameon=False,
                    fontsize="x-small",
                    handlelength=1.2,
                )
    fig.supxlabel(PERCENT_LABEL)
    return fig


# --- Fig. 3 ----------------------------------------------------------------------------


def similarity_figure(similarity: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 3: measure vs skewness of the sampled similarities; a grey vertical line marks
    the skewness of the dataset's Jaccard similarities. One panel per dataset."""
    _check_columns(
        similarity, ["dataset", "distribution", "skewness", "measure", "value"], "similarity"
    )
    style.apply()
    datasets = list(dict.fromkeys(similarity["dataset"]))
    fig, axes = _panel_grid(len(datasets), style.column_width_in, 2.3)
    for ax, dataset in zip(axes.flat, datasets):
        part = similarity[similarity["dataset"] == dataset]
        sampled = part[part["distribution"] != "observed"].sort_values("skewness")
        for measure, marker in zip(SIMILARITY_MEASURES, "osDo^"):
            series = sampled[sampled["measure"] == measure]
            ax.plot(
                series["skewness"],
                series["value"],
                marker=marker,
                markersize=3,
                lw=1,
                label=measure,
            )
        observed = part.loc[part["distribution"] == "observed", "skewness"]
        if len(observed):
            ax.axvline(observed.iloc[0], color="grey", lw=1, ls="--", label="observed $sim_{Jacc}$")
        ax.set(title=dataset, xlabel="skewness of user similarity", ylabel="score")
        honest_span(ax)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    _legend_outside(fig, handles, labels, ncol=3)
    save(fig, pdf_path, png_path, style)


# --- Fig. 4 ----------------------------------------------------------------------------


def extreme_figure(extreme: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 4: PUF and UF under the MostFair and MostUnfair assignments; columns = P and
    NDCG, rows = datasets."""
    _check_columns(
        extreme, ["dataset", "share", "assignment", "score", "measure", "value"], "extreme"
    )
    style.apply()
    datasets = list(dict.fromkeys(extreme["dataset"]))
    scores = ["P", "NDCG"]
    fig, axes = plt.subplots(
        len(datasets),
        len(scores),
        squeeze=False,
        layout="constrained",
        sharex=True,
        sharey=True,
        figsize=(style.column_width_in, 1.6 * len(datasets) + 0.9),
    )
    colors = dict(zip(["PUF", "UF"], sns.color_palette(n_colors=2)))
    for row, dataset in enumerate(datasets):
        for col, score in enumerate(scores):
            ax = axes[row, col]
            part = extreme[(extreme["dataset"] == dataset) & (extreme["score"] == score)]
            for (measure, assignment), series in part.groupby(["measure", "assignment"]):
                series = series.sort_values("share")
                ax.plot(
                    _percent(series["share"]),
                    series["value"],
                    color=colors[measure],
                    ls="-" if assignment == "MostFair" else "--",
                    marker="o" if assignment == "MostFair" else "^",
                    markersize=3,
                    lw=1,
                    label=f"{measure} {assignment}",
                )
            ax.set_title(f"{dataset}: {score}" if len(datasets) > 1 else score)
            ax.set_ylabel("score" if col == 0 else "")
            ax.set_xticks([0, 50, 100])
            honest_span(ax)
    fig.supxlabel(PERCENT_LABEL)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    _legend_outside(fig, handles, labels, ncol=2, where="upper")
    save(fig, pdf_path, png_path, style)


# --- Appendix: gamma -------------------------------------------------------------------


GAMMA_MEASURES = ["UF", "PUF-P", "PUF-NDCG"]


def _gamma_grid(frame: pd.DataFrame, style: Style, height: float):
    datasets = list(dict.fromkeys(frame["dataset"]))
    fig, axes = plt.subplots(
        len(datasets), len(GAMMA_MEASURES), squeeze=False, layout="constrained",
        figsize=(2 * style.column_width_in, height * len(datasets) + 0.8),
    )  # fmt: skip
    return datasets, fig, axes


def _gamma_legend(fig: plt.Figure, axes) -> None:
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes.flat:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    fig.legend(
        handles,
        labels,
        title="$\\gamma$",
        loc="outside upper center",
        ncol=len(labels),
        frameon=False,
    )


def gamma_models_figure(gamma: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """UF and PUF with sim_UF for every gamma on the real runs: bars per model; rows =
    datasets, columns = measures."""
    _check_columns(gamma, ["dataset", "model", "gamma", "measure", "value"], "gamma (models)")
    style.apply()
    gamma = gamma.assign(
        model=gamma["model"].map(model_label), gamma=gamma["gamma"].map(lambda g: f"{g:g}")
    )
    datasets, fig, axes = _gamma_grid(gamma, style, 1.9)
    for row, dataset in enumerate(datasets):
        for col, measure in enumerate(GAMMA_MEASURES):
            ax = axes[row, col]
            part = gamma[(gamma["dataset"] == dataset) & (gamma["measure"] == measure)]
            sns.barplot(data=part, x="model", y="value", hue="gamma", ax=ax)
            ax.set_title(f"{dataset}: {measure}" if len(datasets) > 1 else measure)
            ax.set(xlabel="", ylabel="score" if col == 0 else "")
            ax.tick_params(axis="x", labelrotation=90)
    _gamma_legend(fig, axes)
    save(fig, pdf_path, png_path, style)


def gamma_relevance_figure(gamma: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """UF and PUF with sim_UF for every gamma on the Fig. 2 lists; rows = datasets,
    columns = measures."""
    _check_columns(gamma, ["dataset", "share", "gamma", "measure", "value"], "gamma (relevance)")
    style.apply()
    gamma = gamma.assign(
        percent=_percent(gamma["share"]), gamma=gamma["gamma"].map(lambda g: f"{g:g}")
    )
    datasets, fig, axes = _gamma_grid(gamma, style, 1.6)
    for row, dataset in enumerate(datasets):
        for col, measure in enumerate(GAMMA_MEASURES):
            ax = axes[row, col]
            part = gamma[(gamma["dataset"] == dataset) & (gamma["measure"] == measure)]
            sns.lineplot(
                data=part,
                x="percent",
                y="value",
                hue="gamma",
                style="gamma",
                markers=True,
                dashes=False,
                markersize=4,
                ax=ax,
            )
            ax.set_title(f"{dataset}: {measure}" if len(datasets) > 1 else measure)
            ax.set(xlabel="", ylabel="score" if col == 0 else "", xticks=[0, 50, 100])
    _gamma_legend(fig, axes)
    fig.supxlabel(PERCENT_LABEL)
    save(fig, pdf_path, png_path, style)


# --- bootstrap intervals -----------------------------------------------------------------


def intervals_figure(
    summary: pd.DataFrame, measures: list[str], models: list[str], style: Style, pdf_path, png_path
) -> None:
    """Every measure of ``measures`` per model with its bootstrap interval: one panel per
    (dataset, measure), models on the x axis, the point estimate as a dot and the
    percentile interval as a bar. ``summary``: dataset, model, measure, value, low, high."""
    _check_columns(summary, ["dataset", "model", "measure", "value", "low", "high"], "summary")
    style.apply()
    datasets = list(dict.fromkeys(summary["dataset"]))
    panels = [(d, m) for d in datasets for m in measures]
    ncols = min(4, len(measures))
    nrows = -(-len(panels) // ncols)
    width = style.column_width_in
    fig, axes = plt.subplots(
        nrows,
        ncols,
        squeeze=False,
        layout="constrained",
        figsize=(width * ncols * 0.75, width * 0.6 * nrows),
    )
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    labels = [model_label(m) for m in models]
    for ax, (dataset, measure) in zip(axes.flat, panels):
        part = summary[(summary["dataset"] == dataset) & (summary["measure"] == measure)]
        part = part.set_index(part["model"].map(model_label)).reindex(labels)  # names or labels
        x = np.arange(len(models))
        value = part["value"].to_numpy(dtype=float)
        errors = np.vstack(
            [value - part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float) - value]
        )
        ax.errorbar(x, value, yerr=np.abs(errors), fmt="o", ms=3, capsize=2, lw=0.8)
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=6)
        ax.set_xlim(-0.5, len(models) - 0.5)
        ax.tick_params(axis="y", labelsize=6)
        title = measure if len(datasets) == 1 else f"{dataset}: {measure}"
        ax.set_title(title, fontsize=7)
    save(fig, pdf_path, png_path, style)


# --- the reproduction gap ------------------------------------------------------------------

GAP_LABEL = "ours / paper"


def paper_gap_axes(
    cells: pd.DataFrame, tau: pd.DataFrame, verdicts: pd.DataFrame, run_note: str, style: Style
) -> plt.Figure:
    """The figure of :func:`paper_gap_figure`, returned (for a caller that inspects it)."""
    _check_columns(cells, ["dataset", "measure", "model", "paper", "ours", "lo", "hi"], "cells")
    _check_columns(verdicts, ["dataset", "published", "line"], "verdicts")
    style.apply()
    published = [d for d, p in zip(verdicts["dataset"], verdicts["published"]) if p]
    others = verdicts.loc[~verdicts["published"].astype(bool), "line"].tolist()
    width = 2 * style.column_width_in
    panels = max(1, len(published))
    fig, axes = plt.subplots(
        panels, 1, squeeze=False, layout="constrained", figsize=(width, 2.8 * panels + 0.4)
    )
    measures = list(NAMES)
    models = list(dict.fromkeys(cells["model"]))
    colours = model_colours(max(len(models), 1), style.palette)
    offsets = np.linspace(-0.35, 0.35, len(models)) if len(models) > 1 else np.zeros(1)
    for ax, dataset in zip(axes[:, 0], published):
        part = cells[cells["dataset"] == dataset].set_index(["measure", "model"])
        for model, offset, colour in zip(models, offsets, colours):
            rows = part.xs(model, level="model").reindex(measures)
            paper = rows["paper"].to_numpy(dtype=float)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(paper != 0, rows["ours"].to_numpy(dtype=float) / paper, np.nan)
                low = np.where(paper != 0, rows["lo"].to_numpy(dtype=float) / paper, np.nan)
                high = np.where(paper != 0, rows["hi"].to_numpy(dtype=float) / paper, np.nan)
            errors = np.vstack([ratio - low, high - ratio])
            errors = np.where(np.isfinite(errors), np.abs(errors), 0.0)
            ax.errorbar(
                np.arange(len(measures)) + offset,
                ratio,
                yerr=errors,
                fmt="o",
                ms=3,
                capsize=1.5,
                lw=0.7,
                color=colour,
                label=model_label(model),
            )
        ax.axhline(1.0, color="black", lw=0.8, ls="--", zorder=0)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        taus = tau[tau["dataset"] == dataset].set_index("measure")["tau"].reindex(measures)
        ax.set_xticks(
            np.arange(len(measures)),
            [
                f"{m} ({'tau ' + format(t, '.2f') if np.isfinite(t) else 'tau -'})"
                for m, t in zip(measures, taus)
            ],
            rotation=90,
            fontsize=6,
        )
        ax.set_xlim(-0.6, len(measures) - 0.4)
        ax.set_ylabel(GAP_LABEL)
        line = verdicts.loc[verdicts["dataset"] == dataset, "line"].iloc[0]
        ax.set_title(line.split("; worst")[0], fontsize=7)
    if not published:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "\n".join(others), ha="center", va="center", fontsize=8)
    else:
        handles, labels = axes[0, 0].get_legend_handles_labels()
        _legend_outside(fig, handles, labels, ncol=min(len(models), 7), where="upper")
    fig.text(0.5, 0, "\n".join([f"Run: {run_note}", *(others if published else [])]),
             ha="center", va="top", fontsize=6)  # fmt: skip
    return fig


def paper_gap_figure(
    cells: pd.DataFrame,
    tau: pd.DataFrame,
    verdicts: pd.DataFrame,
    run_note: str,
    style: Style,
    pdf_path,
    png_path,
) -> None:
    """The reproduction gap (docs/reproduction.md): one panel per dataset with published
    numbers, ours / paper of every measure (x axis, with Kendall's tau-b between the
    paper's model ordering and ours) and model (one point each), the bootstrap interval
    divided by the printed value as a bar, 1.0 (the print) dashed; the panel's title is the
    dataset's verdict. Datasets without published numbers and the run's grid and epochs
    are named below the panels."""
    save(paper_gap_axes(cells, tau, verdicts, run_note, style), pdf_path, png_path, style)


# --- who is treated unfairly ------------------------------------------------------------


def who_figure(
    table: pd.DataFrame,
    models: list[str],
    style,
    pdf_path,
    png_path,
    measures=FIGURE_MEASURES,
    by: str = ACTIVITY,
) -> None:
    """:func:`who_axes`, saved as PDF and PNG."""
    save(who_axes(table, models, style, measures, by), pdf_path, png_path, style)


def who_axes(table: pd.DataFrame, models: list[str], style, measures=FIGURE_MEASURES, by=ACTIVITY):
    """The who figure: share of each measure by ``by`` group (activity quantiles), per
    model, with the bootstrap intervals: one panel per (dataset, measure); groups on the x
    axis (Q1 = least active), one dodged series of points per model with error bars; the
    dashed line at each group's share of the users (a group carrying exactly its share of
    the users is on it). ``table``: ``userfair.workflow.who.group_table``'s rows. Returns the
    figure."""
    _check_columns(table, GROUP_COLUMNS, "who table")
    part = table[table["by"] == by]
    if part.empty:
        raise ValueError(f"who table: no rows grouped by {by!r}")
    style.apply()
    datasets = list(dict.fromkeys(part["dataset"]))
    measures = [m for m in measures if m in set(part["measure"])]
    panels = [(d, m) for d in datasets for m in measures]
    ncols = min(5, len(panels))
    nrows = -(-len(panels) // ncols)
    width = style.column_width_in
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, layout="constrained",
        figsize=(width * ncols * 0.6, width * 0.62 * nrows),
    )  # fmt: skip
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    colours = model_colours(max(len(models), 1), style.palette)
    handles = []
    for ax, (dataset, measure) in zip(axes.flat, panels):
        rows = part[(part["dataset"] == dataset) & (part["measure"] == measure)]
        order = list(dict.fromkeys(rows["group"]))
        x = np.arange(len(order))
        offsets = (np.arange(len(models)) - (len(models) - 1) / 2) * (0.7 / max(len(models), 1))
        for i, model in enumerate(models):
            named = rows["model"].map(model_label) == model_label(model)  # names or labels
            mine = rows[named].set_index("group").reindex(order)
            value = 100 * mine["share"].to_numpy(dtype=float)
            low = 100 * mine["low"].to_numpy(dtype=float)
            high = 100 * mine["high"].to_numpy(dtype=float)
            errors = np.abs(np.vstack([value - low, high - value]))
            handle = ax.errorbar(
                x + offsets[i], value, yerr=np.nan_to_num(errors), fmt="o", ms=2.5,
                capsize=1.5, lw=0.7, color=colours[i % len(colours)], label=model_label(model),
            )  # fmt: skip
            if ax is axes.flat[0]:
                handles.append(handle)
        users = rows.drop_duplicates("group").set_index("group").reindex(order)["user_share"]
        (line,) = ax.plot(
            x, 100 * users.to_numpy(dtype=float), "--", color="0.3", lw=0.8, zorder=3,
            label="share of the users",
        )  # fmt: skip
        ax.set_xticks(x, order, fontsize=6)
        ax.tick_params(axis="y", labelsize=6)
        ax.set_title(measure if len(datasets) == 1 else f"{dataset}: {measure}", fontsize=7)
        if ax in axes[:, 0]:
            ax.set_ylabel("% of the measure", fontsize=7)
        if ax in axes[-1, :] or ax is axes.flat[len(panels) - 1]:
            ax.set_xlabel("activity group (Q1 = least active)", fontsize=6)
    handles.append(line)
    fig.legend(
        handles, [h.get_label() for h in handles], loc="outside lower center",
        ncol=min(len(handles), 7), frameon=False, fontsize=7,
    )  # fmt: skip
    return fig
