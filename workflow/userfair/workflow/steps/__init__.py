"""The workflow's rule steps, one module per stage (workflow/rules/STAGE.smk), one function
per rule: rule ``R`` of stage ``S`` runs workflow/scripts/R.py, which makes one call,
``userfair.workflow.steps.S.R(...)``, with plain values (the paths of the rule's named inputs and
outputs, its params). A step reads its inputs, calls the library functions that do the work
(named in its docstring), logs what it did and writes its outputs atomically; route
decisions (the dense or the streamed measures) are made in the step from the inputs the
rule received, never in a script. The steps are workflow code: the measures themselves
live in the library modules they call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

Path = str | os.PathLike

#: The ``measures:`` settings that change how fast a job runs, never what it writes. They are
#: never rule params (a changed param reruns the job and everything after it): each rule
#: script that needs them reads them from the config with :func:`speed`, and a job's
#: threads come from the rule's ``threads:`` (docs/cluster.md#what-re-runs-after-a-change).
SPEED_KEYS = ("block_size", "device")


def speed(config: Mapping) -> dict:
    """The speed-only settings (:data:`SPEED_KEYS`) of the workflow's config."""
    return {key: config["measures"][key] for key in SPEED_KEYS}


def read_optional_csv(path: Path | None) -> pd.DataFrame | None:
    """The table of an optional named input: ``None`` without one, an empty frame when the
    file was written with no column (a stage that had nothing to tabulate)."""
    if path is None:
        return None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def only(paths: Sequence[Path] | Path | None) -> Path | None:
    """The one path of an optional named input: ``None`` when the rule gave none."""
    if paths is None or isinstance(paths, (str, os.PathLike)):
        return paths
    if len(paths) > 1:
        raise ValueError(f"expected at most one path, got {list(paths)}")
    return paths[0] if len(paths) else None


def named(
    inputs: Mapping[str, object], *, prefix: str | None = None, keys: Sequence[str] = ()
) -> dict:
    """A rule's named inputs as plain values: those whose name starts with ``prefix``, keyed
    by the rest of the name (``"measures:D/M"`` -> ``"D/M"``; common.smk's per_run and
    per_model), or those of ``keys`` the rule has (a list input stays a list)."""
    if prefix is not None:
        return {
            name[len(prefix) :]: str(path)
            for name, path in inputs.items()
            if name.startswith(prefix)
        }
    return {
        name: (str(value) if isinstance(value, (str, os.PathLike)) else [str(v) for v in value])
        for name, value in inputs.items()
        if name in keys
    }
