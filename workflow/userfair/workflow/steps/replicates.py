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

from userfair import replicates as inference
from userfair.agreement import oriented
from userfair.io import read_json, read_parquet, write_csv
from userfair.measures import NAMES
from userfair.workflow import reproduction
from userfair.workflow.steps import Path
from userfair.workflow.tables import check_measures, label_models

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
    the paper's best is ours and beats our runner-up after Holm."""
    paper_best = _paper_best(paper) if paper is not None else {}
    rows = []
    for dataset, points in datasets_points.items():
        models = list(points)
        for measure in measures:
            per_rep = np.array([oriented(measure, points[m][measure].sort_index()) for m in models])
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
) -> dict:  # fmt: skip
    """Rule table_replicates: from every replicate's measures and bootstrap resamples (keyed
    ``D/M/r``; a model without a seed has replicate 0's files for every r): the values per
    replicate (replicates.csv), where a run's value varies (variance.csv), Table 2 with
    intervals over both sources, the paired comparisons with Holm and the tau intervals
    (userfair.replicates), and the conclusions that survive (conclusions.csv). The datasets
    of ``nested`` redraw their split per replicate (training.replicate_split): their
    inference is ``nested`` (each replicate keeps its own users)."""
    values, shares, summaries, comparisons, taus, all_points = [], [], [], [], [], {}
    for dataset in datasets:
        resamples, points = {}, {}
        for model in models:
            keys = [f"{dataset}/{model}/{r}" for r in range(replicates)]
            records = [check_measures(read_json(measure_files[k]), measure_files[k]) for k in keys]
            frames = [read_parquet(resample_files[k]) for k in keys]
            resamples[model], points[model] = inference.stack(
                frames, [{m: r[m] for m in NAMES} for r in records]
            )
            long = points[model].reset_index().melt(id_vars="replicate", var_name="measure")
            values.append(long.assign(dataset=dataset, model=model))
        all_points[dataset] = points
        own = {"nested": dataset in nested}
        shares.append(inference.variance(resamples, points, **own).assign(dataset=dataset))
        summaries.append(inference.summary(resamples, points, level, **own).assign(dataset=dataset))
        comparisons.append(
            inference.significance(resamples, points, level, **own).assign(dataset=dataset)
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
        "conclusions": conclusions(all_points, compared, reproduction.paper_table(2)),
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
