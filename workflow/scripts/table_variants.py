"""Rule table_variants: Kendall tau-b between the model orderings of the PUF variants, with
bootstrap intervals, and its summary per kind of change."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.variants import table_variants

with job_log(snakemake):
    p = snakemake.params
    table_variants(
        # named inputs "measures:D/M" and, with the bootstrap on, "resamples:D/M"
        steps.named(snakemake.input, prefix="measures:"),
        steps.named(snakemake.input, prefix="resamples:"),
        p.datasets,
        p.models,
        level=p.level,
        tau_csv=snakemake.output.tau,
        summary_csv=snakemake.output.summary,
    )
