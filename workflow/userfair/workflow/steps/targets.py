"""Steps of the targets (workflow/rules/targets.smk): run_config."""

from __future__ import annotations

import json
import logging
import os

from userfair.io import InputError, write_json
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)


def run_config(datasets: list[str], models: list[str], out: Path) -> dict:
    """Rule run_config: the configuration whose tables and figures ``results/`` holds (its
    datasets and models) -> ``out`` (results/run.json), written after every other target."""
    record = {"datasets": list(datasets), "models": list(models)}
    write_json(record, out)
    log.info("%s: every table and figure covers %s", out, record)
    return record


def other_config(path: Path, datasets: list[str], models: list[str]) -> str | None:
    """Why the outputs in ``results/`` are not this configuration's (``path``: the
    results/run.json of the last complete run), or None when they are (or none exist)."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            made = json.load(handle)
        made = {"datasets": list(made["datasets"]), "models": list(made["models"])}
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"{path}: truncated or unreadable ({type(error).__name__}); remove it: a full "
            "run writes it again"
        ) from None
    if made == {"datasets": list(datasets), "models": list(models)}:
        return None
    return (
        f"results/ holds the tables and figures of another configuration ({path}: datasets "
        f"{made['datasets']}, models {made['models']}); this one has datasets {datasets}, "
        f"models {models}. A full run with this config rebuilds every table and figure for "
        "it; a partial run leaves the others as they are. To keep both, give each config "
        "its own directory: snakemake --directory DIR --configfile ..."
    )
