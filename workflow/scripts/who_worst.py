"""Rule who_worst: the most disadvantaged users of every model."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.who import who_worst

with job_log(snakemake):
    p = snakemake.params
    # named inputs "D/M" (rules/common/paths.smk, per_run)
    who_worst(dict(snakemake.input.items()), p.datasets, p.models, snakemake.output[0])
