"""Rule fig_gamma: the appendix figures (UF and PUF for every gamma), PDF and PNG."""

import logging

from userfair import plots
from userfair.io import read_stacked_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    style = plots.Style(**snakemake.params.style)
    out = snakemake.output
    plots.gamma_models_figure(
        read_stacked_parquet(snakemake.input.models), style, out.models_pdf, out.models_png
    )
    plots.gamma_relevance_figure(
        read_stacked_parquet(snakemake.input.relevance),
        style,
        out.relevance_pdf,
        out.relevance_png,
    )
    logging.info("gamma figures written")
