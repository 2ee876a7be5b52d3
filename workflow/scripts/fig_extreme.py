"""Rule fig_extreme: the figure of the extreme experiment, PDF and PNG."""

import logging

from userfair import plots
from userfair.io import read_stacked_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    frame = read_stacked_parquet(snakemake.input.data)
    plots.extreme_figure(
        frame, plots.Style(**snakemake.params.style), snakemake.output.pdf, snakemake.output.png
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
