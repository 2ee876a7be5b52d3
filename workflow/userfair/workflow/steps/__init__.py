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

from userfair.io import InputError, read_inter, read_parquet

Path = str | os.PathLike

#: The field of the split frames that holds each interaction's grade once :func:`graded_splits`
#: has joined the grades file (rule grades) onto them: ``load_inputs(grade=GRADE)``.
GRADE = "grade"

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


def graded_splits(
    train: Path, test: Path, grades: Sequence[Path] | Path | None, graded: bool
) -> tuple[object, object, str | None]:
    """The train and test splits as the library reads them, with graded relevance
    (config measures.relevance has graded, ``graded``): each split's (user_id, item_id)
    frame with the grade of its interaction from ``grades`` (rule grades'
    results/D/data/grades.parquet: user_id, item_id, grade for every kept interaction) in
    column :data:`GRADE`, and that column's name; without it the paths as given and None.
    An interaction the grades file lacks is an InputError naming both files."""
    grades = only(grades)
    if not graded:
        return train, test, None
    if grades is None:
        raise ValueError(
            "measures.relevance has graded but the rule gave no grades file "
            "(results/D/data/grades.parquet, rule grades)"
        )
    table = read_parquet(grades)
    missing = [c for c in ("user_id", "item_id", GRADE) if c not in table.columns]
    if missing:
        raise InputError(f"{grades}: no column {missing} (expected user_id, item_id, {GRADE})")
    table = table[["user_id", "item_id", GRADE]].astype({"user_id": str, "item_id": str})
    return _with_grades(train, table, grades), _with_grades(test, table, grades), GRADE


def _with_grades(split: Path, table: pd.DataFrame, grades: Path) -> pd.DataFrame:
    """The (user_id, item_id) interactions of the split file ``split`` with their grades
    from ``table`` (the grades file ``grades``), in the split's order."""
    frame = read_inter(split)[["user_id", "item_id"]]
    try:
        joined = frame.merge(table, on=["user_id", "item_id"], how="left", validate="m:1")
    except pd.errors.MergeError:
        raise InputError(
            f"{grades}: a (user_id, item_id) appears twice; rebuild it: snakemake --force {grades}"
        ) from None
    lacking = joined[GRADE].isna().to_numpy()
    if lacking.any():
        user, item = joined.loc[lacking, ["user_id", "item_id"]].iloc[0]
        raise InputError(
            f"{grades}: no grade for user {user!r} item {item!r} of {split} "
            f"({int(lacking.sum())} interactions of it lack one): both must come from the same "
            f"data; rebuild it: snakemake --force {grades}"
        )
    return joined
