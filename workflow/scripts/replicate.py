"""Rule replicate: retrain the winning grid point of one model with replicate r's seed;
writes topk.parquet, valid.json and recbole_test.json in the replicate's folder."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.models import replicate

with job_log(snakemake):
    w, p, out = snakemake.wildcards, snakemake.params, snakemake.output
    replicate(
        w.dataset,
        w.model,
        int(w.replicate),
        snakemake.input.best,
        p.data_dir,
        p.workdir,
        snakemake.input.shared,
        out.topk,
        out.valid,
        out.test,
        # speed-only settings (eval batch): not params, so changing them reruns nothing
        training=steps.with_training_speed(p.training, snakemake.config),
        threads=snakemake.threads,
        checkpoint_every=snakemake.config["training"]["checkpoint_every"],
    )
