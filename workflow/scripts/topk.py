"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user) and RecBole's
own test metrics (recbole_test.json)."""

from userfair.workflow.joblog import job_log
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
        training=p.training,
        threads=snakemake.threads,
    )
