"""Rule claims: every measure's properties, the paper's claims checked on this run, and
the report's first page (docs/analyses.md#claims)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.claims import claims

with job_log(snakemake):
    claims(dict(snakemake.input.items()), dict(snakemake.output.items()), **snakemake.params)
