# Plan stage (docs/cluster.md#costs): what every training and export job will ask the
# cluster for, from the cost model (userfair.workflow.costs) that gives the rules of models.smk their
# resources. Needs no data: `snakemake plan` writes results/plan.csv and prints the totals.
# A job that the configured device cannot finish within training.max_runtime stops the
# whole workflow here, at parse time, before anything is submitted.

check_costs()
say_where_requests_come_from()


rule plan:
    output:
        "results/plan.csv",
    log:
        "results/logs/plan/plan.log",
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        rows=plan_rows(),
    message:
        "Plan the cluster requests of every training and export job"
    script:
        "../scripts/plan.py"
