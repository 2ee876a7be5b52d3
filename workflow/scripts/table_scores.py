"""Rule table_scores: Table 2 as CSV and booktabs LaTeX."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import table_scores

with job_log(snakemake):
    p = snakemake.params
    table_scores(
        dict(snakemake.input.items()),
        p.datasets,
        p.models,
        snakemake.output.csv,
        snakemake.output.tex,
    )
