"""Rule table_stats: Table 1 (dataset statistics) as CSV and booktabs LaTeX."""

import logging

from userfair import data
from userfair.io import read_inter, read_json, write_table
from userfair.joblog import job_log

with job_log(snakemake):
    rows = {}
    for name in snakemake.params.datasets:
        # named inputs "D/stats", "D/train", ... (workflow/rules/common.smk, per_dataset)
        splits = {part: read_inter(snakemake.input[f"{name}/{part}"]) for part in data.SPLITS}
        rows[name] = {**read_json(snakemake.input[f"{name}/stats"]), **data.split_counts(splits)}
    table = data.table1(rows)
    write_table(
        table,
        snakemake.output.csv,
        snakemake.output.tex,
        float_format="{:.2f}",
        caption="Dataset statistics: counts and sparsity after the 5-core step; test "
        "users, split sizes and split counts after the split (protocol global: after "
        "dropping users with few train interactions; per-user: RecBole's ratio split of "
        "each user's interactions).",
        label="tab:stats",
    )
    logging.info("Table 1:\n%s", table.to_string())
