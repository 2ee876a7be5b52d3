"""Rule agreement: Kendall tau-b between the model orderings of every pair of measures."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import agreement

with job_log(snakemake):
    p = snakemake.params
    agreement(dict(snakemake.input.items()), p.datasets, p.models, snakemake.output[0])
