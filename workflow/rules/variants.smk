# The analysis of the opt-in PUF variants (docs/analyses.md#variants; config
# measures.relevance and measures.similarities): how the model orderings of PUF change with
# the user similarity and with graded relevance (Kendall tau between the variants, with
# intervals over the uncertainty stage's resamples), and Figs. 3 and 4 repeated with each
# similarity. Scheduled only with opt-in measures (variant_targets, targets.smk).


rule table_variants:
    input:
        unpack(per_run(rules.measures.output[0], prefix="measures:")),
        unpack(uncertainty_runs),
    output:
        tau=report(
            layout.output("table_variants", "tau"),
            caption="../report/variants_tau.rst",
            category="Tables",
            labels={"table": "Kendall tau between the PUF variants", "format": "CSV"},
        ),
        summary=report(
            layout.output("table_variants", "summary"),
            caption="../report/variants_summary.rst",
            category="Tables",
            labels={"table": "PUF variants: tau by kind of change", "format": "CSV"},
        ),
    log:
        layout.log("table_variants"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        datasets=DATASETS,
        models=MODELS,
        level=config["uncertainty"]["level"],
        resamples=RESAMPLES,
    message:
        "Kendall tau-b between the model orderings of the PUF variants"
    script:
        "../scripts/table_variants.py"


rule exp_variants:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=experiment_model_topk,
        item=opt_in_item_genres,
        vectors=opt_in_user_vectors,
        grades=opt_in_grades,
    output:
        similarity=layout.output("exp_variants", "similarity"),
        extreme=layout.output("exp_variants", "extreme"),
    log:
        layout.log("exp_variants"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("exp_variants", "mem_mb"),
        runtime=dense_resource("exp_variants", "runtime"),
    params:
        **measure_settings("epsilon"),
        **opt_in_params("graded", "extra_similarities"),
        seed=config["seed"],
        model=EXPERIMENT_MODEL,
    message:
        "Figs. 3 and 4 on {wildcards.dataset} with each configured similarity ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/exp_variants.py"


rule fig_variants:
    input:
        tau=rules.table_variants.output.tau,
        similarity=expand(rules.exp_similarity.output[0], dataset=DATASETS),
        observed=expand(rules.exp_variants.output.similarity, dataset=DATASETS),
        extreme=expand(rules.exp_variants.output.extreme, dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        # each figure's reading of this run's numbers is included by its caption
        **figure_outputs(
            "fig_variants",
            {
                "tau": "PUF variants: Kendall tau",
                "similarity": "Fig. 3 with each similarity",
                "extreme": "Fig. 4 with each similarity",
            },
            reading=True,
        ),
    log:
        layout.log("fig_variants"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        similarities=config["measures"]["similarities"],
        relevance=config["measures"]["relevance"],
        resamples=RESAMPLES,
        level=config["uncertainty"]["level"],
    message:
        "The PUF variants: Kendall tau heatmap, Figs. 3 and 4 with each similarity"
    script:
        "../scripts/figure.py"
