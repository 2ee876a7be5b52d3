"""Rule recbole_dataset: the dataset's RecBole dataset, its parts, sampler and evaluation
loaders, built once and saved for every training and export job of the dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.models import recbole_dataset

with job_log(snakemake):
    p = snakemake.params
    recbole_dataset(
        snakemake.wildcards.dataset,
        p.data_dir,
        p.workdir,
        snakemake.output[0],
        # the eval batch is speed-only: not a param, so changing it rebuilds nothing
        training=steps.with_training_speed(p.training, snakemake.config),
    )
