# Who is treated unfairly (docs/method.md#who, docs/analyses.md#who): every evaluated
# user's exact share of every Fair measure per dataset x model, each measure's share by
# group of users with bootstrap intervals, the most disadvantaged users, and the figure.
# The decomposition takes the measures' route: the similarity files (dense) or pass one
# (streamed, more evaluated users than measures.stream_above).


rule users:
    input:
        unpack(users_inputs),
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.topk.output.topk,
        stats=rules.stats.output[0],
    output:
        users=layout.output("users", "users"),
        worst=layout.output("users", "worst"),
    log:
        layout.log("users"),
    conda:
        "../../envs/measures.yaml"
    threads: config["measures"]["threads"]
    resources:
        mem_mb=users_resource("mem_mb"),
        runtime=users_resource("runtime"),
    params:
        **measure_settings("epsilon", "envy_utility", "gamma"),
        **who_settings("features", "worst", "worst_measure", "neighbours"),
        **opt_in_params("plugins"),
        source=raw_source,
        route=route_param,
    message:
        "Each user's share of every Fair measure of {wildcards.model} on {wildcards.dataset} ({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/users.py"


rule who_table:
    input:
        unpack(per_run(rules.users.output.users)),
    output:
        report(
            layout.output("who_table"),
            caption="../report/who.rst",
            category="Tables",
            labels={"table": "Who carries each Fair measure", "format": "CSV"},
        ),
    log:
        layout.log("who_table"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **who_settings("groups", "features", "resamples"),
        datasets=DATASETS,
        models=MODELS,
    message:
        "Each Fair measure's share by group of users, with bootstrap intervals"
    script:
        "../scripts/who_table.py"


rule who_worst:
    input:
        unpack(per_run(rules.users.output.worst)),
    output:
        report(
            layout.output("who_worst"),
            caption="../report/who_worst.rst",
            category="Tables",
            labels={"table": "The most disadvantaged users", "format": "CSV"},
        ),
    log:
        layout.log("who_worst"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
    message:
        "The most disadvantaged users of every model, with their better-served neighbours"
    script:
        "../scripts/who_worst.py"


rule fig_who:
    input:
        table=rules.who_table.output[0],
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_who", "Who carries each Fair measure"),
    log:
        layout.log("fig_who"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        models=MODELS,
    message:
        "Share of each Fair measure by activity group per model, with intervals"
    script:
        "../scripts/figure.py"
