"""Rule download: put the raw file of one dataset under resources/raw/
(userfair.workflow.download)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import download

with job_log(snakemake):
    p = snakemake.params
    download(
        snakemake.wildcards.dataset, p.declaration, snakemake.output[0], url=p.url,
        sha256=p.sha256, other_hosts=p.other_hosts, max_mb=p.max_mb,
    )  # fmt: skip
