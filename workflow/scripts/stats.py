"""Rule stats: stats.json of one dataset (Table 1 row)."""

import logging

from userfair import data
from userfair.io import read_inter, read_parquet, write_json
from userfair.joblog import job_log

with job_log(snakemake):
    preprocessed = read_parquet(snakemake.input.preprocessed)
    splits = dict(zip(data.SPLITS, map(read_inter, snakemake.input.splits)))
    stats = data.dataset_stats(preprocessed, splits, protocol=snakemake.params.protocol)
    write_json(stats, snakemake.output[0])
    logging.info("%s: %s", snakemake.output[0], stats)
