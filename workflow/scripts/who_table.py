"""Rule who_table: each Fair measure's share by group of users (activity quantiles and the
declared user features) for every dataset x model, with bootstrap intervals."""

import logging

import pandas as pd

from userfair import who
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    table = who.group_table(
        who.tables_of(snakemake.input, p.datasets, p.models, pd.read_parquet),
        groups=p.groups,
        features=p.features,
        resamples=p.resamples,
        seed=p.seed,
        level=p.level,
    )
    who.write_csv(table, snakemake.output[0])
    logging.info("%s: %d rows", snakemake.output[0], len(table))
