"""The figures of the PUF variants' analysis (docs/analyses.md#variants), in the look of
:mod:`userfair.workflow.figure_style`: the Kendall tau heatmap between the variants (Fig. 1's
drawing, :func:`userfair.workflow.plots.agreement_figure`), Fig. 3's observed similarities
placed on its synthetic curves, and Fig. 4 with each similarity's own values
(:func:`userfair.workflow.plots.extreme_figure`, one row per dataset and similarity); each
declared as a part of rule fig_variants (userfair.workflow.figure_registry) with its
reading of the run's numbers.
"""

from __future__ import annotations

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import pandas as pd  # noqa: E402

from userfair.workflow import plots  # noqa: E402
from userfair.workflow.figure_registry import csv, figure, stacked  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    Style,
    check_columns,
    honest_span,
    legend_outside,
    model_colours,
)
from userfair.workflow.variant_analysis import (  # noqa: E402
    TAU_COLUMNS,
    extreme_reading,
    puf_variants,
    reading,
    reading_text,
    similarity_reading,
    tau_summary,
)

#: Fig. 3's measures that read the similarity (SD does not).
SIMILARITY_PANELS = ("PUF-P", "PUF-NDCG", "UF")
MARKERS = "osD^vP*"


#: The title of each figure's reading in the report.
SEEN = "What this run shows"


def tau_words(tau: pd.DataFrame) -> str:
    """The tau heatmap's reading (:func:`userfair.workflow.variant_analysis.reading`)."""
    return reading_text(reading(tau_summary(tau)), SEEN)


@figure("fig_variants", part="tau", reads={"tau": csv}, reading=tau_words)
def tau_axes(tau: pd.DataFrame, style: Style):
    """Kendall's tau-b between the model orderings of the PUF variants (``variants_tau.csv``),
    one heatmap per dataset; cells with the bootstrap interval and a star when it excludes 0
    when the table has intervals (``uncertainty.resamples`` > 0); under the panels the
    run's reading (:func:`userfair.workflow.variant_analysis.reading`), one line per dataset
    and kind of change."""
    check_columns(tau, list(TAU_COLUMNS), "variants tau")
    names = puf_variants(list(dict.fromkeys(tau["measure_a"])))
    intervals = tau if np.isfinite(tau["low"]).any() else None
    fig = plots.agreement_axes(tau, style, names, intervals)
    # the run's reading, from its numbers (variant_analysis.reading), under the panels
    fig.supxlabel("\n".join(reading(tau_summary(tau))), fontsize=7, ha="left", x=0.02)
    return fig


def similarity_words(sampled: pd.DataFrame, observed: pd.DataFrame) -> str:
    """Fig. 3 with each similarity's reading
    (:func:`userfair.workflow.variant_analysis.similarity_reading`)."""
    return reading_text(similarity_reading(observed, sampled), SEEN)


@figure(
    "fig_variants",
    part="similarity",
    reads={"similarity": stacked, "observed": stacked},
    reading=similarity_words,
)
def similarity_axes(sampled: pd.DataFrame, observed: pd.DataFrame, style: Style):
    """Fig. 3 with each similarity: per dataset (row) and measure of
    :data:`SIMILARITY_PANELS` (column), the measure on the synthetic similarities against
    their skewness (``similarity.parquet``, grey) and, for each similarity of
    ``similarity_variants.parquet``, its observed value at its skewness (one marker and
    colour per similarity, a dotted line at its skewness)."""
    check_columns(sampled, ["dataset", "distribution", "skewness", "measure", "value"], "Fig. 3")
    check_columns(
        observed, ["dataset", "similarity", "skewness", "measure", "value"], "Fig. 3 variants"
    )
    style.apply()
    datasets = list(dict.fromkeys(observed["dataset"]))
    labels = list(dict.fromkeys(observed["similarity"]))
    colours = dict(zip(labels, model_colours(len(labels), style.palette)))
    width = style.column_width_in * 0.75
    fig, axes = plots.plt.subplots(
        len(datasets), len(SIMILARITY_PANELS), squeeze=False, layout="constrained",
        figsize=(width * len(SIMILARITY_PANELS), width * 0.85 * len(datasets) + 0.5),
    )  # fmt: skip
    for row, dataset in enumerate(datasets):
        base = sampled[(sampled["dataset"] == dataset) & (sampled["distribution"] != "observed")]
        mine = observed[observed["dataset"] == dataset]
        for col, measure in enumerate(SIMILARITY_PANELS):
            ax = axes[row, col]
            curve = base[base["measure"] == measure].sort_values("skewness")
            ax.plot(curve["skewness"], curve["value"], color="grey", lw=1, marker=".",
                    label="synthetic (Weibull, normal)")  # fmt: skip
            for label, marker in zip(labels, MARKERS):
                point = mine[(mine["similarity"] == label) & (mine["measure"] == measure)]
                if point.empty:
                    continue
                x, y = float(point["skewness"].iloc[0]), float(point["value"].iloc[0])
                ax.axvline(x, color=colours[label], lw=0.6, ls=":")
                ax.plot([x], [y], marker=marker, ls="", color=colours[label], label=label)
            ax.set_title(f"{dataset}: {measure}", fontsize=8)
            ax.set_xlabel("skewness of user similarity" if row == len(datasets) - 1 else "")
            honest_span(ax)
    handles, names = axes[0, 0].get_legend_handles_labels()
    legend_outside(fig, handles, names, ncol=min(4, len(names)))
    return fig


def extreme_words(extreme: pd.DataFrame) -> str:
    """Fig. 4 with each similarity's reading
    (:func:`userfair.workflow.variant_analysis.extreme_reading`)."""
    return reading_text(extreme_reading(extreme), SEEN)


@figure("fig_variants", part="extreme", reads={"extreme": stacked}, reading=extreme_words)
def extreme_axes(extreme: pd.DataFrame, style: Style):
    """Fig. 4 with each similarity (``extreme_variants.parquet``): Fig. 4's panels, one row
    per dataset and similarity, the similarity's own normalised values assigned MostFair
    and MostUnfair."""
    check_columns(extreme, ["dataset", "similarity"], "Fig. 4 variants")
    rows = extreme.assign(dataset=extreme["dataset"] + ", " + extreme["similarity"])
    return plots.extreme_axes(rows.drop(columns="similarity"), style)
