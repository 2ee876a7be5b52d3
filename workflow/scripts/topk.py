"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user) and RecBole's
own test metrics (recbole_test.json)."""

from userfair.joblog import job_log
from userfair.steps.models import topk

with job_log(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    topk(
        w.dataset,
        w.model,
        snakemake.input.best,
        p.data_dir,
        p.workdir,
        snakemake.output.topk,
        snakemake.output.test,
        training=p.training,
        threads=snakemake.threads,
    )
