"""Rule fig_who: share of each Fair measure by activity group per model, with intervals."""

import logging

import pandas as pd

from userfair import plots, who
from userfair.joblog import job_log

with job_log(snakemake):
    who.who_figure(
        pd.read_csv(snakemake.input.table, dtype={"group": str}),
        snakemake.params.models,
        plots.Style(**snakemake.params.style),
        snakemake.output.pdf,
        snakemake.output.png,
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
