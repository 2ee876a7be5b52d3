"""Rule topk: the winner's checkpoint -> topk.parquet (k items per test user) and RecBole's
own test metrics (recbole_test.json)."""

from userfair.workflow import steps
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
        # speed-only settings (eval batch): not params, so changing them reruns nothing
        training=steps.with_training_speed(p.training, snakemake.config),
        threads=snakemake.threads,
    )
