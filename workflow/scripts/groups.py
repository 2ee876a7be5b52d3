"""Rule groups: the group measures of one dataset x model for every grouping, with their
bootstrap resamples."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.groups import groups

with job_log(snakemake):
    groups(
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        list(snakemake.input.raw),
        snakemake.output.json,
        snakemake.output.resamples,
        dataset=snakemake.wildcards.dataset,
        **snakemake.params,
    )
