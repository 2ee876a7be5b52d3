"""Rule uncertainty: the bootstrap resamples of every measure of one dataset x model."""

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
        resamples=snakemake.params.resamples,
        settings=steps.MeasureSettings.of(snakemake.params, besides=("resamples",)),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        files=steps.SideFiles.of(snakemake.input),
    )
