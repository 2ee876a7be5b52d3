"""The reproduction gap (docs/reproduction.md): the paper's printed numbers beside a run's.

The paper's Tables 1, 2 and 3 ship with the package as CSV (``paper_numbers/table*.csv``),
each row with its provenance: the paper, the table, the dataset, row and column labels as
printed, the project's dataset, measure and model names, and the value. Table 2 keeps the
print as printed; :data:`ROW_MEASURE` puts each printed row beside the project's measure it
really is (the paper prints its ME and MME rows swapped, docs/method.md#reading-table-2).

For every dataset of a run whose preprocessing and split are the paper's
(:func:`why_not_published` says why a dataset is not), :func:`gap_cells` compares each
measure x model with the print: the ratio ours / paper and whether the printed value lies in
the run's bootstrap interval; :func:`order_agreement` gives per measure Kendall's tau-b
between the paper's model ordering and ours, with its interval; :func:`table1_check` says
whether Table 1 is exact. The workflow's ``paper_gap`` rule reads the run's files and
writes the tables and the figure through :func:`userfair.workflow.steps.reproduction.paper_gap`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from importlib import resources

import numpy as np
import pandas as pd

from userfair.bootstrap import inference
from userfair.files.io import InputError, read_json
from userfair.formulas.agreement import kendall_tau_b
from userfair.measures import EFF, NAMES
from userfair.workflow import catalogue
from userfair.workflow.tables import check_measures, model_label

#: The paper whose numbers ship here (the ``paper`` column of every CSV).
PAPER = (
    "Rampisela et al., Measuring Individual User Fairness with User Similarity and "
    "Effectiveness Disparity"
)
#: Printed Table-2 row label -> the project's measure it really is. The print swaps ME and
#: MME (docs/method.md#reading-table-2) and names PUF's rows without the "PUF-" prefix.
ROW_MEASURE = {
    "HR": "HR",
    "MRR": "MRR",
    "P": "P",
    "MAP": "MAP",
    "R": "R",
    "NDCG": "NDCG",
    "SD-P": "SD-P",
    "SD-NDCG": "SD-NDCG",
    "Gini-P": "Gini-P",
    "Gini-NDCG": "Gini-NDCG",
    "ME": "MME",
    "MME": "ME",
    "PEU": "PEU",
    "UF": "UF",
    "Prec-Cos": "PUF-P-Cos",
    "Prec-Jacc": "PUF-P-Jacc",
    "NDCG-Cos": "PUF-NDCG-Cos",
    "NDCG-Jacc": "PUF-NDCG-Jacc",
}
#: Printed Table-3 column -> the project's measure. ME, MME and PEU come from one pass (their
#: printed times differ by at most 0.1 s), so these columns stay as printed.
TIMING_MEASURE = {
    **{label: measure for label, measure in ROW_MEASURE.items() if measure not in EFF},
    "ME": "ME",
    "MME": "MME",
}
#: The paper's preprocessing and split (docs/method.md#data): the config's preprocessing.*
#: defaults. A run with other settings has no published numbers.
PAPER_PREPROCESSING = {
    "min_rating": 3,
    "protocol": "global",
    "core": 5,
    "valid_share": 0.2,
    "test_share": 0.2,
    "min_train_interactions": 5,
}
#: The measures' settings of the paper's Table 2 (k, PEU's epsilon, the envy utility, UF's
#: gamma); a run with others is compared, and its verdict says so.
PAPER_SETTINGS = {"k": 10, "epsilon": 0.05, "envy_utility": "precision", "gamma": 1.0}
#: Half a unit of the print's last digit: Table 2 prints four decimals.
HALF_UNIT = 0.00005
#: The relative distances of the verdict.
TOLERANCES = (0.05, 0.20)
#: The columns of results/tables/paper_gap.csv.
CELL_COLUMNS = ["dataset", "measure", "model", "paper", "ours", "ratio", "lo", "hi", "within"]
NO_NUMBERS = "no published numbers"


@functools.cache
def paper_table(number: int) -> pd.DataFrame:
    """Table ``number`` (1, 2 or 3) of the paper as shipped (paper_numbers/tableN.csv):
    one row per printed cell with its provenance and value."""
    if number not in (1, 2, 3):
        raise ValueError(f"the paper has Tables 1, 2 and 3, not {number!r}")
    source = resources.files("userfair.workflow") / "paper_numbers" / f"table{number}.csv"
    with source.open("r", encoding="utf-8") as handle:
        frame = pd.read_csv(handle, dtype={"printed": str}, keep_default_na=False)
    frame["value"] = pd.to_numeric(frame["value"].replace("", np.nan))
    return frame


def paper_datasets() -> list[str]:
    """The catalogue datasets the paper prints numbers for, in its order."""
    return list(dict.fromkeys(paper_table(2)["dataset"]))


def paper_models() -> list[str]:
    """The project names of the paper's models, in its column order."""
    return list(dict.fromkeys(paper_table(2)["model"]))


def why_not_published(
    dataset: str, custom_datasets: Mapping | None = None, preprocessing: Mapping | None = None
) -> str | None:
    """None when the paper prints numbers for ``dataset`` as this run makes it: a catalogue
    dataset of the paper, preprocessed and split as the paper does (``preprocessing``: the
    config's section, :data:`PAPER_PREPROCESSING`; ``min_rating`` only for a dataset with
    ratings); else the reason, in words."""
    if custom_datasets and dataset in custom_datasets:
        return f"{dataset} is a dataset of custom_datasets"
    if dataset not in paper_datasets():
        return f"the paper does not use {dataset}"
    unrated = catalogue.get(dataset).rating_column is None  # min_rating does not apply
    changed = {
        key: (preprocessing or {}).get(key, value)
        for key, value in PAPER_PREPROCESSING.items()
        if (preprocessing or {}).get(key, value) != value and not (key == "min_rating" and unrated)
    }
    if changed:
        settings = ", ".join(f"preprocessing.{key} = {value}" for key, value in changed.items())
        return (
            f"{settings} (the paper's: "
            + ", ".join(f"{key} = {PAPER_PREPROCESSING[key]}" for key in changed)
            + ")"
        )
    return None


def paper_scores(dataset: str) -> pd.DataFrame:
    """The printed Table-2 values of ``dataset``: index measure (the project's, in
    ``measures.NAMES`` order), one column per model (project names)."""
    part = paper_table(2)
    part = part[part["dataset"] == dataset]
    if part.empty:
        raise InputError(f"the paper prints no Table 2 for dataset {dataset!r}")
    wide = part.pivot(index="measure", columns="model", values="value")
    return wide.reindex(index=list(NAMES), columns=paper_models())


def gap_cells(
    dataset: str,
    points: Mapping[str, Mapping[str, float]],
    summary: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per measure x model of the run that the paper prints (columns
    :data:`CELL_COLUMNS`): the printed value, ours, ``ratio`` = ours / paper (NaN where the
    print is 0), the bootstrap interval ``lo``, ``hi`` (``summary``: the rows of
    ``inference.summary``; NaN without it) and ``within``: the interval meets the printed
    value's rounding interval (paper +- :data:`HALF_UNIT`); empty without an interval."""
    paper = paper_scores(dataset)
    models = [m for m in points if m in paper.columns]
    bounds = None if summary is None else summary.set_index(["model", "measure"])
    rows = []
    for measure in NAMES:
        for model in models:
            printed = float(paper.loc[measure, model])
            ours = _number(points[model][measure])
            low = high = math.nan
            if bounds is not None and (model, measure) in bounds.index:
                low, high = (float(bounds.loc[(model, measure), f]) for f in ("low", "high"))
            within = None
            if math.isfinite(low) and math.isfinite(high):
                within = bool(high >= printed - HALF_UNIT and low <= printed + HALF_UNIT)
            ratio = ours / printed if printed != 0 else math.nan
            rows.append([dataset, measure, model, printed, ours, ratio, low, high, within])
    return pd.DataFrame(rows, columns=CELL_COLUMNS)


def _number(value) -> float:
    return math.nan if value is None else float(value)


def relative_gap(cells: pd.DataFrame) -> pd.Series:
    """|ours - paper| / |paper|, the print's rounding forgiven: |ours - paper| less
    :data:`HALF_UNIT` (not below 0), over max(|paper|, HALF_UNIT); NaN where ours is."""
    distance = (cells["ours"] - cells["paper"]).abs()
    return np.maximum(distance - HALF_UNIT, 0.0) / np.maximum(cells["paper"].abs(), HALF_UNIT)


def order_agreement(
    dataset: str,
    points: Mapping[str, Mapping[str, float]],
    frames: Mapping[str, pd.DataFrame] | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per measure, Kendall's tau-b between the paper's model ordering and ours over the
    models both have (``agreement.kendall_tau_b``; both sides have the same direction, so
    no negation), with the percentile interval over the run's bootstrap resamples
    (``frames``: model -> ``uncertainty.bootstrap`` frame; NaN without them), computed by
    the tau of ``inference.tau_intervals``. Columns: dataset, measure, models, tau, lo,
    hi."""
    paper = paper_scores(dataset)
    models = [m for m in points if m in paper.columns]
    rows = []
    for measure in NAMES:
        printed = paper.loc[measure, models].to_numpy(dtype=float)
        ours = np.array([_number(points[m][measure]) for m in models])
        tau = kendall_tau_b(printed, ours)
        low = high = math.nan
        if frames:
            resampled = np.stack([frames[m][measure].to_numpy(dtype=float) for m in models], 1)
            values = np.stack([np.broadcast_to(printed, resampled.shape), resampled], axis=2)
            low, high = inference.percentile_interval(
                inference.resampled_tau_b(values)[:, 0, 1], level
            )
        rows.append([dataset, measure, len(models), tau, low, high])
    return pd.DataFrame(rows, columns=["dataset", "measure", "models", "tau", "lo", "hi"])


def table1_check(dataset: str, stats: Mapping) -> pd.DataFrame:
    """Table 1 of the paper against the run's stats.json: per field (users, test_users,
    items, interactions, sparsity) the printed value, ours and whether they are equal
    (sparsity: ours rounded to the print's two decimals)."""
    part = paper_table(1)
    part = part[part["dataset"] == dataset]
    rows = []
    for field, printed in zip(part["field"], part["value"]):
        ours = stats.get(field)
        if ours is None:
            raise InputError(f"stats.json of {dataset}: missing field {field!r}")
        exact = round(float(ours), 2) == printed if field == "sparsity" else ours == printed
        rows.append([dataset, field, printed, ours, bool(exact)])
    return pd.DataFrame(rows, columns=["dataset", "field", "paper", "ours", "exact"])


def verdict(dataset: str, cells: pd.DataFrame, table1: pd.DataFrame | None = None) -> dict:
    """The one-line verdict of a dataset (``line``) and its counts: cells, within the
    interval (None without intervals), within 5 % and 20 % (:func:`relative_gap`), the
    worst three cells, Table 1 exact or not."""
    gap = relative_gap(cells)
    n = len(cells)
    has_intervals = cells["within"].notna().any()
    within = int(cells["within"].fillna(False).astype(bool).sum()) if has_intervals else None
    counts = {_count_key(t): int((gap <= t).sum()) for t in TOLERANCES}
    order = gap.fillna(np.inf).sort_values(ascending=False, kind="stable").index[:3]
    worst = "; ".join(
        f"{cells.at[i, 'measure']} {model_label(cells.at[i, 'model'])} "
        + (
            f"x{cells.at[i, 'ratio']:.2f}"
            if math.isfinite(cells.at[i, "ratio"])
            else f"{cells.at[i, 'ours']:.4g} vs {cells.at[i, 'paper']:.4g}"
        )
        for i in order
    )
    exact = None if table1 is None else bool(table1["exact"].all())
    parts = [
        f"{dataset}: "
        + (f"{within}/{n} cells within the interval, " if within is not None else "")
        + ", ".join(f"{counts[_count_key(t)]}/{n} within {100 * t:g} %" for t in TOLERANCES)
    ]
    if within is None:
        parts[0] += " (no intervals: uncertainty.resamples is 0)"
    parts.append(f"worst: {worst}")
    if table1 is not None:
        wrong = table1[~table1["exact"]]
        parts.append(
            "Table 1 exact"
            if exact
            else "Table 1 differs: "
            + ", ".join(
                f"{r.field} {_stat(r.field, r.ours)} vs {_stat(r.field, r.paper)}"
                for r in wrong.itertuples()
            )
        )
    return {
        "dataset": dataset,
        "published": True,
        "cells": n,
        "within_interval": within,
        **counts,
        "worst": worst,
        "table1_exact": exact,
        "line": "; ".join(parts),
    }


def _stat(field: str, value) -> str:
    """A Table-1 value as the print writes it: sparsity with two decimals, counts whole."""
    return f"{float(value):.2f}" if field == "sparsity" else f"{int(value):,}"


def _count_key(tolerance: float) -> str:
    """The verdict's column of the cells within ``tolerance``: within_5pct, within_20pct."""
    return f"within_{100 * tolerance:g}pct"


def no_numbers(dataset: str, reason: str) -> dict:
    """The verdict of a dataset without published numbers."""
    return {
        "dataset": dataset,
        "published": False,
        "cells": 0,
        "within_interval": None,
        **{_count_key(t): None for t in TOLERANCES},
        "worst": "",
        "table1_exact": None,
        "line": f"{dataset}: {NO_NUMBERS} ({reason})",
    }


def settings_note(settings: Mapping) -> str:
    """The measures' settings of a run that differ from the paper's, in words ('' if none)."""
    changed = [
        f"{key} = {settings[key]} (paper: {value})"
        for key, value in PAPER_SETTINGS.items()
        if key in settings and settings[key] != value
    ]
    return "measures not computed as the paper's: " + ", ".join(changed) if changed else ""


def paper_gap(
    datasets: list[str],
    models: list[str],
    measure_files: Mapping[str, str],
    stats_files: Mapping[str, str],
    resample_files: Mapping[str, str] | None = None,
    custom_datasets: Mapping | None = None,
    preprocessing: Mapping | None = None,
    level: float = 0.95,
) -> dict[str, pd.DataFrame]:
    """The gap of every dataset of a run: ``cells`` (paper_gap.csv), ``tau`` (per measure),
    ``table1`` and ``verdicts`` (one row per dataset, those without published numbers
    included). ``measure_files``: "D/M" -> results/D/measures/M.json, ``stats_files``: D
    -> stats.json, ``resample_files``: "D/M" -> results/D/uncertainty/M.parquet (None or
    empty: no intervals), each needed only for the datasets with published numbers."""
    cells, taus, stats, verdicts = [], [], [], []
    for dataset in datasets:
        reason = why_not_published(dataset, custom_datasets, preprocessing)
        if reason is not None:
            verdicts.append(no_numbers(dataset, reason))
            continue
        paths = {m: _file(measure_files, f"{dataset}/{m}") for m in models}
        points = {m: check_measures(read_json(path), path) for m, path in paths.items()}
        frames = summary = None
        if resample_files:
            frames = {m: pd.read_parquet(_file(resample_files, f"{dataset}/{m}")) for m in models}
            summary = inference.summary(frames, points, level)
        part = gap_cells(dataset, points, summary)
        check = table1_check(dataset, read_json(_file(stats_files, dataset)))
        cells.append(part)
        taus.append(order_agreement(dataset, points, frames, level))
        stats.append(check)
        verdicts.append(verdict(dataset, part, check))
        unprinted = [m for m in models if m not in paper_models()]
        if unprinted:
            verdicts[-1]["line"] += f"; {NO_NUMBERS} for {', '.join(unprinted)}"
    return {
        "cells": _concat(cells, CELL_COLUMNS),
        "tau": _concat(taus, ["dataset", "measure", "models", "tau", "lo", "hi"]),
        "table1": _concat(stats, ["dataset", "field", "paper", "ours", "exact"]),
        "verdicts": pd.DataFrame(verdicts).astype(
            {column: "Int64" for column in ("within_interval", *map(_count_key, TOLERANCES))}
        ),
    }


def _file(files: Mapping[str, str], name: str) -> str:
    try:
        return files[name]
    except (KeyError, AttributeError):
        raise InputError(f"paper_gap: no input file named {name!r}") from None


def _concat(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
