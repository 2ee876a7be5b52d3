"""The group figure of one dataset (results/figures/groups/D.png): each model placed by its
individual unfairness (x, e.g. PUF-P-Cos) and its group unfairness (y, e.g. UserMAD-P), one
panel per grouping, both bootstrap intervals drawn. Drawn for a page
(:data:`~userfair.workflow.figure_style.PAGE_WIDTH_IN`, two or three panels a row; one
grouping: a column, :data:`~userfair.workflow.figure_style.COLUMN_WIDTH_IN`), each
model in its colour and marker of every figure of the run
(:func:`~userfair.workflow.figure_style.model_styles`) and named once in a legend below the
panels, so that points, intervals and names never collide; the intervals are thin lines
behind the points. Declared as rule fig_groups's figure, one per dataset
(userfair.workflow.figure_registry), with its reading of the run's tables
(:func:`groups_reading`, userfair.workflow.group_reading), the report's caption.
"""

from __future__ import annotations

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import matplotlib  # noqa: E402  (after the check, which names the extra to install)

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from userfair.workflow import group_reading, tables  # noqa: E402
from userfair.workflow import models as models_registry  # noqa: E402
from userfair.workflow.figure_registry import csv, figure  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    COLUMN_WIDTH_IN,
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    Style,
    model_styles,
)

#: Panels a row, and the height of a row of panels (inches).
PER_ROW, ROW_HEIGHT_IN = 3, 2.2
#: Rule fig_groups's measures: the group one (y) and the individual one (x).
MEASURE, AGAINST = "UserMAD-P", "PUF-P-Cos"


def groups_axes(
    individual: pd.DataFrame,
    group: pd.DataFrame,
    models: list[str],
    style: Style,
    *,
    dataset: str,
    measure: str,
    against: str,
) -> plt.Figure:
    """``individual``: a row per model label (index) with value, low, high of ``against``;
    ``group``: rows of model label (``model``), grouping (``by``), value, low, high of
    ``measure``; ``models``: the labels in the run's order (their colours and markers)."""
    style.apply()
    specs = list(dict.fromkeys(group["by"])) or ["(no grouping)"]
    ncols = 2 if len(specs) in (2, 4) else min(PER_ROW, len(specs))  # no panel left alone
    nrows = -(-len(specs) // ncols)
    looks = model_styles(models)
    width = COLUMN_WIDTH_IN if len(specs) == 1 else PAGE_WIDTH_IN  # one grouping: a column
    per_row = 3 if len(specs) == 1 else 7  # legend entries a row
    ncol = min(len(models), per_row) if len(models) <= 7 else -(-len(models) // 2)
    ncol = min(ncol, per_row if len(specs) == 1 else ncol)
    legend_rows = -(-len(models) // ncol)
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, layout="constrained",
        figsize=(width, ROW_HEIGHT_IN * nrows + 0.5 + 0.15 * legend_rows),
    )  # fmt: skip
    for ax in axes.flat[len(specs) :]:
        ax.set_visible(False)
    for ax, spec in zip(axes.flat, specs):
        rows = group[group["by"] == spec].set_index("model")
        for model in models:
            if model not in rows.index or model not in individual.index:
                continue
            colour, marker = looks[model]
            xv, yv = individual.loc[model], rows.loc[model]
            # the intervals as thin lines behind the point: a point estimate may lie outside
            # its percentile interval (UserMAD is an absolute value, docs/method.md#groups)
            line = {"color": colour, "lw": 0.6, "alpha": 0.7, "zorder": 1}
            ax.hlines(yv["value"], xv["low"], xv["high"], **line)
            ax.vlines(xv["value"], yv["low"], yv["high"], **line)
            ax.plot(xv["value"], yv["value"], marker=marker, color=colour, ms=5,
                    mec="white", mew=0.5, ls="none", zorder=3, label=model)  # fmt: skip
        ax.set_title(f"groups: {spec}", fontsize=MIN_FONT_PT + 1)
        ax.set_xlabel(f"{against} (individual)", fontsize=MIN_FONT_PT + 1)
        ax.tick_params(labelsize=MIN_FONT_PT)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.yaxis.set_major_locator(plt.MaxNLocator(5))
    for row in axes:
        row[0].set_ylabel(f"{measure} (group)", fontsize=MIN_FONT_PT + 1)
    handles = [
        Line2D([], [], marker=looks[m][1], color=looks[m][0], ls="none", ms=5, mec="white")
        for m in models
    ]
    fig.legend(handles, models, loc="outside lower center", ncol=ncol, frameon=False,
               fontsize=MIN_FONT_PT + 1)  # fmt: skip
    fig.suptitle(f"{dataset}: group against individual unfairness (lower is fairer)",
                 fontsize=MIN_FONT_PT + 2)  # fmt: skip
    return fig


def group_figure(
    groups: pd.DataFrame,
    intervals: pd.DataFrame,
    models: list[str],
    style: Style,
    *,
    dataset: str,
    measure: str,
    against: str,
) -> plt.Figure:
    """The figure of ``dataset`` from the run's tables: ``groups`` (groups.csv: models by
    name, ``measure`` per grouping) and ``intervals`` (intervals.csv: models by label, the
    individual measure ``against``); ``models``: the labels in the run's order. The rows of
    the dataset and the two measures, joined on the model labels, drawn by
    :func:`groups_axes` (rule fig_groups)."""
    group = groups[(groups["dataset"] == dataset) & (groups["measure"] == measure)]
    individual = intervals[(intervals["dataset"] == dataset) & (intervals["measure"] == against)]
    # intervals.csv names models by their label (U-KNN), groups.csv by name: join on labels
    x = tables.label_models(individual).set_index("model")
    return groups_axes(
        x, tables.label_models(group), models, style,
        dataset=dataset, measure=measure, against=against,
    )  # fmt: skip


def groups_reading(
    groups: pd.DataFrame, intervals: pd.DataFrame, group_tests: pd.DataFrame | None,
    tests: pd.DataFrame, taus: pd.DataFrame, *, dataset: str, models: list[str],
    replicates: int = 1, measure: str = MEASURE, against: str = AGAINST,
) -> str:  # fmt: skip
    """The group figure's reading (rule fig_groups, userfair.workflow.group_reading) from
    the tables of the run: the paired comparisons (``group_tests``: groups_significance.csv,
    ``tests``: significance.csv; with ``replicates`` > 1 ``tests`` is
    significance_replicates.csv, over replicates and users, and holds the group rows too)
    and the tau (``taus``: groups_agreement.csv); ``models`` by name."""
    individual = tests
    if replicates > 1:  # significance_replicates.csv: "UserMAD-P (activity:0.05)" rows
        by = individual["measure"].str.extract(r" \((.*)\)$", expand=False)
        grouped = individual[by.notna()].assign(
            by=by[by.notna()],
            measure=individual["measure"][by.notna()].str.replace(r" \(.*\)$", "", regex=True),
        )
        individual, source = (
            individual[by.isna()],
            f"{replicates} training replicates and the users",
        )
    else:
        grouped, source = group_tests, "the bootstrap resamples of the users"
    return group_reading.reading(
        dataset, [models_registry.label(m) for m in models], grouped, individual, taus,
        measure=measure, against=against, source=source,
        tau_source="the bootstrap resamples of replicate 0's users",
    )  # fmt: skip


@figure(
    "fig_groups",
    reads={"groups": csv, "intervals": csv, "group_tests": csv, "tests": csv, "taus": csv},
    params=("models", "replicates"),
    wildcards=("dataset",),
    reading=groups_reading,
)
def groups_of_run(
    groups: pd.DataFrame, intervals: pd.DataFrame, group_tests: pd.DataFrame,
    tests: pd.DataFrame, taus: pd.DataFrame, style: Style, *, dataset: str,
    models: list[str], replicates: int = 1, measure: str = MEASURE, against: str = AGAINST,
) -> plt.Figure:  # fmt: skip
    """Rule fig_groups: each model of ``dataset`` placed by its individual unfairness
    (``against``, x) and its group unfairness (``measure``, y; one panel per grouping),
    with both bootstrap intervals (``intervals``: the uncertainty stage's intervals.csv;
    the rule runs only with the bootstrap on); ``models`` by name. The comparisons and the
    tau are its reading's (:func:`groups_reading`)."""
    labels = [models_registry.label(m) for m in models]
    return group_figure(
        groups, intervals, labels, style, dataset=dataset, measure=measure, against=against
    )
