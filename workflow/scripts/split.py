"""Rule split: steps 4-5 of docs/method.md#data; writes the RecBole atomic files of
train/valid/test."""

import logging

from userfair import data
from userfair.io import read_parquet, write_inter
from userfair.joblog import job_log

with job_log(snakemake):
    frame = read_parquet(snakemake.input[0])
    splits = data.make_splits(
        frame,
        temporal=snakemake.params.temporal,
        seed=snakemake.params.seed,
        valid_share=snakemake.params.valid_share,
        test_share=snakemake.params.test_share,
        min_train=snakemake.params.min_train,
        label=snakemake.input[0],
        protocol=snakemake.params.protocol,
    )
    for name in data.SPLITS:
        write_inter(data.as_written(splits[name]), snakemake.output[name])
        logging.info("%s: %d interactions", snakemake.output[name], len(splits[name]))
