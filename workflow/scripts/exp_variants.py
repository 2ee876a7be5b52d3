"""Rule exp_variants: Figs. 3 and 4 of one dataset with each configured similarity."""

from userfair.workflow import steps
from userfair.workflow.joblog import job_log
from userfair.workflow.steps.variants import exp_variants

with job_log(snakemake):
    exp_variants(
        snakemake.wildcards.dataset,
        snakemake.input.train,
        snakemake.input.valid,
        snakemake.input.test,
        snakemake.input.topk,
        snakemake.output.similarity,
        snakemake.output.extreme,
        model=snakemake.params.model,
        settings=steps.MeasureSettings.of(snakemake.params, besides=("model",)),
        speed=steps.Speed.of(snakemake.config),  # speed-only: not params (no rerun)
        files=steps.SideFiles.of(snakemake.input),
    )
