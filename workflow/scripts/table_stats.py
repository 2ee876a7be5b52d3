"""Rule table_stats: Table 1 (dataset statistics) as CSV and booktabs LaTeX."""

import logging

from userfair import data
from userfair.io import read_inter, read_json, write_table
from userfair.joblog import job_log

with job_log(snakemake):
    datasets = snakemake.params.datasets
    split_paths = list(snakemake.input.splits)
    rows = {}
    for i, (name, stats_path) in enumerate(zip(datasets, snakemake.input.stats)):
        paths = split_paths[3 * i : 3 * i + 3]
        splits = dict(zip(data.SPLITS, map(read_inter, paths)))
        rows[name] = {**read_json(stats_path), **data.split_counts(splits)}
    table = data.table1(rows)
    write_table(
        table,
        snakemake.output.csv,
        snakemake.output.tex,
        float_format="{:.2f}",
        caption="Dataset statistics: counts and sparsity after the 5-core step; test "
        "users, split sizes and split counts after dropping users with few "
        "train interactions.",
        label="tab:stats",
    )
    logging.info("Table 1:\n%s", table.to_string())
