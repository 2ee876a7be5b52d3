"""Rule exp_relevance: the Fig. 2 experiment (varying relevance) of one dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.experiments import exp_relevance

with job_log(snakemake):
    exp_relevance(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.test,
        snakemake.input.jacc,
        list(snakemake.input.genre),
        snakemake.output[0],
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
    )
