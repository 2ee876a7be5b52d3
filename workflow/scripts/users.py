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
        route=steps.route_of(snakemake.params.route, snakemake.input),
        settings=steps.MeasureSettings.of(
            snakemake.params, besides=(steps.WhoSettings, "route", "source")
        ),
        who_settings=steps.WhoSettings.of(
            snakemake.params, besides=(steps.MeasureSettings, "route", "source")
        ),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        source=snakemake.params.source,
        files=steps.SideFiles.of(snakemake.input),
    )
