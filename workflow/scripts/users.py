"""Rule users: every evaluated user's share of every Fair measure of one dataset x model,
and the most disadvantaged users (docs/method.md#who)."""

from userfair.joblog import job_log
from userfair.workflow import steps
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
        **steps.named(snakemake.input, keys=("cos", "jacc", "genre", "pairs", "item", "raw")),
    )
