"""Rule tune: train one grid point of one model; writes valid.json and model.pth. A killed
job leaves resume.pth in the grid point's folder, from which its next attempt resumes."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.models import tune

with job_log(snakemake):
    w, p = snakemake.wildcards, snakemake.params
    tune(
        w.dataset,
        w.model,
        w.point,
        p.data_dir,
        p.workdir,
        snakemake.input.shared,
        snakemake.output.valid,
        grid_params=p.grid_params,
        # speed-only settings (eval batch): not params, so changing them reruns nothing
        training=steps.with_training_speed(p.training, snakemake.config),
        threads=snakemake.threads,
        # not a param: how often the state is saved does not change the results
        checkpoint_every=snakemake.config["training"]["checkpoint_every"],
    )
