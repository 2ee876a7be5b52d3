"""Rule exp_gamma: UF and PUF with sim_UF for every gamma (appendix), one dataset."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.experiments import exp_gamma

with job_log(snakemake):
    exp_gamma(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.jacc,
        snakemake.input.genre,
        # named inputs "topk:M" (rules/common/paths.smk, per_model)
        steps.named(snakemake.input, prefix="topk:"),
        snakemake.output.models,
        snakemake.output.relevance,
        **snakemake.params,
        **steps.speed(snakemake.config),  # speed-only: not params (no rerun)
    )
