"""Rule fig_extreme: the figure of the extreme experiment, PDF and PNG, and its
reading (the caption's sentences about this run)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_extreme

with job_log(snakemake):
    fig_extreme(
        list(snakemake.input.data),
        snakemake.output.pdf,
        snakemake.output.png,
        snakemake.output.reading,
        style=snakemake.params.style,
    )
