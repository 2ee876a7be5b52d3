"""Rule fig_intervals: every Fair measure per model with its bootstrap interval."""

import logging

import pandas as pd

from userfair import plots, tables
from userfair.joblog import job_log

with job_log(snakemake):
    plots.intervals_figure(
        pd.read_csv(snakemake.input.intervals),
        tables.FAIR,
        snakemake.params.models,
        plots.Style(**snakemake.params.style),
        snakemake.output.pdf,
        snakemake.output.png,
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
