"""Rule fig_relevance: the figure of the relevance experiment, PDF and PNG."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_relevance

with job_log(snakemake):
    fig_relevance(
        list(snakemake.input.data),
        snakemake.output.pdf,
        snakemake.output.png,
        style=snakemake.params.style,
    )
