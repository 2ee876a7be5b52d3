"""Rule replicate_split: steps 4-5 of docs/method.md#data again, with replicate r's seed
(training.replicate_split); the RecBole atomic files of its train/valid/test."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import split

with job_log(snakemake):
    split(snakemake.input[0], dict(snakemake.output.items()), **snakemake.params)
