"""Rule fig_similarity: the figure of the similarity experiment, PDF and PNG."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_similarity

with job_log(snakemake):
    fig_similarity(
        list(snakemake.input.data),
        snakemake.output.pdf,
        snakemake.output.png,
        style=snakemake.params.style,
    )
