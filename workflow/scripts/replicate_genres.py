"""Rule replicate_genres: the .item file (item genres) of the items in replicate r's split of
one dataset (training.replicate_split), as rule genres writes the dataset's."""

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
