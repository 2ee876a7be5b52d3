"""Rule fig_groups: each model of a dataset by group unfairness against PUF, both with
intervals, and its reading of the run's tables (the report's caption)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import fig_groups

with job_log(snakemake):
    fig_groups(
        snakemake.input.groups,
        snakemake.input.intervals,
        snakemake.output.pdf,
        snakemake.output.png,
        dataset=snakemake.wildcards.dataset,
        reading=snakemake.output.reading,
        group_tests=snakemake.input.group_tests,
        tests=snakemake.input.tests,
        taus=snakemake.input.taus,
        **snakemake.params,
    )
