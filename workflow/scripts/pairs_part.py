"""Rule pairs_part: pass one of the streamed measures over one scattered row range."""

from userfair.joblog import job_log
from userfair.workflow.steps.measures import pairs

with job_log(snakemake):
    p = snakemake.params
    pairs(
        snakemake.input.train,
        snakemake.input.test,
        list(snakemake.input.item),
        snakemake.output[0],
        scatteritem=snakemake.wildcards.scatteritem,
        gamma=p.gamma,
        block_size=p.block_size,
        device=p.device,
    )
