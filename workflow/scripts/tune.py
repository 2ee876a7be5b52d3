"""Rule tune: train one grid point of one model; writes valid.json and model.pth."""

from userfair.joblog import job_log
from userfair.steps.models import tune

with job_log(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    tune(
        w.dataset,
        w.model,
        w.point,
        p.data_dir,
        p.workdir,
        snakemake.output.valid,
        grid_params=p.grid_params,
        training=p.training,
        threads=snakemake.threads,
    )
