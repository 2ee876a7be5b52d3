"""Rule similarity: one user-similarity file (cos, jacc or genre) of a dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import similarity

with job_log(snakemake):
    similarity(
        snakemake.wildcards.kind,
        snakemake.input.train,
        snakemake.input.test,
        snakemake.output[0],
        # speed-only: not a param (no rerun)
        block_size=steps.speed(snakemake.config)["block_size"],
        # the config, not a param: a new threshold must not rebuild a dense file
        stream_above=snakemake.config["measures"]["stream_above"],
        files=steps.SideFiles.of(snakemake.input),
    )
