"""Rule measures: every Eff and Fair measure of one dataset x model, with seconds, on the
dense route (the similarity files) or the streamed one (pass one and pass two, gathered):
the route is params.route (rules/common/route.smk, measure_route), passed down as a
steps.Route with its files."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import measures

with job_log(snakemake):
    measures(
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.output[0],
        route=steps.route_of(snakemake.params.route, snakemake.input),
        settings=steps.MeasureSettings.of(snakemake.params, besides=("route",)),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        files=steps.SideFiles.of(snakemake.input),
    )
