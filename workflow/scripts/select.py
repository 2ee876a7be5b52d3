"""Rule select: every grid point's valid metrics -> tuning.tsv; the best valid NDCG -> best.json."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.selection import select

with job_log(snakemake):
    select(
        list(snakemake.input.valid),
        list(snakemake.input.checkpoints),
        snakemake.output.tuning,
        snakemake.output.best,
        model=snakemake.wildcards.model,
    )
