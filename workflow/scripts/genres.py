"""Rule genres: the .item file (item genres) of the items in one dataset's split."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import genres

with job_log(snakemake):
    p = snakemake.params
    genres(
        snakemake.wildcards.dataset,
        p.declaration,
        p.source,
        list(snakemake.input.splits),
        snakemake.output[0],
    )
