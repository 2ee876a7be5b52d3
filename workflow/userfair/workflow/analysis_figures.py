"""The figures of this workflow's own analyses, beside the paper's
(:mod:`userfair.workflow.plots`): every Fair measure per model with its bootstrap interval,
the paper's printed numbers beside the run's, and who is treated unfairly. Their look is
:mod:`userfair.workflow.figure_style`'s.
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

from userfair.measures import FAIR, NAMES, OPT_IN, higher_is_better  # noqa: E402
from userfair.workflow.figure_registry import csv, csv_with, figure  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    Style,
    check_columns,
    legend_outside,
    model_styles,
    panel_grid,
    save,
)
from userfair.workflow.tables import model_label  # noqa: E402
from userfair.workflow.who import ACTIVITY, FIGURE_MEASURES, GROUP_COLUMNS  # noqa: E402

# --- bootstrap intervals -----------------------------------------------------------------


def intervals_figure(
    summary: pd.DataFrame, measures: list[str], models: list[str], style: Style, pdf_path, png_path
) -> None:
    """:func:`intervals_axes`, saved as PDF and PNG."""
    save(intervals_axes(summary, measures, models, style), pdf_path, png_path, style)


@figure("fig_intervals", reads={"intervals": csv}, params=("models",))
def intervals_of_run(summary: pd.DataFrame, style: Style, *, models: list[str]) -> plt.Figure:
    """Rule fig_intervals' figure (:func:`intervals_axes`): every Fair measure per model
    with its bootstrap interval, the opt-in Fair measures too when ``intervals.csv`` holds
    them (measures.relevance, measures.similarities)."""
    held = set(summary["measure"])
    opt_in = tuple(m for m in OPT_IN if m in held and not higher_is_better(m))
    return intervals_axes(summary, FAIR + opt_in, models, style)


def intervals_axes(
    summary: pd.DataFrame, measures: list[str], models: list[str], style: Style
) -> plt.Figure:
    """Every measure of ``measures`` per model with its bootstrap interval: one panel per
    (dataset, measure), models on the x axis, the point estimate as a dot and the
    percentile interval as a bar. ``summary``: dataset, model, measure, value, low, high."""
    check_columns(summary, ["dataset", "model", "measure", "value", "low", "high"], "summary")
    style.apply()
    datasets = list(dict.fromkeys(summary["dataset"]))
    panels = [(d, m) for d in datasets for m in measures]
    ncols = min(4 if len(models) <= 7 else 3, len(measures))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, layout="constrained",
        figsize=(PAGE_WIDTH_IN, 1.9 * nrows),
    )  # fmt: skip
    looks = model_styles([model_label(m) for m in models])
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
        for i, label in enumerate(labels):  # each model in its colour and marker
            colour, marker = looks[label]
            ax.errorbar(x[i], value[i], yerr=np.abs(errors[:, i : i + 1]), fmt=marker, ms=3,
                        capsize=1.5, lw=0.8, color=colour)  # fmt: skip
        ax.set_xticks(x, labels, rotation=90, fontsize=MIN_FONT_PT)
        ax.set_xlim(-0.5, len(models) - 0.5)
        ax.tick_params(axis="y", labelsize=MIN_FONT_PT)
        title = measure if len(datasets) == 1 else f"{dataset}: {measure}"
        ax.set_title(title, fontsize=MIN_FONT_PT + 1)
    return fig


# --- the reproduction gap ------------------------------------------------------------------

GAP_LABEL = "ours / paper"


def paper_gap_axes(
    cells: pd.DataFrame, tau: pd.DataFrame, verdicts: pd.DataFrame, run_note: str, style: Style
) -> plt.Figure:
    """The figure of :func:`paper_gap_figure`, returned (for a caller that inspects it)."""
    check_columns(cells, ["dataset", "measure", "model", "paper", "ours", "lo", "hi"], "cells")
    check_columns(verdicts, ["dataset", "published", "line"], "verdicts")
    style.apply()
    published = [d for d, p in zip(verdicts["dataset"], verdicts["published"]) if p]
    others = verdicts.loc[~verdicts["published"].astype(bool), "line"].tolist()
    width = PAGE_WIDTH_IN
    panels = max(1, len(published))
    fig, axes = plt.subplots(
        panels, 1, squeeze=False, layout="constrained", figsize=(width, 2.8 * panels + 0.4)
    )
    measures = list(NAMES)
    models = list(dict.fromkeys(cells["model"]))
    looks = model_styles([model_label(m) for m in models])
    offsets = np.linspace(-0.35, 0.35, len(models)) if len(models) > 1 else np.zeros(1)
    for ax, dataset in zip(axes[:, 0], published):
        part = cells[cells["dataset"] == dataset].set_index(["measure", "model"])
        for model, offset in zip(models, offsets):
            colour, marker = looks[model_label(model)]
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
                fmt=marker,
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
        legend_outside(fig, handles, labels, ncol=min(len(models), 7), where="upper")
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


@figure("fig_who", reads={"table": csv_with(group=str)}, params=("models",))
def who_of_run(table: pd.DataFrame, style: Style, *, models: list[str]) -> plt.Figure:
    """Rule fig_who's figure: :func:`who_axes` of the run's who table."""
    return who_axes(table, models, style)


def who_axes(table: pd.DataFrame, models: list[str], style, measures=FIGURE_MEASURES, by=ACTIVITY):
    """The who figure: share of each measure by ``by`` group (activity quantiles), per
    model, with the bootstrap intervals: one panel per (dataset, measure); groups on the x
    axis (Q1 = least active), one dodged series of points per model with error bars; the
    dashed line at each group's share of the users (a group carrying exactly its share of
    the users is on it). ``table``: ``userfair.workflow.who.group_table``'s rows. Returns the
    figure."""
    check_columns(table, GROUP_COLUMNS, "who table")
    part = table[table["by"] == by]
    if part.empty:
        raise ValueError(f"who table: no rows grouped by {by!r}")
    style.apply()
    datasets = list(dict.fromkeys(part["dataset"]))
    measures = [m for m in measures if m in set(part["measure"])]
    panels = [(d, m) for d in datasets for m in measures]
    columns = min(4, len(panels))
    fig, axes = panel_grid(len(panels), PAGE_WIDTH_IN / columns, 1.9, max_columns=columns)
    looks = model_styles([model_label(m) for m in models])
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
            colour, marker = looks[model_label(model)]
            handle = ax.errorbar(
                x + offsets[i], value, yerr=np.nan_to_num(errors), fmt=marker, ms=2.5,
                capsize=1.5, lw=0.7, color=colour, label=model_label(model),
            )  # fmt: skip
            if ax is axes.flat[0]:
                handles.append(handle)
        users = rows.drop_duplicates("group").set_index("group").reindex(order)["user_share"]
        (line,) = ax.plot(
            x, 100 * users.to_numpy(dtype=float), "--", color="0.3", lw=0.8, zorder=3,
            label="share of the users",
        )  # fmt: skip
        ax.set_xticks(x, order, fontsize=MIN_FONT_PT)
        ax.tick_params(axis="y", labelsize=MIN_FONT_PT)
        ax.set_title(measure if len(datasets) == 1 else f"{dataset}: {measure}", fontsize=7)
        if ax in axes[:, 0]:
            ax.set_ylabel("% of the measure", fontsize=7)
        if ax in axes[-1, :] or ax is axes.flat[len(panels) - 1]:
            ax.set_xlabel("activity group (Q1 = least active)", fontsize=MIN_FONT_PT)
    handles.append(line)
    fig.legend(
        handles, [h.get_label() for h in handles], loc="outside lower center",
        ncol=min(len(handles), 7), frameon=False, fontsize=7,
    )  # fmt: skip
    return fig
