# Group fairness beside the individual measures (docs/method.md#groups,
# docs/analyses.md#groups): per dataset x model the group measures UserMAD-P/NDCG and each
# group's mean P, NDCG for every grouping of measures.groups (null: activity 0.05 and each
# of who.features), on the uncertainty stage's resamples (the same seed and users); then
# the table with intervals, the paired comparisons (Holm), the Kendall tau between the
# group and individual orderings, and with the bootstrap on a figure per dataset with its
# reading of this run's tables (results/figures/groups/D.rst, included by its caption).


rule groups:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.topk.output.topk,
        raw=groups_raw,
    output:
        json=layout.output("groups", "json"),
        resamples=layout.output("groups", "resamples"),
    log:
        layout.log("groups"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        k=config["k"],
        groups=config["measures"]["groups"],
        features=config["who"]["features"],
        resamples=RESAMPLES,
        seed=config["seed"],
        source=raw_source,
    message:
        "Group measures of {wildcards.model} on {wildcards.dataset}"
    script:
        "../scripts/groups.py"


# With training.replicates R > 1: the same files of replicate r = 1..R-1 of every trainable
# model (every model where training.replicate_split redraws the split), on its own lists and
# split (replicate_splits) and replicate 0's resample seed (table_replicates reads them).


use rule groups as replicate_groups with:
    input:
        unpack(replicate_splits),
        topk=rules.replicate.output.topk,
        raw=groups_raw,
    output:
        json=layout.output("replicate_groups", "json"),
        resamples=layout.output("replicate_groups", "resamples"),
    log:
        layout.log("replicate_groups"),
    wildcard_constraints:
        replicate=r"[1-9]\d*",
        model=one_of(REPLICATED_MODELS),
    message:
        "Group measures of replicate {wildcards.replicate} of {wildcards.model} on "
        "{wildcards.dataset}"


rule table_groups:
    input:
        unpack(per_run(rules.groups.output.json, prefix="groups:")),
        unpack(per_run(rules.groups.output.resamples, prefix="group_resamples:")),
        unpack(per_run(rules.measures.output[0], prefix="measures:")),
        unpack(uncertainty_runs),
    output:
        csv=report(
            layout.output("table_groups", "csv"),
            caption="../report/groups.rst",
            category="Tables",
            labels={"table": "Group fairness with intervals", "format": "CSV"},
        ),
        significance=report(
            layout.output("table_groups", "significance"),
            caption="../report/groups_significance.rst",
            category="Tables",
            labels={"table": "Group measures: paired comparisons", "format": "CSV"},
        ),
        agreement=report(
            layout.output("table_groups", "agreement"),
            caption="../report/groups_agreement.rst",
            category="Tables",
            labels={
                "table": "Group against individual measures (tau)",
                "format": "CSV",
            },
        ),
    log:
        layout.log("table_groups"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        datasets=DATASETS,
        models=MODELS,
        level=config["uncertainty"]["level"],
    message:
        "Group measures with intervals, paired comparisons and tau against PUF, UF, envy"
    script:
        "../scripts/table_groups.py"


rule fig_groups:
    input:
        groups=rules.table_groups.output.csv,
        intervals=rules.table_uncertainty.output.intervals,
        group_tests=rules.table_groups.output.significance,
        tests=group_figure_tests,
        taus=rules.table_groups.output.agreement,
        code=DRAWING_CODE,
    output:
        **figure_outputs(
            "fig_groups",
            "Group against individual unfairness: {dataset}",
            reading=True,
        ),
    log:
        layout.log("fig_groups"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        models=MODELS,
        replicates=REPLICATES,
    message:
        "Group against individual unfairness of every model on {wildcards.dataset}"
    script:
        "../scripts/figure.py"
