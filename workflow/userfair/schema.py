"""Checking the workflow's config against config/config.schema.yaml with errors that name
the key: ``config key measures.gamma: 1.5 is greater than the maximum of 1``.

Snakemake's own ``validate`` names only the offending value; the Snakefile calls
:func:`check_config` first and Snakemake's ``validate`` afterwards, to fill in defaults.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import jsonschema
import yaml

from userfair.io import InputError


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
    return [f"config key {key_path(error.absolute_path)}: {error.message}" for error in errors]


def check_config(config: dict, schema_path: str | os.PathLike) -> None:
    """Raise InputError listing every violation of the schema at ``schema_path``, each
    naming its key; nothing when the config is valid."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    errors = config_errors(config, schema)
    if errors:
        raise InputError(
            f"the config does not match {Path(schema_path).name}:\n  " + "\n  ".join(errors)
        )
