"""Rule replicate_measures: every Eff and Fair measure of one replicate of one dataset x
model, as rule measures computes them for replicate 0 (the same step, the replicate's
lists)."""

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
        **steps.named(snakemake.input, keys=("cos", "jacc", "genre", "pairs", "sums", "item")),
    )
