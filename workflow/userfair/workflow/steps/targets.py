"""Steps of the targets (workflow/rules/targets.smk): run_config."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping

from userfair.files.io import InputError, write_json
from userfair.workflow import layout
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)


#: Config keys that say how fast, where or in how many jobs the work runs, never what it
#: writes (none is a rerun trigger): left out of the record, so that a report with other
#: threads or another block size is not refused.
NOT_RECORDED = (
    "download.other_hosts", "download.max_mb",
    "training.threads", "training.checkpoint_every", "training.max_runtime",
    "training.planned_epochs", "training.eval_batch_size",
    "measures.block_size", "measures.device", "measures.threads", "measures.stream_above",
    "measures.scatter",
)  # fmt: skip


def recorded_config(config: Mapping) -> dict:
    """The part of a run's ``config`` that decides what its tables and figures hold: all of
    it but :data:`NOT_RECORDED`, as plain JSON data (what results/run.json records)."""
    plain = json.loads(json.dumps(dict(config), sort_keys=True, default=str))
    for key in NOT_RECORDED:
        section, name = key.split(".")
        if isinstance(plain.get(section), dict):
            plain[section].pop(name, None)
    return plain


def _flat(data, prefix: str = "") -> dict:
    if isinstance(data, dict) and data:
        return {k: v for key, value in data.items()
                for k, v in _flat(value, f"{prefix}{key}.").items()}  # fmt: skip
    return {prefix.rstrip("."): data}


def config_difference(made: Mapping, this: Mapping, most: int = 3) -> str:
    """The keys in which two recorded configs differ, each with both values:
    ``k 10 there, 5 here``; the first ``most`` of them and how many more."""
    there, here = _flat(dict(made)), _flat(dict(this))
    unset = "(unset)"
    keys = sorted(k for k in {*there, *here} if there.get(k, unset) != here.get(k, unset))
    said = [
        f"{k} {json.dumps(there.get(k, unset))} there, {json.dumps(here.get(k, unset))} here"
        for k in keys[:most]
    ]
    more = f" and {len(keys) - most} more keys" if len(keys) > most else ""
    return "; ".join(said) + more


def run_config(
    datasets: list[str], models: list[str], out: Path, config: Mapping | None = None
) -> dict:
    """Rule run_config: the configuration whose tables and figures ``results/`` holds (its
    datasets and models, and ``config``, the run's config as :func:`recorded_config` keeps
    it) -> ``out`` (results/run.json), written after every other target."""
    record = {"datasets": list(datasets), "models": list(models)}
    if config is not None:
        record["config"] = recorded_config(config)
    write_json(record, out)
    log.info("%s: every table and figure covers datasets %s, models %s", out, datasets, models)
    return record


def other_config(
    path: Path, datasets: list[str], models: list[str], config: Mapping | None = None
) -> str | None:
    """Why the outputs in ``results/`` are not this configuration's (``path``: the
    results/run.json of the last complete run), or None when they are (or none exist). With
    ``config`` (this run's), any recorded key that differs counts (:func:`recorded_config`:
    another k with the same datasets and models is another configuration too), and so does
    a record that holds no config (written before the record held one)."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            made = json.load(handle)
        kept = made.get("config")
        made = {"datasets": list(made["datasets"]), "models": list(made["models"])}
        if not isinstance(kept, (dict, type(None))):
            raise TypeError("config")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise InputError(
            f"{path}: truncated or unreadable ({type(error).__name__}); remove it: a full "
            "run writes it again"
        ) from None
    advice = (
        "A full run with this config rebuilds every table and figure for it; a partial run "
        "leaves the others as they are. To keep both, give each config its own directory: "
        "snakemake --directory DIR --configfile ..."
    )
    if made != {"datasets": list(datasets), "models": list(models)}:
        return (
            f"results/ holds the tables and figures of another configuration ({path}: datasets "
            f"{made['datasets']}, models {made['models']}); this one has datasets {datasets}, "
            f"models {models}. {advice}"
        )
    if config is None:
        return None
    if kept is None:
        return (
            f"results/ holds the tables and figures of a configuration {path} does not record "
            f"(only its datasets and models: an older record); this one may differ. {advice}"
        )
    this = recorded_config(config)
    if kept == this:
        return None
    return (
        f"results/ holds the tables and figures of another configuration with the same "
        f"datasets and models ({path}: {config_difference(kept, this)}). {advice}"
    )


#: The folders whose files a report shows: every one was made by the run that run.json names
#: only if none is newer than it.
REPORTED = (layout.TABLES, layout.FIGURES)


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
