"""Rule table_stats: Table 1 (dataset statistics) as CSV and booktabs LaTeX."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import table_stats

with job_log(snakemake):
    # named inputs "D/stats", "D/train", ... (workflow/rules/common/paths.smk, per_dataset)
    table_stats(
        dict(snakemake.input.items()),
        snakemake.params.datasets,
        snakemake.output.csv,
        snakemake.output.tex,
    )
