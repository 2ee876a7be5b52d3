"""Rule users: each evaluated user's exact share of every Fair measure of one dataset x
model (the measures' route), its attributes and declared features, and the worst cases."""

from userfair import who
from userfair.joblog import job_log

with job_log(snakemake):
    who.users_files(
        snakemake.wildcards.dataset,
        {name: snakemake.input[name] for name in snakemake.input.keys()},
        {name: snakemake.output[name] for name in snakemake.output.keys()},
        {name: snakemake.params[name] for name in snakemake.params.keys()},
    )
