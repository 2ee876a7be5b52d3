"""Steps of the replicates stage (workflow/rules/replicates.smk): the tables over replicates
and users (table_replicates). The training of a replicate (rule replicate) is
``userfair.workflow.steps.models.replicate``, in the training environment; replicate_measures
and replicate_uncertainty are the measures and uncertainty steps on a replicate's lists."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from userfair.bootstrap import replicates as inference
from userfair.files.io import read_json, read_parquet, write_csv
from userfair.formulas.agreement import oriented
from userfair.measures import FAIR_GROUP, NAMES, plugin_names
from userfair.workflow import reproduction
from userfair.workflow.steps import Path
from userfair.workflow.steps.groups import labelled, measure_of
from userfair.workflow.tables import check_measures, held_plugins, label_models

log = logging.getLogger(__name__)


def _paper_best(paper: pd.DataFrame) -> dict:
    """{(dataset, measure): the models whose printed value is the best of the paper's Table 2
    row (the bold one; ties all kept)} from userfair/workflow/paper_numbers/table2.csv."""
    best = {}
    for (dataset, measure), row in paper.groupby(["dataset", "measure"], sort=False):
        values = oriented(measure, row["value"].to_numpy(float))
        if np.isfinite(values).any():
            top = np.nanmax(values)
            best[(dataset, measure)] = sorted(row["model"][values == top])
    return best


def conclusions(
    datasets_points: Mapping[str, Mapping[str, pd.DataFrame]],
    compared: pd.DataFrame,
    paper: pd.DataFrame | None = None,
    measures=NAMES,
) -> pd.DataFrame:
    """Per dataset and measure: the ``best`` model (best mean over the replicates) and the
    ``runner_up``, the Holm-adjusted p of their paired comparison over both sources and
    whether it is below alpha (``beats_runner_up``), ``best_share``: the share of replicates
    r in which the best model is also the best of replicate r (ties count), and, where the
    paper's Table 2 has the row, its best model(s) (``paper_best``) and ``paper_survives``:
    the paper's best is ours and beats our runner-up after Holm. A measure of ``measures``
    a dataset lacks (a grouping of another dataset) is skipped; a group measure's
    direction is its measure's (``UserMAD-P (activity:0.05)``: lower is fairer)."""
    paper_best = _paper_best(paper) if paper is not None else {}
    rows = []
    for dataset, points in datasets_points.items():
        models = list(points)
        for measure in measures:
            if measure not in points[models[0]].columns:
                continue
            direction = measure_of(measure)
            per_rep = np.array(
                [oriented(direction, points[m][measure].sort_index()) for m in models]
            )
            means = np.array([np.nanmean(v) if np.isfinite(v).any() else np.nan for v in per_rep])
            if not np.isfinite(means).any() or len(models) < 2:
                continue
            order = np.argsort(-np.where(np.isfinite(means), means, -np.inf), kind="stable")
            best, runner = models[order[0]], models[order[1]]
            tops = np.nanmax(per_rep, axis=0)
            share = float(np.mean(per_rep[order[0]] == tops))
            pair = compared[
                (compared["dataset"] == dataset)
                & (compared["measure"] == measure)
                & compared["model_a"].isin([best, runner])
                & compared["model_b"].isin([best, runner])
            ]
            p_holm = float(pair["p_holm"].iloc[0]) if len(pair) else math.nan
            significant = bool(pair["significant"].iloc[0]) if len(pair) else False
            printed = paper_best.get((dataset, measure))
            rows.append(
                {
                    "dataset": dataset, "measure": measure, "best": best, "runner_up": runner,
                    "p_holm": p_holm, "beats_runner_up": significant, "best_share": share,
                    "paper_best": "|".join(printed) if printed else "",
                    "paper_survives": (best in printed and significant) if printed else None,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def table_replicates(
    measure_files: Mapping[str, Path], resample_files: Mapping[str, Path], datasets: list[str],
    models: list[str], replicates: int, *, level: float, seed: int,
    nested: Sequence[str] = (), values_csv: Path, variance_csv: Path, scores_csv: Path,
    significance_csv: Path, agreement_csv: Path, conclusions_csv: Path,
    group_files: Mapping[str, Path] | None = None,
    group_resamples: Mapping[str, Path] | None = None,
) -> dict:  # fmt: skip
    """Rule table_replicates: from every replicate's measures and bootstrap resamples (keyed
    ``D/M/r``; a model without a seed has replicate 0's files for every r): the values per
    replicate (replicates.csv), where a run's value varies (variance.csv), Table 2 with
    intervals over both sources, the paired comparisons with Holm and the tau intervals
    (userfair.bootstrap.replicates), and the conclusions that survive (conclusions.csv). With the
    group stage on, ``group_files`` and ``group_resamples`` (rule groups' JSON and parquet
    of every replicate, keyed ``D/M/r``) add every grouping's group measures and group
    means (named ``UserMAD-P (activity:0.05)``, ``P[active] (activity:0.05)``) to every
    table but the tau intervals, and its group measures to the conclusions. The datasets
    of ``nested`` redraw their split per replicate (training.replicate_split): their
    inference is ``nested`` (each replicate keeps its own users)."""
    values, shares, summaries, comparisons, taus, all_points = [], [], [], [], [], {}
    grouped = []  # the plugins, then the group measures: beside NAMES in the conclusions
    for dataset in datasets:
        resamples, points = {}, {}
        names = _read_replicates(
            dataset, models, replicates, measure_files, resample_files, group_files or {},
            group_resamples or {}, resamples, points,
        )  # fmt: skip
        grouped += [
            n
            for n in names
            if n not in grouped and (measure_of(n) in FAIR_GROUP or n in plugin_names())
        ]
        for model in models:
            long = points[model].reset_index().melt(id_vars="replicate", var_name="measure")
            values.append(long.assign(dataset=dataset, model=model))
        all_points[dataset] = points
        own = {"nested": dataset in nested}
        shares.append(inference.variance(resamples, points, names, **own).assign(dataset=dataset))
        summaries.append(
            inference.summary(resamples, points, level, names, **own).assign(dataset=dataset)
        )
        comparisons.append(
            inference.significance(resamples, points, level, names, **own).assign(dataset=dataset)
        )
        taus.append(
            inference.tau_intervals(resamples, points, level, seed=seed, **own).assign(
                dataset=dataset
            )
        )
    compared = pd.concat(comparisons, ignore_index=True)
    out = {
        "values": pd.concat(values, ignore_index=True)[
            ["dataset", "model", "replicate", "measure", "value"]
        ],
        "variance": pd.concat(shares, ignore_index=True),
        "scores": pd.concat(summaries, ignore_index=True),
        "significance": compared,
        "agreement": pd.concat(taus, ignore_index=True),
        "conclusions": conclusions(
            all_points, compared, reproduction.paper_table(2), NAMES + tuple(grouped)
        ),
    }
    paths = {
        "values": values_csv, "variance": variance_csv, "scores": scores_csv,
        "significance": significance_csv, "agreement": agreement_csv,
        "conclusions": conclusions_csv,
    }  # fmt: skip
    for name, frame in out.items():
        first = ["dataset"] + [c for c in frame.columns if c != "dataset"]
        write_csv(label_models(frame[first]), paths[name])  # U-KNN, as every table
    log.info("conclusions over %d replicates:\n%s", replicates, out["conclusions"].to_string())
    return out


def _read_replicates(
    dataset, models, replicates, measure_files, resample_files, group_files, group_resamples,
    resamples, points,
) -> list[str]:  # fmt: skip
    """Fill ``resamples[model]`` and ``points[model]`` (userfair.bootstrap.replicates.stack) of one
    dataset from every replicate's files, the plugin measures (docs/plugins.md) and the group
    columns beside the measures when the files have them; return the measure names,
    :data:`NAMES` first, then the plugins, then the groups. A group a replicate lacks
    (dropped: no evaluated user) is NaN there."""
    frames, rows, records = {}, {}, {}
    for model in models:
        for r in range(replicates):
            key = f"{dataset}/{model}/{r}"
            records[(dataset, model, str(r))] = check_measures(
                read_json(measure_files[key]), measure_files[key]
            )
    measures = NAMES + held_plugins(records)  # a plugin only where every file holds it
    for model in models:
        keys = [f"{dataset}/{model}/{r}" for r in range(replicates)]
        frames[model] = [read_parquet(resample_files[k]) for k in keys]
        rows[model] = [
            {m: records[(dataset, model, str(r))][m] for m in measures} for r in range(replicates)
        ]
        for i, key in enumerate(keys if _has_groups(group_files, keys) else ()):
            extra, frame = labelled(read_json(group_files[key]), read_parquet(group_resamples[key]))
            rows[model][i].update(extra)
            frames[model][i] = frames[model][i].join(frame)
    names = list(dict.fromkeys(n for model in models for row in rows[model] for n in row))
    for model in models:
        resamples[model], points[model] = inference.stack(
            [frame.reindex(columns=names) for frame in frames[model]], rows[model]
        )
    return names


def _has_groups(files: Mapping[str, Path], keys: list[str]) -> bool:
    """Whether ``files`` has every key of ``keys`` (none: the group stage is off); some but
    not all is an error naming the first missing."""
    missing = [k for k in keys if k not in files]
    if files and missing:
        raise ValueError(
            f"no groups file named {missing[0]!r}: the group stage's inputs of "
            "table_replicates must cover every dataset, model and replicate"
        )
    return not missing
