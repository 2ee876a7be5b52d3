"""Rule fig_agreement: Fig. 1, the Kendall tau heatmap per dataset, PDF and PNG."""

import logging

import pandas as pd

from userfair import plots
from userfair.joblog import job_log

with job_log(snakemake):
    frame = pd.read_csv(snakemake.input.data)
    plots.agreement_figure(
        frame,
        plots.Style(**snakemake.params.style),
        snakemake.output.pdf,
        snakemake.output.png,
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
