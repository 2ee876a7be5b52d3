"""Rule fig_similarity: the figure of the similarity experiment, PDF and PNG."""

import logging

from userfair import plots
from userfair.io import read_stacked_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    frame = read_stacked_parquet(snakemake.input.data)
    plots.similarity_figure(
        frame, plots.Style(**snakemake.params.style), snakemake.output.pdf, snakemake.output.png
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
