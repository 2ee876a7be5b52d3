# Claims stage (docs/analyses.md#claims): every measure's properties per dataset and the
# paper's empirical claims (its sections 4.2-4.5) checked on this run, one verdict per claim
# and dataset, and the report's first page (what ran, the verdicts, the best model per
# measure). Reads every replicate's measures and, with the bootstrap on, its resamples,
# the Table-1 statistics, the experiments of Figs. 2-4 and the paper-gap verdicts.


rule claims:
    input:
        unpack(claims_inputs),
        verdicts=rules.paper_gap.output.verdicts,
    output:
        properties=report(
            layout.output("claims", "properties"),
            caption="../report/measure_properties.rst",
            category="Claims",
            labels={"table": "Every measure's properties", "format": "CSV"},
        ),
        claims=report(
            layout.output("claims", "claims"),
            caption="../report/claims.rst",
            category="Claims",
            labels={"table": "The paper's claims on this run", "format": "CSV"},
        ),
        across=report(
            layout.output("claims", "across"),
            caption="../report/claims_across.rst",
            category="Claims",
            labels={"table": "Each claim across the datasets", "format": "CSV"},
        ),
        front=layout.output("claims", "front"),
    log:
        layout.log("claims"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
        level=config["uncertainty"]["level"],
        run=claims_run(),
    message:
        "The paper's claims checked on this run, and every measure's properties"
    script:
        "../scripts/claims.py"
