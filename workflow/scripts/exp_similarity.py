"""Rule exp_similarity: the Fig. 3 experiment (varying similarity) of one dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.experiments import exp_similarity

with job_log(snakemake):
    exp_similarity(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.input.jacc,
        snakemake.output[0],
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
    )
