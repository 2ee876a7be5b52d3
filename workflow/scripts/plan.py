"""Rule plan: the requests of every tune and topk job -> results/plan.csv; prints the totals."""

import logging

from userfair import costs
from userfair.joblog import job_log

with job_log(snakemake):
    text = costs.write_plan(snakemake.params.rows, snakemake.output[0])
    logging.info("totals (attempt 1, margins included):\n%s", text)
print(f"{snakemake.output[0]}: totals (attempt 1, margins included)\n{text}", flush=True)
