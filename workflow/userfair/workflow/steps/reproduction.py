"""Steps of the reproduction stage (workflow/rules/reproduction.smk): paper_gap."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd

from userfair.io import write_csv
from userfair.workflow import plots, reproduction, steps

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
) -> dict[str, pd.DataFrame]:
    """Rule paper_gap: :func:`userfair.workflow.reproduction.paper_gap` of the named inputs
    ("measures:D/M",
    "stats:D", "resamples:D/M"), written to the outputs ``csv`` (the cells), ``tau``,
    ``table1``, ``verdicts`` and the figure ``pdf``, ``png``; every verdict line logged.
    ``run``: the grid file, its points over all models and the epochs (the figure's note);
    ``settings``: the measures' k, epsilon, envy_utility and gamma (:func:`settings_note`)."""
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
        write_csv(result[name], outputs["csv" if name == "cells" else name])
    run_note = f"grid {run['grid']} ({run['points']} points), at most {run['epochs']} epochs" + (
        f", {resamples:,} resamples" if resamples else ", no bootstrap"
    )
    plots.paper_gap_figure(
        result["cells"],
        result["tau"],
        verdicts,
        run_note,
        plots.Style(**style),
        outputs["pdf"],
        outputs["png"],
    )
    log.info("the run: %s", run_note)
    for line in verdicts["line"]:
        log.info("%s", line)
    return result
