"""Rule table_scores: Table 2 as CSV and booktabs LaTeX."""

import logging

from userfair import tables
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    records = tables.read_measure_files(snakemake.input, p.datasets, p.models)
    table = tables.write_scores(
        records, p.datasets, p.models, snakemake.output.csv, snakemake.output.tex
    )
    logging.info("\n%s", table.to_string())
