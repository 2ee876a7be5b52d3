"""Rule fig_agreement: Fig. 1, the Kendall tau heatmap per dataset, PDF and PNG (with the
bootstrap intervals of tau when the workflow computes them)."""

import logging

import pandas as pd

from userfair import plots
from userfair.joblog import job_log

with job_log(snakemake):
    frame = pd.read_csv(snakemake.input.data)
    intervals = [pd.read_csv(path) for path in snakemake.input.intervals]
    plots.agreement_figure(
        frame,
        plots.Style(**snakemake.params.style),
        snakemake.output.pdf,
        snakemake.output.png,
        intervals=intervals[0] if intervals else None,
    )
    logging.info("%s, %s written", snakemake.output.pdf, snakemake.output.png)
