"""Steps of the figures stage (workflow/rules/figures.smk): each figure from its tables,
PDF and PNG, drawn with the config's ``plots:`` style. Every figure rule that runs
scripts/figure.py has one step, :func:`draw`, which draws the figures its drawing module
declares for it (userfair.workflow.figure_registry); fig_groups, a figure per dataset whose
reading needs the run's other tables, has its own."""

from __future__ import annotations

import logging

import pandas as pd

from userfair.files.io import atomic_path
from userfair.workflow import (
    analysis_figures,
    figure_registry,
    figure_style,
    gamma_figures,
    group_figure,
    group_reading,
    plots,
    replicate_figure,
    variant_figures,
)
from userfair.workflow import models as models_registry
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)

#: The modules that declare the figures :func:`draw` draws (imported, their declarations
#: are in figure_registry.FIGURES); a new drawing module joins here.
DRAWING_MODULES = (plots, gamma_figures, analysis_figures, replicate_figure, variant_figures)


def _written(*paths: Path) -> None:
    log.info("%s written", ", ".join(map(str, paths)))


def draw(rule: str, inputs: dict, outputs: dict, params: dict) -> None:
    """Every figure rule that runs scripts/figure.py: each figure the drawing modules
    declare for ``rule`` (userfair.workflow.figure_registry.figure): its tables read from
    the rule's named ``inputs`` as declared, drawn with the ``style`` param and the params
    it names, saved as its ``[PART_]pdf`` and ``[PART_]png`` outputs, and its reading
    written to the ``[PART_]reading`` output when the rule has one."""
    look = figure_style.Style(**params["style"])
    for declared in figure_registry.of(rule):
        tables = [read(inputs[name]) for name, read in declared.reads.items()]
        taken = {name: params[name] for name in declared.params}
        pdf, png = outputs[declared.output("pdf")], outputs[declared.output("png")]
        figure_style.save(declared.draw(*tables, look, **taken), pdf, png, look)
        reading = outputs.get(declared.output("reading"))
        if declared.reading is not None and reading is not None:
            _write_text(reading, declared.reading(*tables))
        _written(pdf, png)


def _write_text(path: Path | None, text: str) -> None:
    """``text`` -> ``path`` (a figure's reading), atomically; nothing without a path."""
    if path is not None:
        with atomic_path(path) as tmp:
            tmp.write_text(text)


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
