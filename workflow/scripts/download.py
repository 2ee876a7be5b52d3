"""Rule download: put the raw file of one dataset under resources/raw/
(see userfair.download)."""

from userfair import catalogue
from userfair.download import fetch
from userfair.io import InputError
from userfair.joblog import job_log

with job_log(snakemake):
    dataset = catalogue.resolve(snakemake.wildcards.dataset, snakemake.params.declaration)
    if snakemake.output[0] != catalogue.downloaded_archive(dataset):
        raise InputError(
            f"{snakemake.output[0]}: the raw file of {dataset.name} is "
            f"{catalogue.downloaded_archive(dataset)}"
        )
    fetch(dataset, snakemake.output[0], url=snakemake.params.url, sha256=snakemake.params.sha256)
