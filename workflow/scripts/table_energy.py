"""Rule table_energy: what every training and export job drew, measured or estimated
(results/tables/energy.csv)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.plan import table_energy

with job_log(snakemake):
    # named inputs "RULE:D/M/JOB" (rules/common/inputs.smk, energy_inputs): the jobs' outputs
    table_energy(dict(snakemake.input.items()), snakemake.output[0], **snakemake.params)
