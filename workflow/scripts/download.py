"""Rule download: put the raw archive of one dataset under resources/raw/
(see userfair.download)."""

from userfair.download import fetch
from userfair.joblog import job_log

with job_log(snakemake):
    fetch(
        snakemake.wildcards.dataset,
        snakemake.output[0],
        url=snakemake.params.url,
        sha256=snakemake.params.sha256,
    )
