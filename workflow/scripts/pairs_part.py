"""Rule pairs_part: pass one of the streamed measures over one scattered row range."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import pairs_part

with job_log(snakemake):
    pairs_part(
        snakemake.input.train,
        snakemake.input.test,
        snakemake.output[0],
        scatteritem=snakemake.wildcards.scatteritem,
        settings=steps.MeasureSettings.of(snakemake.params),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        files=steps.SideFiles.of(snakemake.input),
    )
