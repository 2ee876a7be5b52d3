"""Rule tune: train one grid point of one model; writes valid.json and model.pth. A killed
job leaves resume.pth in the grid point's folder, from which its next attempt resumes."""

import logging

from userfair import recommenders
from userfair.io import write_json
from userfair.joblog import job_log

with job_log(snakemake):
    record = recommenders.train_point(
        snakemake.wildcards.model,
        snakemake.params.grid_params,
        snakemake.params.data_dir,
        snakemake.wildcards.dataset,
        snakemake.params.workdir,
        recommenders.Training(**{**snakemake.params.training, "threads": snakemake.threads}),
        shared=snakemake.input.shared,
        # not a param: how often the state is saved does not change the results
        checkpoint_every=snakemake.config["training"]["checkpoint_every"],
    )
    record["point"] = int(snakemake.wildcards.point)
    write_json(record, snakemake.output.valid)
    logging.info("valid %s", record["valid"])
