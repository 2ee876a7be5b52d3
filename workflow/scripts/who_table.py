"""Rule who_table: each Fair measure's share by group of users, with bootstrap intervals."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.who import who_table

with job_log(snakemake):
    p = snakemake.params
    # named inputs "D/M" (rules/common/paths.smk, per_run)
    who_table(
        dict(snakemake.input.items()),
        p.datasets,
        p.models,
        snakemake.output[0],
        groups=p.groups,
        features=p.features,
        resamples=p.resamples,
        seed=p.seed,
        level=p.level,
    )
