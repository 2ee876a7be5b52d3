# The PUF workflow: raw data -> every table and figure of the paper.
# Run: snakemake --cores N   (see README.md; the profile in profiles/default is loaded by itself)
# Try it on tiny data first: config/README.md ("A first run").

from snakemake.utils import min_version, validate

from userfair.workflow.schema import check_config

min_version("9.0")


configfile: "config/config.yaml"


# A bad value stops the run here, naming its key (e.g. measures.gamma, datasets[0]), and
# so does a key given twice in a config file Snakemake loaded; then the schema's defaults
# fill every key the config leaves out.
check_config(
    config, workflow.source_path("config/config.schema.yaml"), workflow.configfiles
)
validate(config, "config/config.schema.yaml")


report: "workflow/report/workflow.rst"


# common.smk is the contract between the stages; each stage file reads only its names and
# the outputs of earlier stages (rules.RULE.output). The order of the includes is the
# order of the stages; targets.smk, last, lists what `all` asks for.
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/measures.smk"
include: "workflow/rules/uncertainty.smk"
include: "workflow/rules/replicates.smk"
include: "workflow/rules/who.smk"
include: "workflow/rules/groups.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/variants.smk"
include: "workflow/rules/reproduction.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/plan.smk"
include: "workflow/rules/record.smk"
include: "workflow/rules/targets.smk"


rule all:
    default_target: True
    input:
        all_targets(),
        rules.run_config.output,


# Jobs about to run beside the outputs of another configuration: its record goes, so that no
# report mixes the two (docs/your-data.md).
onstart:
    forget_other_config(rules.run_config.output[0])


# The paper-gap verdicts, printed at the end of a successful run (not only in its log).
onsuccess:
    print_verdicts(rules.paper_gap.output.verdicts)
