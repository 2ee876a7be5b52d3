"""Rule fig_variants: the PUF variants' tau heatmap and Figs. 3 and 4 with each similarity,
PDF and PNG."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_variants

with job_log(snakemake):
    out = snakemake.output
    fig_variants(
        snakemake.input.tau,
        list(snakemake.input.similarity),
        list(snakemake.input.observed),
        list(snakemake.input.extreme),
        out.tau_pdf,
        out.tau_png,
        out.similarity_pdf,
        out.similarity_png,
        out.extreme_pdf,
        out.extreme_png,
        out.tau_reading,
        out.similarity_reading,
        out.extreme_reading,
        style=snakemake.params.style,
    )
