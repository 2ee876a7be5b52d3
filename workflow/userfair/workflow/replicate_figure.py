"""The figure of the replicates (docs/method.md#replicates): per dataset and measure, each
model's per-replicate values as dots beside its mean and interval over training and users
(results/tables/replicates.csv and scores_replicates.csv), in the style of
``userfair.workflow.plots``."""

from __future__ import annotations

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import pandas as pd  # noqa: E402

from userfair.workflow.figure_registry import csv, figure  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    model_styles,
    panel_grid,
)
from userfair.workflow.plots import Style, save  # noqa: E402  (plots sets Agg)
from userfair.workflow.tables import model_label, model_names  # noqa: E402

#: The measures drawn unless others are given: one per family of the paper's Table 2.
MEASURES = ["NDCG", "Gini-NDCG", "ME", "MME", "UF", "PUF-P-Cos"]


def replicates_figure(
    values: pd.DataFrame,
    scores: pd.DataFrame,
    models: list[str],
    style: Style,
    pdf_path,
    png_path,
    measures=MEASURES,
) -> None:
    """:func:`replicates_axes`, saved as PDF and PNG."""
    save(replicates_axes(values, scores, models, style, measures), pdf_path, png_path, style)


@figure("fig_replicates", reads={"values": csv, "scores": csv}, params=("models",))
def replicates_of_run(
    values: pd.DataFrame, scores: pd.DataFrame, style: Style, *, models: list[str]
):
    """Rule fig_replicates' figure (:func:`replicates_axes`) of replicates.csv and
    scores_replicates.csv."""
    return replicates_axes(values, scores, models, style)


def replicates_axes(
    values: pd.DataFrame, scores: pd.DataFrame, models: list[str], style: Style, measures=MEASURES
):
    """One panel per (dataset, measure), models on the x axis: the replicates' values as
    small dots (left of the model's tick), the mean over the replicates with its interval
    over both sources as a dot and bar (right). ``values``: dataset, model, replicate,
    measure, value; ``scores``: dataset, model, measure, value, low, high."""
    for frame, columns, what in (
        (values, ["dataset", "model", "replicate", "measure", "value"], "replicates.csv"),
        (scores, ["dataset", "model", "measure", "value", "low", "high"], "scores_replicates"),
    ):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"{what}: missing columns {missing}; have {list(frame.columns)}")
    values, scores = model_names(values), model_names(scores)  # the tables label models
    style.apply()
    datasets = list(dict.fromkeys(scores["dataset"]))
    panels = [(d, m) for d in datasets for m in measures]
    columns = min(3, len(measures))
    fig, axes = panel_grid(len(panels), PAGE_WIDTH_IN / columns, 2.0, max_columns=columns)
    looks = model_styles([model_label(m) for m in models])
    x = np.arange(len(models))
    for ax, (dataset, measure) in zip(axes.flat, panels):
        dots = values[(values["dataset"] == dataset) & (values["measure"] == measure)]
        for i, model in enumerate(models):
            own = dots[dots["model"] == model]["value"].to_numpy(float)
            ax.plot(np.full(len(own), i - 0.15), own, ".", ms=3, color="0.45", alpha=0.8)
        part = scores[(scores["dataset"] == dataset) & (scores["measure"] == measure)]
        part = part.set_index("model").reindex(models)
        mean = part["value"].to_numpy(float)
        bars = np.vstack([mean - part["low"].to_numpy(float), part["high"].to_numpy(float) - mean])
        for i, model in enumerate(models):  # each model in its colour and marker
            colour, marker = looks[model_label(model)]
            ax.errorbar(x[i] + 0.15, mean[i], yerr=np.abs(bars[:, i : i + 1]), fmt=marker,
                        ms=3, capsize=1.5, lw=0.8, color=colour)  # fmt: skip
        ax.set_xticks(x, [model_label(m) for m in models], rotation=90, fontsize=MIN_FONT_PT)
        ax.set_xlim(-0.5, len(models) - 0.5)
        ax.tick_params(axis="y", labelsize=MIN_FONT_PT)
        ax.set_title(measure if len(datasets) == 1 else f"{dataset}: {measure}", fontsize=7)
    return fig
