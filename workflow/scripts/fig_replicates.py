"""Rule fig_replicates: each model's per-replicate values beside its interval over
replicates and users."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_replicates

with job_log(snakemake):
    fig_replicates(
        snakemake.input.values,
        snakemake.input.scores,
        snakemake.output.pdf,
        snakemake.output.png,
        **snakemake.params,
    )
