"""Rule user_vectors: the winner's checkpoint -> the user vectors of every user of the split
(user_vectors.parquet), read by the opt-in similarity embedding:MODEL."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.models import user_vectors

with job_log(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    user_vectors(
        w.dataset,
        w.model,
        snakemake.input.best,
        p.data_dir,
        p.workdir,
        snakemake.input.shared,
        snakemake.output[0],
        # speed-only settings (eval batch): not params, so changing them reruns nothing
        training=steps.with_training_speed(p.training, snakemake.config),
        threads=snakemake.threads,
    )
