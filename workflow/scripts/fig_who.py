"""Rule fig_who: each Fair measure's share by activity group per model, with intervals."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_who

with job_log(snakemake):
    fig_who(
        snakemake.input.table,
        snakemake.output.pdf,
        snakemake.output.png,
        **snakemake.params,
    )
