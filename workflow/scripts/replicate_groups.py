"""Rule replicate_groups: the group measures of one replicate of one dataset x model for
every grouping, with their bootstrap resamples (replicate 0's weights; the same step as
rule groups)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.groups import groups_job

with job_log(snakemake):
    groups_job(
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
