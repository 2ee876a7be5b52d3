"""Rule measures: every Eff and Fair measure of one dataset x model, with seconds, on the
dense route (the similarity files) or the streamed one (pass one and pass two, gathered):
the route is params.route (rules/common/route.smk, measure_route)."""

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
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
        **steps.named(
            snakemake.input,
            keys=("cos", "jacc", "genre", "pairs", "sums", "item", "vectors", "grades"),
        ),
    )
