"""Rule fig_agreement: Fig. 1, the Kendall tau heatmap per dataset, PDF and PNG."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_agreement

with job_log(snakemake):
    fig_agreement(
        snakemake.input.data,
        list(snakemake.input.intervals),
        snakemake.output.pdf,
        snakemake.output.png,
        style=snakemake.params.style,
        groups=list(snakemake.input.groups),
        replicates=snakemake.params.replicates,
    )
