"""Rule exp_extreme: the Fig. 4 experiment (MostFair / MostUnfair) of one dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.experiments import exp_extreme

with job_log(snakemake):
    exp_extreme(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.test,
        snakemake.output[0],
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
    )
