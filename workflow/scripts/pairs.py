"""Rule pairs: pass one of the streamed measures of a dataset, gathered from the scattered
parts (measures.scatter > 1) or over every row (one job)."""

from userfair.joblog import job_log
from userfair.workflow.steps.measures import pairs

with job_log(snakemake):
    p = snakemake.params
    pairs(
        snakemake.input.train,
        snakemake.input.test,
        list(snakemake.input.item),
        snakemake.output[0],
        parts=list(snakemake.input.parts),
        gamma=p.gamma,
        block_size=p.block_size,
        device=p.device,
    )
