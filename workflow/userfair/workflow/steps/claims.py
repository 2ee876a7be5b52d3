"""Steps of the claims stage (workflow/rules/claims.smk): claims. Reads a run's files into
:class:`userfair.workflow.properties.DatasetRun` per dataset, measures every measure's
properties (:func:`userfair.workflow.properties.measure_properties`), checks the paper's
claims over them (:func:`userfair.workflow.claims.check`) and writes the tables and the
report's first page (:mod:`userfair.workflow.front_page`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import pandas as pd

from userfair.files.io import atomic_path, read_json, write_csv
from userfair.workflow import claims as checks
from userfair.workflow import front_page, properties, steps, tables
from userfair.workflow.steps.uncertainty import read_resamples

log = logging.getLogger(__name__)

Path = str | os.PathLike
#: The experiment tables a dataset's claims read, by their named input.
EXPERIMENTS = ("relevance", "similarity", "extreme")


def read_run(
    inputs: Mapping[str, Path], dataset: str, models: list[str], level: float
) -> properties.DatasetRun:
    """One dataset's :class:`~userfair.workflow.properties.DatasetRun` from the named
    inputs ``measures:D/M/r`` (replicate r's measures file; r = 0 the model's own),
    ``resamples:D/M/r`` (its bootstrap frame, with the bootstrap on), ``stats:D`` and
    ``relevance:D``, ``similarity:D``, ``extreme:D`` (the experiment tables, when given)."""
    files = steps.named(inputs, prefix="measures:")
    resample_files = steps.named(inputs, prefix="resamples:")
    replicates = sorted(
        {int(name.rsplit("/", 1)[1]) for name in files if name.startswith(f"{dataset}/")}
    )
    records = {}
    for r in replicates:
        paths = {m: files[f"{dataset}/{m}/{r}"] for m in models}
        records[r] = {m: tables.check_measures(read_json(paths[m]), paths[m]) for m in models}
    points = {m: dict(records[0][m]) for m in models}
    names = [
        n for n in properties.DatasetRun(dataset, points).measure_names() if properties.declared(n)
    ]
    draws = None
    if resample_files:
        frames = {m: [] for m in models}
        for r in replicates:
            for m in models:
                frame = read_resamples(resample_files[f"{dataset}/{m}/{r}"], names)[names]
                frames[m].append(frame.reset_index(drop=True).assign(replicate=r))
        draws = {
            m: pd.concat(parts, ignore_index=True).drop(columns="replicate")
            for m, parts in frames.items()
        }
    stats = read_json(inputs[f"stats:{dataset}"])
    tables_of = {
        kind: pd.read_parquet(inputs[f"{kind}:{dataset}"])
        for kind in EXPERIMENTS
        if f"{kind}:{dataset}" in inputs
    }
    return properties.DatasetRun(
        dataset=dataset,
        points=points,
        seconds={m: dict(records[0][m].get("seconds", {})) for m in models},
        users=int(stats.get("test_users", 0)),
        draws=draws,
        replicates={r: records[r] for r in replicates} if len(replicates) > 1 else {},
        level=level,
        **tables_of,
    )


def claims(
    inputs: Mapping[str, Path],
    outputs: Mapping[str, Path],
    datasets: list[str],
    models: list[str],
    level: float,
    run: Mapping,
) -> pd.DataFrame:
    """Rule claims: per dataset the measures' properties and the paper's claims; writes
    ``properties`` (measure_properties.csv), ``claims`` (claims.csv), ``across``
    (claims_across.csv: on how many datasets each claim holds) and ``front`` (the
    report's first page, reStructuredText). ``run``: what ran (seed, replicates, grid,
    epochs, resamples) for the first page; the paper-gap verdicts are read from the named
    input ``verdicts`` when given."""
    all_properties, all_claims, runs = [], [], []
    for dataset in datasets:
        data = read_run(inputs, dataset, models, level)
        table = properties.measure_properties(data)
        taus = properties.tau_table(data, data.measure_names())
        all_properties.append(table)
        all_claims.append(checks.check(data, table, taus))
        runs.append(data)
    props = pd.concat(all_properties, ignore_index=True)
    verdicts = pd.concat(all_claims, ignore_index=True)
    across = checks.across(verdicts)
    write_csv(props, outputs["properties"])
    write_csv(verdicts, outputs["claims"])
    write_csv(across, outputs["across"])
    gap = inputs.get("verdicts")
    paper_gap = pd.read_csv(gap) if gap else None
    with atomic_path(outputs["front"]) as tmp:
        tmp.write_text(front_page.render(runs, props, verdicts, across, run, paper_gap))
    for row in verdicts.itertuples():
        log.info("%s on %s: %s (%s)", row.claim, row.dataset, row.verdict, row.evidence)
    return verdicts
