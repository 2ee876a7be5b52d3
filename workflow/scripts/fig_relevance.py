"""Rule fig_relevance: the figure of the relevance experiment, PDF and PNG."""

import logging

from userfair import experiments, plots
from userfair.joblog import job_log

with job_log(snakemake):
    frame = experiments.load_tables(snakemake.input.data)
    plots.relevance_figure(
        frame, plots.Style(**snakemake.params.style), snakemake.output.pdf, snakemake.output.png
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
