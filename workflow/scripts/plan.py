"""Rule plan: the requests of every tune and topk job -> results/plan.csv; prints the totals."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.plan import plan

with job_log(snakemake):
    plan(snakemake.params.rows, snakemake.output[0])
