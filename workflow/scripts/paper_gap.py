"""Rule paper_gap: the paper's printed Tables 1 and 2 beside the run's numbers, a verdict
per dataset (also in the log) and the figure ours / paper (docs/reproduction.md)."""

from userfair import reproduction
from userfair.joblog import job_log

with job_log(snakemake):
    reproduction.write_paper_gap(snakemake.input, snakemake.output, **snakemake.params)
