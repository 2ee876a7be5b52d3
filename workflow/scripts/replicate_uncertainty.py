"""Rule replicate_uncertainty: the bootstrap resamples of every measure of one replicate of
one dataset x model, with replicate 0's weights (the same step as rule uncertainty)."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.uncertainty import uncertainty

with job_log(snakemake):
    uncertainty(
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.input.cos,
        snakemake.input.jacc,
        list(snakemake.input.genre),
        snakemake.output[0],
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
    )
