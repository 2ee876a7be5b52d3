"""Rule table_replicates: the tables over training replicates and users (replicates.csv,
variance.csv, scores_replicates.csv, significance_replicates.csv, agreement_replicates.csv,
conclusions.csv) from every replicate's measures and bootstrap resamples."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.replicates import table_replicates

with job_log(snakemake):
    p, out = snakemake.params, snakemake.output
    table_replicates(
        # named inputs "measures:D/M/r" and "resamples:D/M/r"
        # (rules/common/paths.smk, per_replicate)
        steps.named(snakemake.input, prefix="measures:"),
        steps.named(snakemake.input, prefix="resamples:"),
        p.datasets,
        p.models,
        p.replicates,
        level=p.level,
        seed=p.seed,
        nested=p.get("nested", []),  # the datasets whose split is redrawn per replicate
        values_csv=out.values,
        variance_csv=out.variance,
        scores_csv=out.scores,
        significance_csv=out.significance,
        agreement_csv=out.agreement,
        conclusions_csv=out.conclusions,
        # with the group stage on: "groups:D/M/r", "group_resamples:D/M/r"
        group_files=steps.named(snakemake.input, prefix="groups:"),
        group_resamples=steps.named(snakemake.input, prefix="group_resamples:"),
    )
