"""Hyper-parameter grids (config/grids/*.yaml): validation and expansion into grid points.

Pure and light (no torch, no RecBole import) so that the workflow can check a grid and count
its points while Snakemake builds the DAG, before any job runs (workflow/rules/common/settings.smk).

A grid file maps each model to ``{parameter: [values, ...]}``; the grid points are the
cartesian product in the file's key order (the last key varies fastest), numbered from 0.
A model with an empty mapping has one point: RecBole's defaults.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from userfair.files.io import InputError
from userfair.workflow import models, yamlfile

# The models and the hyper-parameters a grid may set come from the one registry of models,
# userfair.workflow.models: RecBole's own parameters of each model
# (recbole/properties/model/M.yaml),
# the training keys for trainable models, and UserKNN's own K and shrink.
TRAINING_KEYS = models.TRAINING_KEYS


def model_keys(model: str) -> tuple[str, ...]:
    """The grid keys ``model`` takes; InputError (with close matches) for an unknown model."""
    return models.get(model).grid_keys


def trainable(model: str) -> bool:
    """Whether ``model`` trains for epochs (UserKNN, ItemKNN and RecBole's traditional
    models are built in one pass: no epochs, no early stopping, no GPU)."""
    return models.get(model).trainable


def load_grid(path: str | os.PathLike) -> dict:
    """Read a grid file; InputError naming the file when it is missing, not a mapping, gives
    a key twice or holds a tag (:mod:`userfair.workflow.yamlfile`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: grid file not found (config key 'grid')")
    grid = yamlfile.load(path) or {}
    if not isinstance(grid, dict):
        raise InputError(f"{path}: expected a mapping model -> {{parameter: [values]}}")
    return grid


def validate_grid(grid: dict, models: list[str], *, label: str = "grid") -> None:
    """Raise InputError for an unknown model, an unknown parameter, a value that is not a
    non-empty list, or a configured model missing from the grid."""
    for model, params in grid.items():
        try:
            allowed = model_keys(model)
        except InputError as error:
            raise InputError(f"{label}: {error}") from None
        if params is None:
            continue
        if not isinstance(params, dict):
            raise InputError(f"{label}: model '{model}': expected a mapping parameter -> list")
        for key, values in params.items():
            if key not in allowed:
                raise InputError(
                    f"{label}: model '{model}': unknown grid key '{key}', not a parameter of "
                    f"{model} in RecBole 1.2.1 (allowed: {', '.join(allowed)})"
                )
            if not isinstance(values, list) or not values:
                raise InputError(
                    f"{label}: model '{model}', key '{key}': expected a non-empty list of "
                    f"values, got {values!r}"
                )
            text = [v for v in values if isinstance(v, str)]
            if text:
                raise InputError(
                    f"{label}: model '{model}', key '{key}': {text[0]!r} is text, expected a "
                    "number (YAML reads 1e-5 as text: write 1.0e-5 or 0.00001)"
                )
    missing = [m for m in models if m not in grid]
    if missing:
        raise InputError(f"{label}: no grid for configured model(s) {', '.join(missing)}")


def grid_points(grid: dict, model: str) -> list[dict]:
    """Every point of ``model``'s grid, in grid order (cartesian product, last key fastest)."""
    params = grid.get(model) or {}
    keys = list(params)
    return [dict(zip(keys, values)) for values in itertools.product(*params.values())]


def load_points(path: str | os.PathLike, models: list[str]) -> dict[str, list[dict]]:
    """Load and validate a grid file; the points of every configured model."""
    grid = load_grid(path)
    validate_grid(grid, models, label=str(path))
    return {model: grid_points(grid, model) for model in models}


def point_params(points: dict[str, list[dict]], model: str, point) -> dict:
    """The parameters of grid point ``point`` (an index, possibly a string) of ``model``."""
    index = int(point)
    if not 0 <= index < len(points[model]):
        raise InputError(f"model {model} has {len(points[model])} grid points, no point {point}")
    return points[model][index]
