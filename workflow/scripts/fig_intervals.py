"""Rule fig_intervals: every Fair measure per model with its bootstrap interval."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_intervals

with job_log(snakemake):
    fig_intervals(
        snakemake.input.intervals,
        snakemake.output.pdf,
        snakemake.output.png,
        **snakemake.params,
    )
