# Artificial experiments (docs/analyses.md, docs/method.md#analyses): each saves its table
# (parquet) before any plotting. Every random choice is seeded from config `seed`.


rule exp_relevance:
    input:
        train=rules.split.output.train,
        test=rules.split.output.test,
        jacc=similarity_file("jacc"),
        genre=uf_genre_similarity,
    output:
        layout.output("exp_relevance"),
    log:
        layout.log("exp_relevance"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("exp_relevance", "mem_mb"),
        runtime=dense_resource("exp_relevance", "runtime"),
    params:
        **measure_settings("epsilon"),
        **opt_in_params("plugins"),
        seed=config["seed"],
        envy_utility=config["measures"]["envy_utility"],
        gamma=config["measures"]["gamma"],
    message:
        "Fig. 2 experiment on {wildcards.dataset}: varying relevance ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/exp_relevance.py"


rule exp_similarity:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=experiment_model_topk,
        jacc=similarity_file("jacc"),
    output:
        layout.output("exp_similarity"),
    log:
        layout.log("exp_similarity"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("exp_similarity", "mem_mb"),
        runtime=dense_resource("exp_similarity", "runtime"),
    params:
        **opt_in_params("plugins"),
        **measure_settings("epsilon"),
        seed=config["seed"],
        weibull_shapes=config["experiments"]["weibull_shapes"],
        model=EXPERIMENT_MODEL,
    message:
        "Fig. 3 experiment on {wildcards.dataset}: varying similarity, {params.model} lists ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/exp_similarity.py"


rule exp_extreme:
    input:
        train=rules.split.output.train,
        test=rules.split.output.test,
    output:
        layout.output("exp_extreme"),
    log:
        layout.log("exp_extreme"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("exp_extreme", "mem_mb"),
        runtime=dense_resource("exp_extreme", "runtime"),
    params:
        **opt_in_params("plugins"),
        **measure_settings("epsilon"),
        seed=config["seed"],
    message:
        "Fig. 4 experiment on {wildcards.dataset}: MostFair and MostUnfair similarities ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/exp_extreme.py"


rule exp_gamma:
    input:
        unpack(per_model(rules.topk.output.topk, prefix="topk:")),
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        item=rules.genres.output[0],
        jacc=similarity_file("jacc"),
        genre=similarity_file("genre"),
    output:
        models=layout.output("exp_gamma", "models"),
        relevance=layout.output("exp_gamma", "relevance"),
    log:
        layout.log("exp_gamma"),
    wildcard_constraints:
        dataset=one_of(GENRE_DATASETS),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=dense_resource("exp_gamma", "mem_mb"),
        runtime=dense_resource("exp_gamma", "runtime"),
    params:
        **measure_settings("epsilon"),
        seed=config["seed"],
        gammas=config["experiments"]["gammas"],
    message:
        "Appendix experiment on {wildcards.dataset}: UF and PUF for every gamma ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/exp_gamma.py"
