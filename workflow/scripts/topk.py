"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user) and RecBole's
own test metrics (recbole_test.json)."""

import logging

from userfair import recommenders
from userfair.io import read_json, write_json
from userfair.joblog import job_log

with job_log(snakemake):
    best = read_json(snakemake.input.best)
    lists, test = recommenders.export_topk(
        snakemake.wildcards.model,
        best["params"],
        best["checkpoint"],
        snakemake.params.data_dir,
        snakemake.wildcards.dataset,
        snakemake.params.workdir,
        recommenders.Training(**{**snakemake.params.training, "threads": snakemake.threads}),
        shared=snakemake.input.shared,
    )
    recommenders.write_topk(lists, snakemake.output.topk)
    write_json(test, snakemake.output.test)
    logging.info("%d users, RecBole test metrics %s", lists["user_id"].nunique(), test)
