"""Rule users: every evaluated user's share of every Fair measure of one dataset x model,
and the most disadvantaged users (docs/method.md#who)."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.who import users

with job_log(snakemake):
    users(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.output.users,
        snakemake.output.worst,
        **snakemake.params,
        # speed-only: not a param (no rerun)
        block_size=steps.speed(snakemake.config)["block_size"],
        **steps.named(snakemake.input, keys=("cos", "jacc", "genre", "pairs", "item", "raw")),
    )
