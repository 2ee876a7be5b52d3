"""Steps of the targets (workflow/rules/targets.smk): run_config."""

from __future__ import annotations

import json
import logging
import os

from userfair.files.io import InputError, write_json
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


#: The folders whose files a report shows: every one was made by the run that run.json names
#: only if none is newer than it.
REPORTED = ("results/tables", "results/figures")


def newer_than_record(path: Path, folders=REPORTED) -> str | None:
    """Why the tables and figures in ``folders`` may not all be of the run that ``path``
    (results/run.json) names: the first file newer than it (a later, partial run wrote it,
    perhaps with another configuration), or None (no record, or nothing newer)."""
    if not os.path.isfile(path):
        return None
    recorded = os.stat(path).st_mtime
    newer = sorted(
        os.path.join(root, name)
        for folder in folders
        for root, _, names in os.walk(folder)
        for name in names
        if os.stat(os.path.join(root, name)).st_mtime > recorded
    )
    if not newer:
        return None
    more = f" and {len(newer) - 1} more" if len(newer) > 1 else ""
    return (
        f"{newer[0]}{more} is newer than {path}: a run after the last complete one wrote it, "
        "perhaps with another configuration, so the report could mix two runs and is not made; "
        "a complete run of this config first (snakemake --cores N, with its --configfile) "
        "rewrites what differs and the record"
    )
