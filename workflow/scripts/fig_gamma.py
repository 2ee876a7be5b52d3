"""Rule fig_gamma: the appendix figures (UF and PUF for every gamma), PDF and PNG."""

import logging

from userfair import experiments, plots
from userfair.joblog import job_log

with job_log(snakemake):
    style = plots.Style(**snakemake.params.style)
    out = snakemake.output
    plots.gamma_models_figure(
        experiments.load_tables(snakemake.input.models), style, out.models_pdf, out.models_png
    )
    plots.gamma_relevance_figure(
        experiments.load_tables(snakemake.input.relevance),
        style,
        out.relevance_pdf,
        out.relevance_png,
    )
    logging.info("gamma figures written")
