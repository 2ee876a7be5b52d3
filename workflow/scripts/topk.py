"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user), RecBole's
own test metrics (recbole_test.json) and the fairness measures of the same RecBole test
evaluation through userfair.recbole (recbole_fairness.json)."""

import logging

from userfair import recbole as recbole_metrics
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
        fairness=recbole_metrics.workflow_settings(snakemake.params.measures),
    )
    recommenders.write_topk(lists, snakemake.output.topk)
    write_json({key: test[key] for key in recommenders.METRICS.values()}, snakemake.output.test)
    fairness = recbole_metrics.fairness_record(test, snakemake.params.measures)
    write_json(fairness, snakemake.output.fairness)
    logging.info("%d users, RecBole test metrics %s", lists["user_id"].nunique(), test)
