"""Rule split: steps 4-5 of docs/method.md#data; the RecBole atomic files of train/valid/test."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import split

with job_log(snakemake):
    # k is checked, not used: read from the config, not params, so that a new k reruns nothing
    split(
        snakemake.input[0],
        dict(snakemake.output.items()),
        **snakemake.params,
        k=snakemake.config["k"],
    )
