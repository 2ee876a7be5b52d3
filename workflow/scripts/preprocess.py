"""Rule preprocess: steps 1-3 of docs/method.md#data on the raw interactions of one dataset."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import preprocess

with job_log(snakemake):
    p = snakemake.params
    preprocess(
        snakemake.wildcards.dataset,
        p.declaration,
        p.source,
        snakemake.output[0],
        min_rating=p.min_rating,
        core=p.core,
        # checked, not used: read from the config, not params, so that a new k reruns nothing
        k=snakemake.config["k"],
    )
