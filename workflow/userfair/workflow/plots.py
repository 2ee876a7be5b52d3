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

from userfair.agreement import EQUIVALENT  # noqa: E402
from userfair.measures import NAMES  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    Style,
    check_columns,
    honest_span,
    legend_outside,
    panel_grid,
    percent,
    save,
)
from userfair.workflow.tables import model_label  # noqa: E402

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
    datasets = list(dict.fromkeys(agreement["dataset"]))
    side = 2 * style.column_width_in * (2 if intervals is not None else 1)
    per_dataset = 1 if groups is None else 2
    fig, axes = panel_grid(len(datasets) * per_dataset, side, side * 0.9)
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
        _tau_heatmap(ax, matrix, annot, fmt, size)
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


def _tau_heatmap(ax, matrix: pd.DataFrame, annot, fmt: str, size: float) -> None:
    """A heatmap of Kendall's tau-b in [-1, 1] (Fig. 1's panels), cells written ``annot``."""
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
    _tau_heatmap(ax, matrix, annot, fmt, ANNOTATION_POINTS)
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
    check_columns(relevance, ["dataset", "share", "measure", "value"], "relevance")
    style.apply()
    datasets = list(dict.fromkeys(relevance["dataset"]))
    panels = relevance_panels(relevance)
    ncols = len(panels)
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
            percent=lambda f: percent(f["share"])
        )
        for col, (group, measures) in enumerate(panels.items()):
            ax = axes[row, col]
            for measure, marker in zip(measures, "os^Dv<>"):
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
    check_columns(
        similarity, ["dataset", "distribution", "skewness", "measure", "value"], "similarity"
    )
    style.apply()
    datasets = list(dict.fromkeys(similarity["dataset"]))
    fig, axes = panel_grid(len(datasets), style.column_width_in, 2.3)
    for ax, dataset in zip(axes.flat, datasets):
        part = similarity[similarity["dataset"] == dataset]
        sampled = part[part["distribution"] != "observed"].sort_values("skewness")
        drawn = (
            SIMILARITY_MEASURES
            + [  # and the plugin measures (docs/plugins.md)
                name
                for name in dict.fromkeys(sampled["measure"])
                if name not in SIMILARITY_MEASURES
            ][:5]
        )
        for measure, marker in zip(drawn, "osDo^v<>Dp"):
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
    legend_outside(fig, handles, labels, ncol=3)
    save(fig, pdf_path, png_path, style)


# --- Fig. 4 ----------------------------------------------------------------------------


def extreme_figure(extreme: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """Fig. 4: PUF and UF under the MostFair and MostUnfair assignments; columns = P and
    NDCG, rows = datasets."""
    check_columns(
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
    drawn = ["PUF", "UF"] + [m for m in dict.fromkeys(extreme["measure"]) if m not in ("PUF", "UF")]
    colors = dict(zip(drawn, sns.color_palette(n_colors=len(drawn))))  # plugins after PUF, UF
    for row, dataset in enumerate(datasets):
        for col, score in enumerate(scores):
            ax = axes[row, col]
            part = extreme[(extreme["dataset"] == dataset) & (extreme["score"] == score)]
            for (measure, assignment), series in part.groupby(["measure", "assignment"]):
                series = series.sort_values("share")
                ax.plot(
                    percent(series["share"]),
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
    legend_outside(fig, handles, labels, ncol=2, where="upper")
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
    check_columns(gamma, ["dataset", "model", "gamma", "measure", "value"], "gamma (models)")
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
    check_columns(gamma, ["dataset", "share", "gamma", "measure", "value"], "gamma (relevance)")
    style.apply()
    gamma = gamma.assign(
        percent=percent(gamma["share"]), gamma=gamma["gamma"].map(lambda g: f"{g:g}")
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
