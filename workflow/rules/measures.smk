# Measures stage (docs/method.md#user-similarity onwards): similarities once per dataset,
# every measure per dataset x model, Tables 2-3 and the Kendall tau agreement behind Fig. 1.
# The numba and BLAS work of a job runs on the rule's threads (config measures.threads).


rule similarity:
    input:
        train=rules.split.output.train,
        test=rules.split.output.test,
        item=item_genres_of_kind,
    output:
        layout.output("similarity"),
    log:
        layout.log("similarity"),
    wildcard_constraints:
        kind=one_of(SIMILARITY_KINDS),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("similarity", "mem_mb"),
        runtime=dense_resource("similarity", "runtime"),
    message:
        "User similarity {wildcards.kind} of {wildcards.dataset} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/similarity.py"


# The genre similarity needs the item genres (rule genres, after the split): one step later
# than the other kinds, so its own rule; the report's rule graph, which draws a rule once per
# step of the job graph, drew `similarity` twice.
use rule similarity as genre_similarity with:
    input:
        train=rules.split.output.train,
        test=rules.split.output.test,
        item=rules.genres.output,  # a list, as the input function of similarity gives
    wildcard_constraints:
        kind="genre",


ruleorder: genre_similarity > similarity


# The streamed route (more evaluated users than measures.stream_above; docs/measures.md
# #in-the-workflow): pass one per dataset, scattered over measures.scatter jobs
# (pairs_part) and gathered (pairs), then pass two per dataset x model, scattered
# (measure_sums) and gathered by `measures`. With measures.scatter = 1 `pairs` and
# `measures` make their pass themselves. Their requests follow the dataset's size and the
# scatter (rules/common/resources.smk: streamed_resource, measures_resource).


rule pairs_part:
    input:
        train=rules.split.output.train,
        test=rules.split.output.test,
        item=uf_item_genres,
    output:
        layout.output("pairs_part"),
    log:
        layout.log("pairs_part"),
    wildcard_constraints:
        scatteritem=SCATTER_ITEM,
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=streamed_resource("pairs_part", "mem_mb"),
        runtime=streamed_resource("pairs_part", "runtime"),
    params:
        **measure_settings("gamma"),
    message:
        "Pass one of the streamed measures of {wildcards.dataset}, part {wildcards.scatteritem} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/pairs_part.py"


rule pairs:
    input:
        parts=pair_stats_parts,
    output:
        layout.output("pairs"),
    log:
        layout.log("pairs"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=streamed_resource("pairs", "mem_mb"),
        runtime=streamed_resource("pairs", "runtime"),
    message:
        "Pass one of the streamed measures of {wildcards.dataset}: gather its parts ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/pairs.py"


rule measure_sums:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.topk.output.topk,
        pairs=rules.pairs.output[0],
        item=streamed_item_genres,
        vectors=opt_in_user_vectors,
        grades=opt_in_grades,
    output:
        layout.output("measure_sums"),
    log:
        layout.log("measure_sums"),
    wildcard_constraints:
        scatteritem=SCATTER_ITEM,
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=streamed_resource("measure_sums", "mem_mb"),
        runtime=streamed_resource("measure_sums", "runtime"),
    params:
        **measure_settings("epsilon", "envy_utility", "estimate"),
        **opt_in_params("graded", "extra_similarities"),
        seed=config["seed"],
    message:
        "Pass two of {wildcards.model} on {wildcards.dataset}, part {wildcards.scatteritem} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/measure_sums.py"


rule measures:
    input:
        unpack(measure_inputs),
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.topk.output.topk,
        stats=rules.stats.output[0],
        grades=opt_in_grades,
    output:
        layout.output("measures"),
    log:
        layout.log("measures"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=measures_resource("mem_mb"),
        runtime=measures_resource("runtime"),
    params:
        **measure_settings("epsilon", "envy_utility", "gamma"),
        **opt_in_params(),
        estimate=estimate_param,
        route=route_param,
        seed=config["seed"],
    message:
        "Every Eff and Fair measure of {wildcards.model} on {wildcards.dataset} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/measures.py"


rule table_scores:
    input:
        unpack(per_run(rules.measures.output[0])),
    output:
        csv=report(
            layout.output("table_scores", "csv"),
            caption="../report/table_scores.rst",
            category="Tables",
            labels={"table": "Table 2: Eff and Fair scores", "format": "CSV"},
        ),
        tex=report(
            layout.output("table_scores", "tex"),
            caption="../report/table_scores.rst",
            category="Tables",
            labels={"table": "Table 2: Eff and Fair scores", "format": "LaTeX"},
        ),
    log:
        layout.log("table_scores"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
    message:
        "Table 2: Eff and Fair scores, best per row in bold"
    script:
        "../scripts/table_scores.py"


rule table_timing:
    input:
        unpack(per_run(rules.measures.output[0])),
    output:
        csv=report(
            layout.output("table_timing", "csv"),
            caption="../report/table_timing.rst",
            category="Tables",
            labels={"table": "Table 3: computation time", "format": "CSV"},
        ),
        tex=report(
            layout.output("table_timing", "tex"),
            caption="../report/table_timing.rst",
            category="Tables",
            labels={"table": "Table 3: computation time", "format": "LaTeX"},
        ),
    log:
        layout.log("table_timing"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
    message:
        "Table 3: mean computation time of each Fair measure"
    script:
        "../scripts/table_timing.py"


rule agreement:
    input:
        unpack(per_run(rules.measures.output[0])),
    output:
        report(
            layout.output("agreement"),
            caption="../report/agreement.rst",
            category="Tables",
            labels={
                "table": "Kendall tau between measures (Fig. 1 data)",
                "format": "CSV",
            },
        ),
    log:
        layout.log("agreement"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
    message:
        "Kendall tau-b between the model orderings of every pair of measures"
    script:
        "../scripts/agreement.py"
