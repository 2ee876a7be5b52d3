"""Rule table_groups: the group measures with intervals, the paired comparisons (Holm) and
the Kendall tau between group and individual orderings."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.groups import table_groups

with job_log(snakemake):
    p, out = snakemake.params, snakemake.output
    table_groups(
        # named inputs "groups:D/M", ... (rules/common/paths.smk, per_run)
        steps.named(snakemake.input, prefix="groups:"),
        steps.named(snakemake.input, prefix="group_resamples:"),
        steps.named(snakemake.input, prefix="measures:"),
        steps.named(snakemake.input, prefix="resamples:"),
        p.datasets,
        p.models,
        level=p.level,
        csv=out.csv,
        significance_csv=out.significance,
        agreement_csv=out.agreement,
    )
