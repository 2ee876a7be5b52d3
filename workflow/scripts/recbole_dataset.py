"""Rule recbole_dataset: the dataset's RecBole dataset, its parts, sampler and evaluation
loaders, built once and saved for every training and export job of the dataset."""

import logging

from userfair import recommenders
from userfair.joblog import job_log

with job_log(snakemake):
    shared = recommenders.build_shared(
        snakemake.params.data_dir,
        snakemake.wildcards.dataset,
        snakemake.params.workdir,
        recommenders.Training(**snakemake.params.training, device="cpu", threads=snakemake.threads),
    )
    recommenders.write_shared(shared, snakemake.output[0])
    logging.info("saved %s", snakemake.output[0])
