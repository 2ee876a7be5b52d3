"""Rule fig_extreme: the figure of the extreme experiment, PDF and PNG."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_extreme

with job_log(snakemake):
    fig_extreme(
        list(snakemake.input.data),
        snakemake.output.pdf,
        snakemake.output.png,
        style=snakemake.params.style,
    )
