"""Checking the workflow's config against config/config.schema.yaml with errors that name
the key: ``config key measures.gamma: 1.5 is greater than the maximum of 1``.

The schema keeps no list of names: dataset names are checked against the catalogue and the
config's ``custom_datasets`` (:func:`userfair.workflow.catalogue.names`), model names against the
registry of models (:func:`userfair.workflow.models.names`), here, with close matches suggested.

Snakemake's own ``validate`` names only the offending value; the Snakefile calls
:func:`check_config` first and Snakemake's ``validate`` afterwards, to fill in defaults.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("jsonschema",)
require("workflow", NEEDS, __name__)

import jsonschema  # noqa: E402  (after the check, which names the extra to install)
import yaml  # noqa: E402

from userfair.io import InputError  # noqa: E402
from userfair.workflow import catalogue, models  # noqa: E402

# plots.palette's default in config/config.schema.yaml (a test checks they agree).
DEFAULT_PALETTE = "colorblind"


def key_path(path: Iterable) -> str:
    """A config key path as written in the docs: ``measures.gamma``, ``datasets[0]``,
    ``dataset_options.ml-100k.path``; ``(top level)`` for the config itself."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def config_errors(config: dict, schema: dict) -> list[str]:
    """Every schema violation of ``config``, each as ``config key PATH: MESSAGE``, the most
    relevant first (``jsonschema.exceptions.relevance``)."""
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    errors = sorted(validator.iter_errors(config), key=jsonschema.exceptions.relevance)
    return [_message(error) for error in errors] + name_errors(config) + style_errors(config)


def _message(error: jsonschema.ValidationError) -> str:
    """``config key PATH: MESSAGE``; an unknown key is named by its own path, with the
    section's keys close to it suggested (``config key modles: not a key of the config;
    did you mean models?``)."""
    known = list(error.schema.get("properties", {})) if isinstance(error.schema, dict) else []
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return f"config key {key_path(error.absolute_path)}: {error.message}"
    where = key_path(error.absolute_path)
    messages = []
    for key in error.instance:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        section = "the config" if where == "(top level)" else where
        path = key_path([*error.absolute_path, key])
        messages.append(
            f"config key {path}: not a key of {section}{hint} (known: {', '.join(known)})"
        )
    return "\n  ".join(messages) or f"config key {where}: {error.message}"


def _unknown(name: str, known: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"{name!r} is not one of the {what}{hint} (known: {', '.join(known)})"


def name_errors(config: dict) -> list[str]:
    """Every dataset or model name of ``config`` that no registry knows, and every
    ``custom_datasets`` declaration that :func:`userfair.workflow.catalogue.declare` rejects."""
    custom = config.get("custom_datasets") or {}
    errors = []
    if isinstance(custom, dict):
        for name, spec in custom.items():
            try:
                catalogue.declare(name, spec if isinstance(spec, dict) else {})
            except InputError as error:
                errors.append(str(error))
    else:
        custom = {}
    datasets = catalogue.names(custom)
    for index, name in enumerate(config.get("datasets") or []):
        if isinstance(name, str) and name not in datasets:
            what = "datasets (the catalogue's, then those of custom_datasets; docs/data.md)"
            errors.append(f"config key datasets[{index}]: {_unknown(name, datasets, what)}")
    for name in config.get("dataset_options") or {}:
        if name not in catalogue.CATALOGUE:
            errors.append(
                f"config key dataset_options.{name}: not a built-in dataset "
                f"({', '.join(catalogue.CATALOGUE)}); a dataset of custom_datasets takes its "
                f"path, url and sha256 in custom_datasets.{name}"
            )
    for index, name in enumerate(config.get("models") or []):
        if isinstance(name, str) and name not in models.names():
            what = "models (RecBole 1.2.1's general recommenders and UserKNN)"
            errors.append(
                f"config key models[{index}]: {_unknown(name, list(models.names()), what)}"
            )
    model = (config.get("experiments") or {}).get("model")
    configured = [m for m in config.get("models") or [] if isinstance(m, str)]
    if isinstance(model, str) and configured and model not in configured:
        what = "configured models (config key models); null takes the last of them"
        errors.append(f"config key experiments.model: {_unknown(model, configured, what)}")
    return errors


def style_errors(config: dict) -> list[str]:
    """An unknown seaborn palette in plots.palette, which would fail only when the first
    figure is drawn. seaborn (slow to import) is asked only for a palette other than the
    schema's default."""
    palette = (config.get("plots") or {}).get("palette")
    if not isinstance(palette, str) or palette == DEFAULT_PALETTE:
        return []
    import seaborn

    try:
        seaborn.color_palette(palette)
    except ValueError as error:
        return [
            f"config key plots.palette: {error} (a seaborn or matplotlib palette name, "
            "e.g. colorblind, deep, Set2, viridis)"
        ]
    return []


def check_config(config: dict, schema_path: str | os.PathLike) -> None:
    """Raise InputError listing every violation of the schema at ``schema_path``, each
    naming its key; nothing when the config is valid."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    errors = config_errors(config, schema)
    if errors:
        raise InputError(
            f"the config does not match {Path(schema_path).name}:\n  " + "\n  ".join(errors)
        )
