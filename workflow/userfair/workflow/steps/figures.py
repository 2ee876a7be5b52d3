"""Steps of the figures stage (workflow/rules/figures.smk): each figure from its tables
(userfair.workflow.plots), PDF and PNG, drawn with the config's ``plots:`` style."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from userfair.files.io import atomic_path, read_stacked_parquet
from userfair.measures import FAIR, OPT_IN, higher_is_better
from userfair.workflow import (
    analysis_figures,
    figure_reading,
    figure_style,
    group_figure,
    group_reading,
    plots,
    replicate_figure,
    variant_analysis,
    variant_figures,
)
from userfair.workflow import models as models_registry
from userfair.workflow.steps import Path, only, read_optional_csv

log = logging.getLogger(__name__)


def _written(*paths: Path) -> None:
    log.info("%s written", ", ".join(map(str, paths)))


def fig_agreement(
    data: Path, intervals: Sequence[Path], pdf: Path, png: Path, *, style: dict,
    groups: Sequence[Path] = (), replicates: int = 1,
) -> None:  # fmt: skip
    """Rule fig_agreement: Fig. 1 (userfair.workflow.plots.agreement_figure), the Kendall tau
    heatmap per dataset, with the intervals of tau when the workflow computes them: over
    the users (``agreement_ci.csv``), or over replicates and users when ``replicates`` > 1
    (``agreement_replicates.csv``); with the groups stage on (``groups``:
    ``groups_agreement.csv``) a second panel per dataset, the group measures against the
    individual ones."""
    interval_file = only(intervals)
    plots.agreement_figure(
        pd.read_csv(data), figure_style.Style(**style), pdf, png,
        intervals=pd.read_csv(interval_file) if interval_file else None,
        groups=read_optional_csv(only(groups)),
        source="replicates and users" if replicates > 1 else "users",
    )  # fmt: skip
    _written(pdf, png)


def fig_relevance(
    data: Sequence[Path], pdf: Path, png: Path, reading: Path | None = None, *, style: dict
) -> None:
    """Rule fig_relevance: Fig. 2 (userfair.workflow.plots.relevance_figure) and, in
    ``reading``, what it shows in words (userfair.workflow.figure_reading, the caption's)."""
    frame = read_stacked_parquet(data)
    plots.relevance_figure(frame, figure_style.Style(**style), pdf, png)
    if reading is not None:
        with atomic_path(reading) as tmp:
            tmp.write_text(figure_reading.relevance_reading(frame))
    _written(pdf, png)


def _write_text(path: Path | None, text: str) -> None:
    """``text`` -> ``path`` (a figure's reading), atomically; nothing without a path."""
    if path is not None:
        with atomic_path(path) as tmp:
            tmp.write_text(text)


def fig_similarity(
    data: Sequence[Path], pdf: Path, png: Path, reading: Path | None = None, *, style: dict
) -> None:
    """Rule fig_similarity: Fig. 3 (userfair.workflow.plots.similarity_figure) and, in
    ``reading``, what it shows in words (figure_reading.similarity_reading, the caption's)."""
    frame = read_stacked_parquet(data)
    plots.similarity_figure(frame, figure_style.Style(**style), pdf, png)
    _write_text(reading, figure_reading.similarity_reading(frame))
    _written(pdf, png)


def fig_extreme(
    data: Sequence[Path], pdf: Path, png: Path, reading: Path | None = None, *, style: dict
) -> None:
    """Rule fig_extreme: Fig. 4 (userfair.workflow.plots.extreme_figure) and, in
    ``reading``, what it shows in words (figure_reading.extreme_reading)."""
    frame = read_stacked_parquet(data)
    plots.extreme_figure(frame, figure_style.Style(**style), pdf, png)
    _write_text(reading, figure_reading.extreme_reading(frame))
    _written(pdf, png)


def fig_gamma(
    models: Sequence[Path], relevance: Sequence[Path], models_pdf: Path, models_png: Path,
    relevance_pdf: Path, relevance_png: Path, models_reading: Path | None = None,
    relevance_reading: Path | None = None, *, style: dict,
) -> None:  # fmt: skip
    """Rule fig_gamma: the appendix figures (userfair.workflow.plots.gamma_models_figure and
    gamma_relevance_figure), UF and PUF for every gamma, and their readings
    (figure_reading.gamma_models_reading and gamma_relevance_reading)."""
    look = figure_style.Style(**style)
    on_models, on_lists = read_stacked_parquet(models), read_stacked_parquet(relevance)
    plots.gamma_models_figure(on_models, look, models_pdf, models_png)
    plots.gamma_relevance_figure(on_lists, look, relevance_pdf, relevance_png)
    _write_text(models_reading, figure_reading.gamma_models_reading(on_models))
    _write_text(relevance_reading, figure_reading.gamma_relevance_reading(on_lists))
    _written(models_pdf, models_png, relevance_pdf, relevance_png)


def fig_intervals(intervals: Path, pdf: Path, png: Path, *, style: dict, models: list[str]) -> None:
    """Rule fig_intervals: every Fair measure per model with its bootstrap interval
    (userfair.workflow.analysis_figures.intervals_figure); the opt-in Fair measures too
    when ``intervals.csv`` holds them (measures.relevance, measures.similarities)."""
    frame = pd.read_csv(intervals)
    held = set(frame["measure"])
    opt_in = tuple(m for m in OPT_IN if m in held and not higher_is_better(m))
    analysis_figures.intervals_figure(
        frame, FAIR + opt_in, models, figure_style.Style(**style), pdf, png
    )
    _written(pdf, png)


def fig_who(table: Path, pdf: Path, png: Path, *, style: dict, models: list[str]) -> None:
    """Rule fig_who: each Fair measure's share by activity group per model, with intervals
    (userfair.workflow.analysis_figures.who_figure)."""
    frame = pd.read_csv(table, dtype={"group": str})
    analysis_figures.who_figure(frame, models, figure_style.Style(**style), pdf, png)
    _written(pdf, png)


def fig_replicates(
    values: Path, scores: Path, pdf: Path, png: Path, *, style: dict, models: list[str]
) -> None:
    """Rule fig_replicates: each model's per-replicate values beside its interval over
    replicates and users (userfair.workflow.replicate_figure.replicates_figure of
    replicates.csv and scores_replicates.csv)."""
    replicate_figure.replicates_figure(
        pd.read_csv(values), pd.read_csv(scores), models, figure_style.Style(**style), pdf, png
    )


def fig_groups(
    groups_csv: Path, intervals_csv: Path, pdf: Path, png: Path, *, dataset: str,
    style: dict, models: list[str], measure: str = "UserMAD-P", against: str = "PUF-P-Cos",
    reading: Path | None = None, group_tests: Path | None = None, tests: Path | None = None,
    taus: Path | None = None, replicates: int = 1,
) -> None:  # fmt: skip
    """Rule fig_groups: each model of ``dataset`` placed by its individual unfairness
    (``against``, x) and its group unfairness (``measure``, y; one panel per grouping),
    with both bootstrap intervals (``intervals_csv``: the uncertainty stage's
    ``intervals.csv``; the rule runs only with the bootstrap on). With ``reading``: what
    the figure shows in words (userfair.workflow.group_reading, the report's caption) from
    the paired comparisons (``group_tests``: groups_significance.csv, ``tests``:
    significance.csv; with ``replicates`` > 1 both are significance_replicates.csv, over
    replicates and users) and the tau (``taus``: groups_agreement.csv). Drawn by
    userfair.workflow.group_figure.group_figure."""
    if reading is not None:
        _write_reading(reading, dataset, models, group_tests, tests, taus, measure, against,
                       replicates)  # fmt: skip
    look = figure_style.Style(**style)
    fig = group_figure.group_figure(
        pd.read_csv(groups_csv), pd.read_csv(intervals_csv),
        [models_registry.label(m) for m in models], look, dataset=dataset, measure=measure,
        against=against,
    )  # fmt: skip
    figure_style.save(fig, pdf, png, look)
    _written(pdf, png)


def _write_reading(
    path: Path, dataset: str, models: list[str], group_tests: Path, tests: Path, taus: Path,
    measure: str, against: str, replicates: int,
) -> None:  # fmt: skip
    """The group figure's reading (rule fig_groups) from the tables of the run."""
    individual = pd.read_csv(tests)
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
        grouped, source = pd.read_csv(group_tests), "the bootstrap resamples of the users"
    text = group_reading.reading(
        dataset, [models_registry.label(m) for m in models], grouped, individual,
        pd.read_csv(taus), measure=measure, against=against, source=source,
        tau_source="the bootstrap resamples of replicate 0's users",
    )  # fmt: skip
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def fig_variants(
    tau: Path, similarity: Sequence[Path], observed: Sequence[Path], extreme: Sequence[Path],
    tau_pdf: Path, tau_png: Path, similarity_pdf: Path, similarity_png: Path,
    extreme_pdf: Path, extreme_png: Path, tau_reading: Path, similarity_reading: Path,
    extreme_reading: Path, *, style: dict,
) -> None:  # fmt: skip
    """Rule fig_variants (opt-in measures on): the Kendall tau heatmap between the PUF
    variants (``variants_tau.csv``), Fig. 3 with each similarity (``similarity.parquet``'s
    synthetic curves, ``similarity_variants.parquet``'s observed values) and Fig. 4 with
    each similarity (``extreme_variants.parquet``), userfair.workflow.variant_figures; and
    each figure's reading of the run's numbers as reStructuredText, which its report
    caption includes (userfair.workflow.variant_analysis: reading, similarity_reading,
    extreme_reading)."""
    look = figure_style.Style(**style)
    table = pd.read_csv(tau)
    sampled, observed = read_stacked_parquet(similarity), read_stacked_parquet(observed)
    extremes = read_stacked_parquet(extreme)
    variant_figures.tau_figure(table, look, tau_pdf, tau_png)
    variant_figures.similarity_figure(sampled, observed, look, similarity_pdf, similarity_png)
    variant_figures.extreme_figure(extremes, look, extreme_pdf, extreme_png)
    variant_analysis.write_reading(
        variant_analysis.reading(variant_analysis.tau_summary(table)),
        tau_reading,
        "What this run shows",
    )
    variant_analysis.write_reading(
        variant_analysis.similarity_reading(observed, sampled),
        similarity_reading,
        "What this run shows",
    )
    variant_analysis.write_reading(
        variant_analysis.extreme_reading(extremes), extreme_reading, "What this run shows"
    )
    _written(tau_pdf, tau_png, similarity_pdf, similarity_png, extreme_pdf, extreme_png)
