"""Rule run_config: results/run.json, the configuration every table and figure covers."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.targets import run_config

with job_log(snakemake):
    run_config(
        snakemake.params.datasets,
        snakemake.params.models,
        snakemake.output[0],
        snakemake.params.config,
    )
