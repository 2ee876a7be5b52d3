"""Rule preprocess: steps 1-3 of docs/method.md#data on the raw interactions of one dataset."""

from userfair import catalogue, data
from userfair.io import atomic_path
from userfair.joblog import job_log

with job_log(snakemake):
    dataset = catalogue.resolve(snakemake.wildcards.dataset, snakemake.params.declaration)
    frame = data.preprocess_file(
        dataset,
        snakemake.params.source,
        min_rating=snakemake.params.min_rating,
        core=snakemake.params.core,
    )
    with atomic_path(snakemake.output[0]) as tmp:
        data.as_written(frame).to_parquet(tmp, index=False)
