"""Rule table_uncertainty: Table 2 with bootstrap intervals, the paired model comparisons
(Holm within each measure) and the Kendall tau intervals of Fig. 1, from every model's
resamples."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.uncertainty import table_uncertainty

with job_log(snakemake):
    p, out = snakemake.params, snakemake.output
    table_uncertainty(
        # named inputs "measures:D/M" and "resamples:D/M" (rules/common/paths.smk, per_run)
        steps.named(snakemake.input, prefix="measures:"),
        steps.named(snakemake.input, prefix="resamples:"),
        p.datasets,
        p.models,
        level=p.level,
        resamples=p.resamples,
        csv=out.csv,
        tex=out.tex,
        intervals_csv=out.intervals,
        significance_csv=out.significance,
        agreement_csv=out.agreement,
        groups=list(snakemake.input.groups),
    )
