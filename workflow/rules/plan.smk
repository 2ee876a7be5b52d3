# Plan stage (docs/cluster.md#costs): what every training and export job will ask the
# cluster for, from the cost model (userfair.workflow.costs) that gives the rules of models.smk their
# resources, and the streamed measures' jobs of the datasets whose size takes that route
# (userfair.workflow.scatter_plan, docs/cluster.md#scatter-plan). Needs no data:
# `snakemake plan` writes results/plan.csv and prints the totals.
# A job that the configured device cannot finish within training.max_runtime stops the
# whole workflow here, at parse time, before anything is submitted.

check_costs()
say_where_requests_come_from()


rule plan:
    output:
        layout.output("plan"),
    log:
        layout.log("plan"),
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        rows=plan_rows(),
    message:
        "Plan the cluster requests of every training and export job and of the streamed measures"
    script:
        "../scripts/plan.py"


# What every training and export job drew (docs/cluster.md#measured-energy): each tune,
# topk and replicate job writes its energy record beside its output (userfair.workflow.meter),
# measured where the hardware exposes a counter, else its seconds; this table adds the
# power model. Asked for by name (`snakemake results/tables/energy.csv`), not by `all`.


rule table_energy:
    input:
        unpack(energy_inputs),
    output:
        layout.output("table_energy"),
    log:
        layout.log("table_energy"),
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        energy=config["energy"],
    message:
        "What every training and export job drew: measured or estimated"
    script:
        "../scripts/table_energy.py"
