"""Rule measure_sums: pass two of the streamed measures of one dataset x model over one
scattered row range."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import measure_sums

with job_log(snakemake):
    measure_sums(
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.input.pairs,
        snakemake.output[0],
        scatteritem=snakemake.wildcards.scatteritem,
        settings=steps.MeasureSettings.of(snakemake.params),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        files=steps.SideFiles.of(snakemake.input),
    )
