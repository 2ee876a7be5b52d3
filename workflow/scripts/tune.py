"""Rule tune: train one grid point of one model; writes valid.json and model.pth."""

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
    )
    record["point"] = int(snakemake.wildcards.point)
    write_json(record, snakemake.output.valid)
    logging.info("valid %s", record["valid"])
