"""Rule fig_gamma: the appendix figures (UF and PUF for every gamma), PDF and PNG,
and their readings."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_gamma

with job_log(snakemake):
    out = snakemake.output
    fig_gamma(
        list(snakemake.input.models),
        list(snakemake.input.relevance),
        out.models_pdf,
        out.models_png,
        out.relevance_pdf,
        out.relevance_png,
        out.models_reading,
        out.relevance_reading,
        style=snakemake.params.style,
    )
