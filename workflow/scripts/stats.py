"""Rule stats: stats.json of one dataset (Table 1 row)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import stats

with job_log(snakemake):
    stats(
        snakemake.input.preprocessed,
        list(snakemake.input.splits),
        snakemake.output[0],
        protocol=snakemake.params.protocol,
    )
