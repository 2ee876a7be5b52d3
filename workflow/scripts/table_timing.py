"""Rule table_timing: Table 3 as CSV and booktabs LaTeX."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import table_timing

with job_log(snakemake):
    p = snakemake.params
    table_timing(
        dict(snakemake.input.items()),
        p.datasets,
        p.models,
        snakemake.output.csv,
        snakemake.output.tex,
    )
