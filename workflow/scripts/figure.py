"""The script of every figure rule whose figures a drawing module declares
(userfair.workflow.figure_registry): the rule's figures, PDF and PNG, and their readings,
drawn by steps.figures.draw from the rule's named inputs, outputs, params and the job's
wildcards (a figure per dataset)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.figures import draw

with job_log(snakemake):
    draw(
        snakemake.rule,
        dict(snakemake.input.items()),
        dict(snakemake.output.items()),
        dict(snakemake.params.items()),
        dict(snakemake.wildcards.items()),
    )
