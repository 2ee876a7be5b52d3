"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user), RecBole's
own test metrics (recbole_test.json) and the 12 fairness measures of the same RecBole test
evaluation (recbole_fairness.json, through userfair.recbole)."""

from userfair.joblog import job_log
from userfair.workflow.steps.models import topk

with job_log(snakemake):
    w, p, out = snakemake.wildcards, snakemake.params, snakemake.output
    topk(
        w.dataset,
        w.model,
        snakemake.input.best,
        p.data_dir,
        p.workdir,
        snakemake.input.shared,
        out.topk,
        out.test,
        out.fairness,
        training=p.training,
        threads=snakemake.threads,
        measures=p.measures,
    )
