"""Rule pairs: pass one of the streamed measures of a dataset, gathered from its parts."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.measures import pairs

with job_log(snakemake):
    pairs(list(snakemake.input.parts), snakemake.output[0])
