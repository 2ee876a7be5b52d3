"""Steps of the reproduction stage (workflow/rules/reproduction.smk): paper_gap."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd

from userfair.files.io import write_csv
from userfair.workflow import analysis_figures, figure_style, reproduction, steps, tables

log = logging.getLogger(__name__)


def paper_gap(
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    datasets: list[str],
    models: list[str],
    custom_datasets: Mapping | None,
    preprocessing: Mapping,
    settings: Mapping,
    run: Mapping,
    level: float,
    resamples: int,
    style: Mapping,
    unpublished: Mapping[str, str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Rule paper_gap: :func:`userfair.workflow.reproduction.paper_gap` of the named inputs
    ("measures:D/M",
    "stats:D", "resamples:D/M"), written to the outputs ``csv`` (the cells), ``tau``,
    ``table1``, ``verdicts`` and the figure ``pdf``, ``png``; every verdict line logged.
    ``run``: the grid file, its points over all models and the epochs (the figure's note);
    ``settings``: the measures' k, epsilon, envy_utility and gamma (:func:`settings_note`).
    Without the outputs ``pdf`` and ``png`` (no dataset has published numbers: the figure
    would be empty) nothing is drawn. ``unpublished``: why each other dataset has no
    published numbers (the report's caption; logged)."""
    logging.getLogger("fontTools").setLevel(logging.WARNING)  # the PDF's font subsetting

    def named(prefix: str) -> dict[str, str]:
        return steps.named(inputs, prefix=prefix)

    result = reproduction.paper_gap(
        datasets,
        models,
        named("measures:"),
        named("stats:"),
        named("resamples:") if resamples else None,
        custom_datasets,
        preprocessing,
        level,
    )
    note = reproduction.settings_note(settings)
    verdicts = result["verdicts"]
    if note:
        verdicts.loc[verdicts["published"], "line"] += f"; {note}"
    for name in ("cells", "tau", "table1", "verdicts"):
        write_csv(tables.label_models(result[name]), outputs["csv" if name == "cells" else name])
    epochs = f"{run['epochs']} epoch" + ("" if run["epochs"] == 1 else "s")
    run_note = f"grid {run['grid']} ({run['points']} points), at most {epochs}" + (
        f", {resamples:,} resamples" if resamples else ", no bootstrap"
    )
    if "pdf" in outputs:  # only when some dataset has published numbers (reproduction.smk)
        analysis_figures.paper_gap_figure(
            result["cells"],
            result["tau"],
            verdicts,
            run_note,
            figure_style.Style(**style),
            outputs["pdf"],
            outputs["png"],
        )
    for dataset, why in (unpublished or {}).items():
        log.info("%s: no published numbers: %s", dataset, why)
    log.info("the run: %s", run_note)
    for line in verdicts["line"]:
        log.info("%s", line)
    return result
