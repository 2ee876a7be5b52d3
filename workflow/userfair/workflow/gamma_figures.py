"""The appendix figures of gamma (docs/method.md#analyses), in the style of
``userfair.workflow.plots``: UF and PUF with sim_UF for every gamma, on the real runs
(rule fig_gamma's ``models`` part) and on the lists of Fig. 2 (its ``relevance`` part),
each declared for its rule (userfair.workflow.figure_registry) with its reading
(userfair.workflow.figure_reading)."""

from __future__ import annotations

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("matplotlib", "seaborn")
require("workflow", NEEDS, __name__)

import matplotlib  # noqa: E402  (after the check, which names the extra to install)

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from userfair.workflow.figure_reading import (  # noqa: E402
    gamma_models_reading,
    gamma_relevance_reading,
)
from userfair.workflow.figure_registry import figure, stacked  # noqa: E402
from userfair.workflow.figure_style import (  # noqa: E402
    MIN_FONT_PT,
    PAGE_WIDTH_IN,
    Style,
    check_columns,
    honest_span,
    model_styles,
    percent,
    save,
)
from userfair.workflow.plots import PERCENT_LABEL  # noqa: E402
from userfair.workflow.tables import model_label  # noqa: E402

GAMMA_MEASURES = ["UF", "PUF-P", "PUF-NDCG"]


def _gamma_grid(datasets: list[str], height: float):
    """Rows = datasets, columns = :data:`GAMMA_MEASURES`, drawn for a page."""
    return plt.subplots(
        len(datasets), len(GAMMA_MEASURES), squeeze=False, layout="constrained",
        figsize=(PAGE_WIDTH_IN, height * len(datasets) + 0.7),
    )  # fmt: skip


def _panel_text(ax, dataset: str, measure: str, datasets: list[str], first: bool) -> None:
    ax.set_title(f"{dataset}: {measure}" if len(datasets) > 1 else measure,
                 fontsize=MIN_FONT_PT + 1)  # fmt: skip
    ax.set_ylabel("score" if first else "", fontsize=MIN_FONT_PT + 1)
    ax.set_xlabel("")
    ax.tick_params(labelsize=MIN_FONT_PT)


def gamma_models_figure(gamma: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """The gamma figure of the real runs (:func:`gamma_models_axes`), saved."""
    save(gamma_models_axes(gamma, style), pdf_path, png_path, style)


@figure("fig_gamma", part="models", reads={"models": stacked}, reading=gamma_models_reading)
def gamma_models_axes(gamma: pd.DataFrame, style: Style) -> plt.Figure:
    """UF and PUF with sim_UF for every gamma on the real runs: x = gamma, one line a model
    in its colour and marker (:func:`figure_style.model_styles`, the models in the frame's
    order, as in every figure of the run); rows = datasets, columns = measures, drawn for a
    page (:data:`PAGE_WIDTH_IN`)."""
    check_columns(gamma, ["dataset", "model", "gamma", "measure", "value"], "gamma (models)")
    style.apply()
    gamma = gamma.assign(model=gamma["model"].map(model_label))
    models = list(dict.fromkeys(gamma["model"]))
    looks = model_styles(models)
    datasets = list(dict.fromkeys(gamma["dataset"]))
    fig, axes = _gamma_grid(datasets, 1.7)
    gammas = sorted(gamma["gamma"].unique())
    for row, dataset in enumerate(datasets):
        for col, measure in enumerate(GAMMA_MEASURES):
            ax = axes[row, col]
            part = gamma[(gamma["dataset"] == dataset) & (gamma["measure"] == measure)]
            for model in models:
                series = part[part["model"] == model].sort_values("gamma")
                colour, marker = looks[model]
                ax.plot(series["gamma"], series["value"], color=colour, marker=marker,
                        markersize=3, lw=1, label=model)  # fmt: skip
            ax.set_xticks(gammas, [f"{g:g}" for g in gammas])
            _panel_text(ax, dataset, measure, datasets, col == 0)
            honest_span(ax)
    fig.supxlabel("$\\gamma$ (weight of the Jaccard similarity in sim$_{UF}$)",
                  fontsize=MIN_FONT_PT + 1)  # fmt: skip
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=min(len(models), 7),
               frameon=False, fontsize=MIN_FONT_PT, handlelength=1.5)  # fmt: skip
    return fig


def gamma_relevance_figure(gamma: pd.DataFrame, style: Style, pdf_path, png_path) -> None:
    """The gamma figure of the Fig. 2 lists (:func:`gamma_relevance_axes`), saved."""
    save(gamma_relevance_axes(gamma, style), pdf_path, png_path, style)


@figure(
    "fig_gamma", part="relevance", reads={"relevance": stacked}, reading=gamma_relevance_reading
)
def gamma_relevance_axes(gamma: pd.DataFrame, style: Style) -> plt.Figure:
    """UF and PUF with sim_UF for every gamma on the Fig. 2 lists: x = % users with zero
    relevance, one line a gamma (a colour and marker of the shared style each); rows =
    datasets, columns = measures, drawn for a page (:data:`PAGE_WIDTH_IN`)."""
    check_columns(gamma, ["dataset", "share", "gamma", "measure", "value"], "gamma (relevance)")
    style.apply()
    gamma = gamma.assign(percent=percent(gamma["share"]))
    gammas = sorted(gamma["gamma"].unique())
    looks = model_styles([f"{g:g}" for g in gammas])
    datasets = list(dict.fromkeys(gamma["dataset"]))
    fig, axes = _gamma_grid(datasets, 1.5)
    for row, dataset in enumerate(datasets):
        for col, measure in enumerate(GAMMA_MEASURES):
            ax = axes[row, col]
            part = gamma[(gamma["dataset"] == dataset) & (gamma["measure"] == measure)]
            for value in gammas:
                series = part[part["gamma"] == value].sort_values("percent")
                colour, marker = looks[f"{value:g}"]
                ax.plot(series["percent"], series["value"], color=colour, marker=marker,
                        markersize=3, lw=1, label=f"{value:g}")  # fmt: skip
            ax.set_xticks([0, 50, 100])
            _panel_text(ax, dataset, measure, datasets, col == 0)
            honest_span(ax)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, title="$\\gamma$", loc="outside upper center",
               ncol=len(labels), frameon=False, fontsize=MIN_FONT_PT,
               title_fontsize=MIN_FONT_PT + 1)  # fmt: skip
    fig.supxlabel(PERCENT_LABEL, fontsize=MIN_FONT_PT + 1)
    return fig
