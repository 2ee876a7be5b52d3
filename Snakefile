# The PUF workflow: raw data -> every table and figure of the paper.
# Run: snakemake --cores N   (see README.md; the profile in profiles/default is loaded by itself)

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "config/config.schema.yaml")


# Each rule file appends the files its stage delivers to TARGETS; `all` builds them.
TARGETS = []


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/measures.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/figures.smk"


rule all:
    default_target: True
    input:
        TARGETS,
