"""Rule who_worst: the most disadvantaged users of every dataset x model in one table."""

import logging

from userfair import who
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    table = who.worst_table(who.tables_of(snakemake.input, p.datasets, p.models, who.read_worst))
    who.write_csv(table, snakemake.output[0])
    logging.info("%s: %d rows", snakemake.output[0], len(table))
