"""Rule table_uncertainty: Table 2 with bootstrap intervals, the paired model comparisons
(Holm within each measure) and the Kendall tau intervals of Fig. 1, from every model's
resamples."""

import logging

import pandas as pd

from userfair import tables, uncertainty
from userfair.io import atomic_path, read_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    # named inputs "measures:D/M" and "resamples:D/M" (workflow/rules/common.smk, per_run)
    measure_files = {f"{d}/{m}": snakemake.input[f"measures:{d}/{m}"]
                     for d in p.datasets for m in p.models}  # fmt: skip
    records = tables.read_measure_files(measure_files, p.datasets, p.models)
    summaries, comparisons, taus = [], [], []
    for dataset in p.datasets:
        frames = {m: read_parquet(snakemake.input[f"resamples:{dataset}/{m}"]) for m in p.models}
        points = {m: records[(dataset, m)] for m in p.models}
        summaries.append(uncertainty.summary(frames, points, p.level).assign(dataset=dataset))
        comparisons.append(
            uncertainty.significance(frames, points, p.level).assign(dataset=dataset)
        )
        taus.append(uncertainty.tau_intervals(frames, points, p.level).assign(dataset=dataset))
    summary = pd.concat(summaries, ignore_index=True)
    tables.write_scores_ci(
        summary,
        p.datasets,
        p.models,
        snakemake.output.csv,
        snakemake.output.tex,
        tables.shared_conventions(records),
        p.level,
        p.resamples,
    )
    for frame, path in (
        (summary, snakemake.output.intervals),
        (pd.concat(comparisons, ignore_index=True), snakemake.output.significance),
        (pd.concat(taus, ignore_index=True), snakemake.output.agreement),
    ):
        frame = frame[["dataset"] + [c for c in frame.columns if c != "dataset"]]
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    significant = pd.concat(comparisons)
    logging.info(
        "significant model differences (Holm, level %s):\n%s",
        p.level,
        significant[significant["significant"]].to_string(),
    )
