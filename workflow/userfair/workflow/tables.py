"""Tables 1, 2 and 3 of the paper: Table 1 from the datasets' statistics
(``userfair.workflow.preprocess.dataset_stats``, ``userfair.workflow.preprocess.split_counts``),
Tables 2 and 3 from the
per-run measure files (docs/analyses.md).

Measure names, groups and directions come from :mod:`userfair.measures`.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd

from userfair.files.io import InputError, atomic_path, read_json
from userfair.measures import (
    CONVENTION_KEYS,
    FAIR,
    FAIR_GROUP,
    GROUPS,
    NAMES,
    OPT_IN,
    OPT_IN_GROUPS,
    PLUGIN_GROUPS,
    SIMILARITY_TIMES,
    get,
    higher_is_better,
    is_known,
    plugin_names,
)
from userfair.workflow import models
from userfair.workflow.latex import to_booktabs, write_table

# Column titles of Table 1 (plain words: the CSV keeps them as they are; the LaTeX writer,
# userfair.workflow.latex.to_booktabs, escapes every title and cell).
TABLE1_COLUMNS = {
    "users": "users",
    "test_users": "test users",
    "items": "items",
    "interactions": "interactions",
    "sparsity": "sparsity (%)",
    "train": "train",
    "valid": "valid",
    "test": "test",
    "split_users": "users in split",
    "split_items": "items in split",
    "protocol": "split protocol",
}


def table1(rows: dict[str, dict]) -> pd.DataFrame:
    """Table 1: one row per dataset from its stats.json plus
    ``userfair.workflow.preprocess.split_counts``."""
    frame = pd.DataFrame.from_dict(rows, orient="index")
    missing = [key for key in TABLE1_COLUMNS if key not in frame]
    if missing:
        raise InputError(f"stats: missing field(s) {', '.join(missing)}")
    frame = frame[list(TABLE1_COLUMNS)].rename(columns=TABLE1_COLUMNS)
    frame.index.name = "dataset"
    text = ("sparsity (%)", "split protocol")
    return frame.astype({c: "int64" for c in frame.columns if c not in text})


def model_label(model: str) -> str:
    """The short name of ``model`` in tables and figures (userfair.workflow.models.label)."""
    return models.label(model)


#: The columns of a written table that name a model.
MODEL_COLUMNS = ("model", "model_a", "model_b", "best", "runner_up")


def label_models(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every model named by its one label (:func:`model_label`, e.g.
    ``U-KNN``) in the columns of :data:`MODEL_COLUMNS` it has: the label every table and
    figure shows. Labels map to themselves, so labelling twice changes nothing."""
    present = [c for c in MODEL_COLUMNS if c in frame.columns]
    return frame.assign(**{c: frame[c].map(model_label) for c in present}) if present else frame


def model_names(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`label_models` undone: the registry's name of every model (``UserKNN``) in the
    columns of :data:`MODEL_COLUMNS` it has, for code that reads a labelled table back."""
    names = {models.label(name): name for name in models.names()}
    present = [c for c in MODEL_COLUMNS if c in frame.columns]
    return frame.assign(**{c: frame[c].map(lambda v: names.get(v, v)) for c in present})


def check_measures(record: dict, source: str | os.PathLike) -> dict:
    """Validate one measures JSON object (the file contract of results/D/measures/M.json)."""
    missing = [m for m in NAMES if m not in record]
    if missing:
        raise InputError(f"{source}: missing measure keys {missing}")
    seconds = record.get("seconds")
    if not isinstance(seconds, dict):
        raise InputError(f"{source}: field 'seconds' must be an object of per-measure seconds")
    conventions = record.get("conventions")
    if not isinstance(conventions, dict) or set(conventions) != set(CONVENTION_KEYS):
        raise InputError(
            f"{source}: field 'conventions' must be an object with keys {list(CONVENTION_KEYS)} "
            "(a file of an older version: rerun its measures rule)"
        )
    for measure in NAMES + tuple(name for name in OPT_IN + plugin_names() if name in record):
        value = record[measure]
        if value is not None and not isinstance(value, (int, float)):
            raise InputError(f"{source}: field {measure!r} must be a number, got {value!r}")
    return record


def scores_frame(records: dict[tuple[str, str], dict], names=NAMES) -> pd.DataFrame:
    """Long frame (dataset, model, measure, value) from {(dataset, model): measures}, over
    the measures ``names`` (default: the 18)."""
    rows = [
        (dataset, model, measure, _number(record[measure]))
        for (dataset, model), record in records.items()
        for measure in names
    ]
    return pd.DataFrame(rows, columns=["dataset", "model", "measure", "value"])


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def best_mask(values: pd.DataFrame, measures: pd.Series) -> pd.DataFrame:
    """True where a cell is the best of its row (ties all marked; NaN never best)."""
    mask = pd.DataFrame(False, index=values.index, columns=values.columns)
    for i in range(len(values)):
        row = values.iloc[i].to_numpy(dtype=float)
        if not np.isfinite(row).any():
            continue
        best = np.nanmax(row) if higher_is_better(measures.iloc[i]) else np.nanmin(row)
        mask.iloc[i] = np.isclose(row, best, rtol=1e-12, atol=0.0)
    return mask


#: The default group of Table 2 that each opt-in group follows.
_EXTENDS = {"Eff (graded)": "Eff", "Fair (graded)": "Fair (existing)"}


def table_groups(records: dict[tuple[str, str], dict]) -> dict[str, tuple[str, ...]]:
    """The groups of Table 2: ``userfair.measures.GROUPS`` and, when the measure files hold
    opt-in measures (docs/measures.md#opt-in-measures), the groups of
    ``userfair.measures.OPT_IN_GROUPS`` with the measures the files hold, each right after
    the default group it extends (graded Eff after Eff, graded Fair after the existing Fair,
    the PUF variants after PUF). ValueError when some files hold an opt-in measure and
    others do not (they were computed with different measures settings)."""
    held = [name for name in OPT_IN if any(name in r for r in records.values())]
    uneven = [name for name in held if not all(name in r for r in records.values())]
    if uneven:
        raise ValueError(
            f"some measure files hold the opt-in measures {uneven} and others do not: rerun "
            "the measures rule of every run with the same measures.relevance and "
            "measures.similarities"
        )
    plugins = held_plugins(records)
    groups: dict[str, tuple[str, ...]] = {}
    for group, measures in GROUPS.items():
        groups[group] = measures
        for extra, names in OPT_IN_GROUPS.items():
            if _EXTENDS.get(extra, "Fair (PUF)") == group:
                chosen = tuple(name for name in names if name in held)
                if chosen:
                    groups[extra] = chosen
    for group in PLUGIN_GROUPS:
        chosen = tuple(name for name in plugins if get(name).group == group)
        if chosen:
            groups[group] = chosen
    return groups


def held_plugins(records: dict[tuple[str, str], dict]) -> tuple[str, ...]:
    """The plugin measures (docs/plugins.md) the measure files hold, in load order.
    ValueError when some files hold a plugin and others do not, or a file holds a measure
    that neither the registry nor this run's plugins know (a plugin since removed)."""
    known = {"seconds", "conventions", "groups", "estimate"}
    for source, record in records.items():
        stray = [key for key in record if key not in known and not is_known(key)]
        if stray:
            raise ValueError(
                f"the measures file of {'/'.join(source)} holds {stray}, which no loaded "
                "plugin declares: rerun its measures rule (the plugins changed)"
            )
    held = [name for name in plugin_names() if any(name in r for r in records.values())]
    uneven = [name for name in held if not all(name in r for r in records.values())]
    if uneven:
        raise ValueError(
            f"some measure files hold the plugin measures {uneven} and others do not: rerun "
            "the measures rule of every run with the same measures.plugins"
        )
    return tuple(held)


def agreement_names(records: dict[tuple[str, str], dict]) -> tuple[str, ...]:
    """The measures of Fig. 1's agreement: the 18 and the plugin measures the files hold."""
    return NAMES + held_plugins(records)


def table_scores(
    records: dict[tuple[str, str], dict], datasets: list[str], models: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2: one row per (dataset, group, measure), one column per model; the groups of
    :func:`table_groups` (the opt-in measures of the files, if any, in their own groups).

    Returns the table (index Measure; columns Dataset, Group, Better, then models) and
    the boolean frame of the cells to set in bold.
    """
    groups = table_groups(records)
    long = scores_frame(records, [name for names in groups.values() for name in names])
    wide = long.pivot_table(
        index=["dataset", "measure"], columns="model", values="value", dropna=False
    )
    rows = []
    for dataset in datasets:
        for group, measures in groups.items():
            for measure in measures:
                values = [wide.loc[(dataset, measure), m] for m in models]
                rows.append([dataset, group, measure, *values])
    frame = pd.DataFrame(
        rows, columns=["Dataset", "Group", "measure", *[model_label(m) for m in models]]
    )
    values = frame[[model_label(m) for m in models]]
    bold = best_mask(values, frame["measure"])
    frame.insert(
        2, "Better", frame["measure"].map(lambda m: "higher" if higher_is_better(m) else "lower")
    )
    spread = estimate_columns(records, frame, datasets, models)
    frame = pd.concat([frame, spread], axis=1)
    table = frame.set_index(pd.Index(frame.pop("measure"), name="Measure"))
    labels = pd.DataFrame(False, index=bold.index, columns=["Dataset", "Group", "Better"])
    plain = pd.DataFrame(False, index=bold.index, columns=spread.columns)
    return table, pd.concat([labels, bold, plain], axis=1)


#: The columns beside each model's value of a sampled estimate (config measures.estimate).
ESTIMATE_PARTS = ("se", "low", "high")


def estimate_columns(records, frame: pd.DataFrame, datasets, models) -> pd.DataFrame:
    """Per model, the columns ``M SE``, ``M low``, ``M high`` of the estimated measures'
    standard errors and intervals (the files' ``estimate`` records, userfair.streamed.estimate),
    empty for the exact ones; no column when no file holds an estimate."""
    if not any("estimate" in record for record in records.values()):
        return pd.DataFrame(index=frame.index)
    columns = {}
    for model in models:
        for part in ESTIMATE_PARTS:
            cells = []
            for dataset, measure in zip(frame["Dataset"], frame["measure"]):
                found = records[(dataset, model)].get("estimate", {}).get("measures", {})
                cells.append(_number(found[measure][part]) if measure in found else math.nan)
            name = "SE" if part == "se" else part
            columns[f"{model_label(model)} {name}"] = cells
    return pd.DataFrame(columns, index=frame.index)


def table_timing(records: dict[tuple[str, str], dict], datasets: list[str]) -> pd.DataFrame:
    """Table 3: mean seconds over models of each fairness measure per dataset, and the
    once-per-dataset similarity times (rows), datasets as columns; the plugin measures the
    files hold (docs/plugins.md) after the 12, each its own seconds (the similarity range
    it reads included)."""
    rows = list(FAIR + held_plugins(records) + SIMILARITY_TIMES)
    table = pd.DataFrame(index=pd.Index(rows, name="Measure"), columns=datasets, dtype=float)
    for dataset in datasets:
        runs = [r for (d, _), r in records.items() if d == dataset]
        if not runs:
            raise ValueError(f"no measure files for dataset {dataset!r}")
        for key in rows:
            times = [_seconds(r, key) for r in runs]
            table.loc[key, dataset] = float(np.mean(times))
    return table


def _seconds(record: dict, key: str) -> float:
    value = record["seconds"].get(key)
    return math.nan if value is None else float(value)


def shared_conventions(records: dict[tuple[str, str], dict]) -> dict:
    """The ``conventions`` every record was computed with; ValueError when they differ."""
    distinct = {json.dumps(r["conventions"], sort_keys=True) for r in records.values()}
    if len(distinct) != 1:
        raise ValueError(f"the measure files were computed with different conventions: {distinct}")
    return json.loads(distinct.pop())


def conventions_caption(conventions: dict) -> str:
    """One LaTeX sentence naming the conventions of Table 2 (docs/method.md#conventions)."""
    utility = {
        "precision": r"$|L \cap R_u| / k$ (P@$k$)",
        "ideal": r"$|L \cap R_u| / \min(k, |R_u|)$",
    }[conventions["envy_utility"]]
    return (
        f"Envy utility {utility}, PEU with $\\epsilon = {conventions['epsilon']:g}$; "
        f"UF on the {conventions['uf_similarity']} similarity "
        f"$\\gamma \\cdot \\mathrm{{Jacc}} + (1 - \\gamma)(1 - \\mathrm{{JS}})$ with "
        f"$\\gamma = {conventions['gamma']:g}$; PUF on {conventions['puf_similarity']} "
        "normalised similarities."
    )


def write_scores(records, datasets, models, csv_path, tex_path) -> pd.DataFrame:
    table, bold = table_scores(records, datasets, models)
    write_table(
        table,
        csv_path,
        tex_path,
        bold=bold,
        label="tab:scores",
        caption=r"Eff and Fair scores at $k$ for every recommender; the best score "
        r"per measure in bold; Better says whether higher or lower is better. "
        + estimate_caption(records)
        + conventions_caption(shared_conventions(records)),
    )
    return table


def estimate_caption(records) -> str:
    """The caption's sentence on the sampled estimates, empty when there are none."""
    found = [record["estimate"] for record in records.values() if "estimate" in record]
    if not found:
        return ""
    shares = sorted({f"{100 * entry['share']:g}" for entry in found})
    level = f"{100 * found[0]['level']:g}"
    return (
        rf"Columns SE, low, high: the standard error and {level}\% interval of the measures "
        rf"estimated from a uniform sample of {' or '.join(shares)}\% of the users against "
        "all users (measures.estimate); empty for the exact measures. "
    )


def write_timing(records, datasets, csv_path, tex_path) -> pd.DataFrame:
    table = table_timing(records, datasets)
    write_table(
        table,
        csv_path,
        tex_path,
        float_format="{:.3g}",
        label="tab:time",
        caption="Mean computation time (seconds) of each Fair measure over models, "
        "per dataset; the similarities are computed once per dataset.",
    )
    return table


def read_measure_files(paths, datasets: list[str], models: list[str]) -> dict:
    """{(dataset, model): measures}, each validated, in the order datasets outer, models
    inner. ``paths`` maps the name ``dataset/model`` to its measures file (the named inputs
    the workflow gives the table rules), so no file is matched to a run by position."""
    records = {}
    for dataset in datasets:
        for model in models:
            name = f"{dataset}/{model}"
            try:
                path = paths[name]
            except (KeyError, AttributeError):
                raise ValueError(f"no measures file named {name!r}") from None
            records[(dataset, model)] = check_measures(read_json(path), path)
    return records


#: Table 2's group of the group measures (docs/method.md#groups).
GROUP_FAIRNESS = "Fair (groups)"


def table_scores_ci(
    summary: pd.DataFrame,
    datasets: list[str],
    models: list[str],
    groups: pd.DataFrame | None = None,
    measure_groups: dict[str, tuple[str, ...]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Table 2 with bootstrap intervals, from ``inference.summary`` frames stacked with a
    ``dataset`` column. Returns (the CSV frame: per model its value, low and high; the
    LaTeX frame: per model 'value [low, high]'; the bold mask of the LaTeX frame, best
    value per row as in Table 2). ``measure_groups``: the groups of rows
    (:func:`table_groups` of the measure files: with opt-in measures their groups too);
    default ``userfair.measures.GROUPS``.

    With ``groups`` (``groups.csv``: dataset, by, model, measure, value, low, high) each
    dataset's rows end with its group measures (UserMAD-P, UserMAD-NDCG) per grouping, in
    the group :data:`GROUP_FAIRNESS`, labelled ``UserMAD-P (activity:0.05)``."""
    indexed = summary.set_index(["dataset", "measure", "model"])
    grouped = None
    if groups is not None and not groups.empty:
        groups = model_names(groups)  # groups.csv labels its models, as every table does
        grouped = groups[groups["measure"].isin(FAIR_GROUP)].set_index(
            ["dataset", "by", "measure", "model"]
        )
    csv_rows, tex_rows, values, names = [], [], [], []
    for dataset in datasets:
        rows = [
            (group, measure, measure, (dataset, measure))
            for group, measures in (measure_groups or GROUPS).items()
            for measure in measures
        ]
        if grouped is not None and dataset in grouped.index.get_level_values("dataset"):
            bys = dict.fromkeys(grouped.loc[dataset].index.get_level_values("by"))
            rows += [
                (GROUP_FAIRNESS, f"{measure} ({by})", measure, (dataset, by, measure))
                for by in bys
                for measure in FAIR_GROUP
            ]
        for group, label, measure, key in rows:
            source = indexed if len(key) == 2 else grouped
            better = "higher" if higher_is_better(measure) else "lower"
            cells, texts, row_values = [], [], []
            for model in models:
                value, low, high = (
                    float(source.loc[(*key, model), field]) for field in ("value", "low", "high")
                )
                cells += [value, low, high]
                texts.append(_with_interval(value, low, high))
                row_values.append(value)
            csv_rows.append([dataset, group, label, better, *cells])
            tex_rows.append([dataset, group, label, better, *texts])
            values.append(row_values)
            names.append(measure)
    labels = [model_label(m) for m in models]
    head = ["Dataset", "Group", "Measure", "Better"]
    csv_columns = head + [f"{label}{suffix}" for label in labels
                          for suffix in ("", " low", " high")]  # fmt: skip
    csv_frame = pd.DataFrame(csv_rows, columns=csv_columns).set_index("Measure")
    tex_frame = pd.DataFrame(tex_rows, columns=head + labels).set_index("Measure")
    best = best_mask(pd.DataFrame(values, columns=labels), pd.Series(names))
    labels_mask = pd.DataFrame(False, index=best.index, columns=["Dataset", "Group", "Better"])
    bold = pd.concat([labels_mask, best], axis=1)
    bold.index = tex_frame.index
    return csv_frame, tex_frame, bold


def _with_interval(value: float, low: float, high: float) -> str:
    if not math.isfinite(value):
        return "--"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{value:.4f}"
    return f"{value:.4f} [{low:.4f}, {high:.4f}]"


def write_scores_ci(
    summary,
    datasets,
    models,
    csv_path,
    tex_path,
    conventions: dict,
    level: float,
    resamples: int,
    groups: pd.DataFrame | None = None,
    measure_groups: dict[str, tuple[str, ...]] | None = None,
) -> pd.DataFrame:
    """Table 2 with intervals as CSV (value, low, high per model) and booktabs LaTeX; with
    ``groups`` (``groups.csv``) the group measures per grouping after the individual ones;
    ``measure_groups`` as in :func:`table_scores_ci`."""
    csv_frame, tex_frame, bold = table_scores_ci(summary, datasets, models, groups, measure_groups)
    with atomic_path(csv_path) as tmp:
        csv_frame.to_csv(tmp)
    caption = (
        rf"Eff and Fair scores at $k$ with {100 * level:g}\% percentile intervals over "
        f"{resamples:,} bootstrap resamples of the evaluated users (the same resamples for "
        "every model of a dataset); the best score per measure in bold. "
        + conventions_caption(conventions)
    )
    with atomic_path(tex_path) as tmp:
        tmp.write_text(to_booktabs(tex_frame, bold=bold, caption=caption, label="tab:scores-ci"))
    return csv_frame
