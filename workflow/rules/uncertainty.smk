# Uncertainty stage (docs/method.md#uncertainty): bootstrap resamples of the evaluated
# users, every measure of every model recomputed on each (the same resamples for every
# model of a dataset), then Table 2 with intervals, the paired model comparisons and the
# tau intervals of Fig. 1. Off with uncertainty.resamples: 0 (no job, no file).


rule uncertainty:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.topk.output.topk,
        cos=similarity_file("cos"),
        jacc=similarity_file("jacc"),
        genre=uf_genre_similarity,
        item=opt_in_item_genres,
        vectors=opt_in_user_vectors,
        grades=opt_in_grades,
    output:
        layout.output("uncertainty"),
    log:
        layout.log("uncertainty"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("uncertainty", "mem_mb"),
        runtime=dense_resource("uncertainty", "runtime"),
    params:
        **uncertainty_settings(),
        **opt_in_params(),
    message:
        "Bootstrap resamples of every measure of {wildcards.model} on {wildcards.dataset} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/uncertainty.py"


rule table_uncertainty:
    input:
        unpack(per_run(rules.measures.output[0], prefix="measures:")),
        unpack(per_run(rules.uncertainty.output[0], prefix="resamples:")),
        groups=scores_ci_groups,
    output:
        csv=report(
            layout.output("table_uncertainty", "csv"),
            caption="../report/table_scores_ci.rst",
            category="Tables",
            labels={"table": "Table 2 with intervals", "format": "CSV"},
        ),
        tex=report(
            layout.output("table_uncertainty", "tex"),
            caption="../report/table_scores_ci.rst",
            category="Tables",
            labels={"table": "Table 2 with intervals", "format": "LaTeX"},
        ),
        significance=report(
            layout.output("table_uncertainty", "significance"),
            caption="../report/significance.rst",
            category="Tables",
            labels={"table": "Paired model comparisons", "format": "CSV"},
        ),
        intervals=report(
            layout.output("table_uncertainty", "intervals"),
            caption="../report/intervals.rst",
            category="Tables",
            labels={"table": "Every measure's interval", "format": "CSV"},
        ),
        agreement=report(
            layout.output("table_uncertainty", "agreement"),
            caption="../report/agreement_ci.rst",
            category="Tables",
            labels={"table": "Fig. 1's tau with intervals", "format": "CSV"},
        ),
    log:
        layout.log("table_uncertainty"),
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
        "Table 2 with bootstrap intervals, paired comparisons, tau intervals"
    script:
        "../scripts/table_uncertainty.py"


rule fig_intervals:
    input:
        intervals=rules.table_uncertainty.output.intervals,
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_intervals", "Fair measures with intervals"),
    log:
        layout.log("fig_intervals"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        models=MODELS,
    message:
        "Every Fair measure per model with its bootstrap interval"
    script:
        "../scripts/figure.py"
