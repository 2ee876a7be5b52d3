"""Rule fig_similarity: the figure of the similarity experiment, PDF and PNG, and its
reading (the caption's sentences about this run)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_similarity

with job_log(snakemake):
    fig_similarity(
        list(snakemake.input.data),
        snakemake.output.pdf,
        snakemake.output.png,
        snakemake.output.reading,
        style=snakemake.params.style,
    )
