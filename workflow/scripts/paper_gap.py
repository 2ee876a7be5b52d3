"""Rule paper_gap: the paper's printed Tables 1 and 2 beside the run's numbers, a verdict
per dataset (also in the log) and the figure ours / paper (docs/reproduction.md)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.reproduction import paper_gap

with job_log(snakemake):
    paper_gap(dict(snakemake.input.items()), dict(snakemake.output.items()), **snakemake.params)
