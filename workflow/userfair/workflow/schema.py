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
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("jsonschema",)
require("workflow", NEEDS, __name__)

import jsonschema  # noqa: E402  (after the check, which names the extra to install)

from userfair import bounds  # noqa: E402
from userfair.files.io import InputError  # noqa: E402
from userfair.similarity import pairwise  # noqa: E402
from userfair.workflow import catalogue, config_bounds, layout, models, preprocess, yamlfile  # noqa: E402

#: A dataset name is a folder name under results/ and resources/: letters, digits, ".", "_"
#: and "-", starting with a letter or digit (so never "..", "/" or an absolute path).
DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

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
    validator = strict_validator(schema)
    errors = sorted(validator.iter_errors(config), key=jsonschema.exceptions.relevance)
    # The keys of userfair.bounds are named once, by bound_errors.
    errors = [e for e in errors if key_path(e.absolute_path) not in config_bounds.CONFIG_KEYS]
    return (
        [_message(error) for error in errors]
        + bound_errors(config)
        + name_errors(config)
        + style_errors(config)
        + variant_errors(config)
    )


def strict_validator(schema: dict):
    """A validator of ``schema`` where an integer is a plain integer (10.0 and true are not)
    and a number is finite (nan and inf are not): JSON Schema's own types accept 10.0 as an
    integer and nan as a number, which crash a job later."""
    base = jsonschema.validators.validator_for(schema)
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda _, v: (
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            ),
        }
    )
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


def bound_errors(config: dict) -> list[str]:
    """Every key of :data:`userfair.workflow.config_bounds.CONFIG_KEYS` outside its bound,
    checked by the same definition as the ``userfair`` command's options (a key the schema already
    refused for its type is not named twice)."""
    errors = []
    for key, name in config_bounds.CONFIG_KEYS.items():
        *sections, leaf = key.split(".")
        holder = config
        for section in sections:  # nested keys (measures.estimate.pairs) too
            holder = holder.get(section) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or leaf not in holder:
            continue
        try:
            bounds.check(name, holder[leaf], f"config key {key}")
        except ValueError as error:
            errors.append(str(error))
    return errors


def _longest(values, fallback: str) -> str:
    names = [str(v) for v in values or () if isinstance(v, (str, int))]
    return max(names, key=lambda v: len(v.encode("utf-8")), default=fallback)


def longest_file_name(name: str, config: dict | None = None) -> tuple[str, int]:
    """The longest file name (path component) the workflow writes or RecBole reads with
    the dataset ``name`` under ``config``, and its size in bytes: each template of
    :data:`layout.NAMED_COMPONENTS` and :data:`layout.RECBOLE_COMPONENTS` filled with the
    longest value each of its other wildcards takes in this run (the configured models, the
    last replicate, 1 without replicates so that a later run with them fits too, the scatter
    item ``S-of-S``, the similarity kinds, the splits and the
    raw file suffixes); without a usable ``config`` the registry's longest model and one
    replicate and scatter job."""
    config = config if isinstance(config, dict) else {}
    training = config.get("training") if isinstance(config.get("training"), dict) else {}
    measures = config.get("measures") if isinstance(config.get("measures"), dict) else {}
    replicates = training.get("replicates", 1)
    scatter = measures.get("scatter", 1)
    replicates = replicates if isinstance(replicates, int) and replicates > 1 else 2
    scatter = scatter if isinstance(scatter, int) and scatter > 0 else 1
    configured = config.get("models") if isinstance(config.get("models"), list) else None
    values = {
        "dataset": name,
        "model": _longest(configured or models.names(), ""),
        "replicate": str(replicates - 1),
        "scatteritem": f"{scatter}-of-{scatter}",
        "kind": _longest(pairwise.KINDS, ""),
        "split": _longest(preprocess.SPLITS, ""),
        "suffix": _longest(catalogue.FORMATS + ("zip",), ""),
    }
    filled = [t.format(**values) for t in layout.NAMED_COMPONENTS + layout.RECBOLE_COMPONENTS]
    longest = max(filled, key=lambda text: len(text.encode("utf-8")))
    return longest, len(longest.encode("utf-8"))


def dataset_name_error(name, key: str, config: dict | None = None) -> str | None:
    """Why ``name`` cannot be a dataset name (it becomes a folder under results/ and part of
    file names: the longest, :func:`longest_file_name` under ``config``, must fit in
    :data:`layout.COMPONENT_BYTES`), or None."""
    if isinstance(name, str) and DATASET_NAME.fullmatch(name):
        longest, size = longest_file_name(name, config)
        if size <= layout.COMPONENT_BYTES:
            return None
        own = len(name.encode("utf-8"))
        most = layout.COMPONENT_BYTES - (size - own)
        return (
            f"config key {key}: the dataset name is {own} bytes long, and the longest file "
            f"name this run makes with it would be {size} bytes "
            f"({longest.replace(name, 'NAME')}), over the {layout.COMPONENT_BYTES} a file "
            f"name holds; give a name of at most {most} bytes"
        )
    return (
        f"config key {key}: {name!r} is not a usable dataset name (letters, digits, '.', "
        f"'_' and '-', starting with a letter or digit: it names the folders {layout.RESULTS}/NAME "
        f"and {catalogue.RAW_DIR}/NAME)"
    )


#: The key that makes Snakemake read a config file as a YTE template: it evaluates the
#: file's ``?``-expressions as Python while it loads the file, before the Snakefile runs.
YTE_KEY = "__use_yte__"


def duplicate_key_errors(files: Iterable[str | os.PathLike]) -> list[str]:
    """The config files Snakemake loaded (``workflow.configfiles``), re-read by
    :mod:`userfair.workflow.yamlfile`: a key given twice in one file (Snakemake keeps the last
    silently), a tag, or a YTE template (:data:`YTE_KEY`: Snakemake has run its code by
    now; the config is then not the file's data) is an error naming the file."""
    errors = []
    for path in files:
        if not Path(path).is_file():  # Snakemake read it from elsewhere (a stream)
            continue
        try:
            data = yamlfile.load(path)
        except InputError as error:
            errors.append(str(error))
            continue
        if isinstance(data, dict) and data.get(YTE_KEY):
            errors.append(
                f"{path}: {YTE_KEY} made Snakemake read this file as a YTE template and run "
                "its ?-expressions as Python before the workflow started; this workflow's "
                f"config files hold plain data: write the values and remove {YTE_KEY}"
            )
    return errors


def check_config_file(path: str | os.PathLike) -> None:
    """The workflow's own config file (``configfile:`` in the Snakefile), read strictly
    before Snakemake loads it: a tag (``!!python/object``, ...), a key given twice or bad
    YAML is one InputError naming the file and the line, where Snakemake's loader would
    name no file. Nothing when the file is absent (Snakemake says so itself)."""
    if Path(path).is_file():
        errors = duplicate_key_errors([path])
        if errors:
            raise InputError(errors[0])


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
        bad = [name for name in custom if dataset_name_error(name, "", config)]
        for name in bad:
            errors.append(dataset_name_error(name, f"custom_datasets.{name}", config))
        custom = {name: spec for name, spec in custom.items() if name not in bad}
        for name, spec in custom.items():
            try:
                catalogue.declare(name, spec if isinstance(spec, dict) else {})
            except InputError as error:
                errors.append(str(error))
    else:
        custom = {}
    datasets = catalogue.names(custom)
    for index, name in enumerate(config.get("datasets") or []):
        if isinstance(name, str) and dataset_name_error(name, "", config):
            errors.append(dataset_name_error(name, f"datasets[{index}]", config))
        elif isinstance(name, str) and name not in datasets:
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


def variant_errors(config: dict) -> list[str]:
    """The opt-in measures (measures.relevance, measures.similarities;
    docs/measures.md#opt-in-measures) that cannot be computed: binary relevance or the
    paper's cos and jacc left out, rcos without graded relevance, embedding:MODEL of a
    model that is not configured or is a KNN model (no user embedding), or more than one."""
    measures = config.get("measures") or {}
    relevance = measures.get("relevance", ["binary"])
    similarities = measures.get("similarities", ["cos", "jacc"])
    if not isinstance(relevance, list) or not isinstance(similarities, list):
        return []  # the schema names it
    errors = []
    if "binary" not in relevance:
        errors.append(
            "config key measures.relevance: must include binary (the paper's measures are "
            "always computed); use [binary] or [binary, graded]"
        )
    missing = [name for name in ("cos", "jacc") if name not in similarities]
    if missing:
        errors.append(
            f"config key measures.similarities: must include cos and jacc (the paper's PUF "
            f"similarities, always computed); {', '.join(missing)} missing"
        )
    if "rcos" in similarities and "graded" not in relevance:
        errors.append(
            "config key measures.similarities: rcos reads the grades; add graded to "
            "measures.relevance or drop rcos"
        )
    embedded = [s.split(":", 1)[1] for s in similarities if str(s).startswith("embedding:")]
    if len(embedded) > 1:
        errors.append(
            f"config key measures.similarities: one embedding:MODEL at most (their measures "
            f"share the label Vec), got {len(embedded)}"
        )
    configured = [m for m in config.get("models") or [] if isinstance(m, str)]
    for model in embedded:
        key = f"config key measures.similarities: embedding:{model}"
        if model not in configured:
            errors.append(f"{key}: not one of the configured models ({', '.join(configured)})")
        elif models.get(model).cost_kind in ("user-knn", "item-knn"):
            errors.append(f"{key}: a KNN model has no user embedding; name a trained model")
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


def check_config(
    config: dict, schema_path: str | os.PathLike, files: Iterable[str | os.PathLike] = ()
) -> None:
    """Raise InputError listing every violation of the schema at ``schema_path``, each
    naming its key, and every duplicate key of the config ``files`` Snakemake loaded;
    nothing when the config is valid."""
    schema = yamlfile.trusted(schema_path)
    errors = duplicate_key_errors(files) + config_errors(config, schema)
    if errors:
        raise InputError(
            f"the config does not match {Path(schema_path).name}:\n  " + "\n  ".join(errors)
        )
