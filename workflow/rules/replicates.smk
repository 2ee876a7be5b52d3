# Replicates stage (docs/training.md#replicates, docs/method.md#replicates): with
# training.replicates R > 1, replicate r = 1..R-1 of every trainable model retrains the
# winning grid point with its own seed (one job each), and its measures and bootstrap
# resamples are computed as replicate 0's are. Replicate 0 is today's model (rules topk,
# measures, uncertainty), and so is every replicate of a KNN model, whose lists do not
# depend on a seed (rules/common/paths.smk, replicate_file). R = 1: no job, no file.
# With training.replicate_split, replicate r of a dataset split at random (REDRAWN) also
# redraws the split with its seed (replicate_split) and gets its own item genres
# (replicate_genres) and similarities (replicate_similarity); every model, the KNN ones
# too, is retrained on it.
# Every replicate rule but `replicate` (which retrains the winner) is `use rule BASE as
# replicate_BASE with:` of the rule that makes replicate 0's file: the same script, params
# (but the split's seed), threads and resources, so that a change to the base rule reaches
# its replicate; only the inputs (replicate r's files), outputs, log and message are its own
# (tests/runs/test_replicate_rules.py checks the params).


use rule split as replicate_split with:
    output:
        train=layout.output("replicate_split", "train"),
        valid=layout.output("replicate_split", "valid"),
        test=layout.output("replicate_split", "test"),
    log:
        layout.log("replicate_split"),
    wildcard_constraints:
        dataset=one_of(REDRAWN),
        replicate=r"[1-9]\d*",
    params:
        temporal=False,
        seed=replicate_split_seed,
    message:
        "Split {wildcards.dataset} again for replicate {wildcards.replicate} (seed "
        "{params.seed}, {params.protocol} protocol, steps 4-5)"


use rule genres as replicate_genres with:
    input:
        raw_input,
        splits=rules.replicate_split.output,
    output:
        layout.output("replicate_genres"),
    log:
        layout.log("replicate_genres"),
    wildcard_constraints:
        dataset=one_of([d for d in REDRAWN if d in GENRE_DATASETS]),
        replicate=r"[1-9]\d*",
    message:
        "Item genres of replicate {wildcards.replicate}'s split of {wildcards.dataset}"


use rule similarity as replicate_similarity with:
    input:
        train=rules.replicate_split.output.train,
        test=rules.replicate_split.output.test,
        item=replicate_item_genres_of_kind,
    output:
        layout.output("replicate_similarity"),
    log:
        layout.log("replicate_similarity"),
    wildcard_constraints:
        dataset=one_of(REDRAWN),
        replicate=r"[1-9]\d*",
        kind=one_of(SIMILARITY_KINDS),
    message:
        "User similarity {wildcards.kind} of replicate {wildcards.replicate}'s split of "
        "{wildcards.dataset}"


# The genre kind after replicate_genres: its own rule (see genre_similarity, measures.smk).
use rule replicate_similarity as replicate_genre_similarity with:
    input:
        train=rules.replicate_split.output.train,
        test=rules.replicate_split.output.test,
        item=rules.replicate_genres.output,  # a list, as the base rule's
    wildcard_constraints:
        dataset=one_of(REDRAWN),
        replicate=r"[1-9]\d*",
        kind="genre",


ruleorder: replicate_genre_similarity > replicate_similarity


rule replicate:
    input:
        unpack(replicate_splits),
        best=rules.select.output.best,
        shared=rules.recbole_dataset.output[0],
    output:
        topk=layout.output("replicate", "topk"),
        valid=layout.output("replicate", "valid"),
        test=layout.output("replicate", "test"),
    log:
        layout.log("replicate"),
    wildcard_constraints:
        replicate=r"[1-9]\d*",
        model=one_of(REPLICATED_MODELS),
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=replicate_resource("mem_mb"),
        runtime=replicate_resource("runtime"),
        gpu=training_gpus,
        slurm_partition=training_partition,
    params:
        training=training_settings(),
        data_dir=replicate_data_dir,
        workdir=replicate_folder,
    message:
        training_message(
            "Train replicate {wildcards.replicate} of {wildcards.model} on {wildcards.dataset}"
        )
    script:
        "../scripts/replicate.py"


# The streamed route (more evaluated users than measures.stream_above): pass two of the
# replicate's lists over measures.scatter parts, gathered by replicate_measures, as
# measure_sums and measures do for replicate 0 (a redrawn split is refused there:
# replicate_measure_inputs, so the split is the dataset's).


use rule measure_sums as replicate_sums with:
    input:
        train=rules.split.output.train,
        valid=rules.split.output.valid,
        test=rules.split.output.test,
        topk=rules.replicate.output.topk,
        pairs=rules.pairs.output[0],
        item=streamed_item_genres,
        vectors=opt_in_user_vectors,
        grades=opt_in_grades,
    output:
        layout.output("replicate_sums"),
    log:
        layout.log("replicate_sums"),
    wildcard_constraints:
        replicate=r"[1-9]\d*",
        model=one_of(REPLICATED_MODELS),
        scatteritem=SCATTER_ITEM,
    message:
        "Pass two of replicate {wildcards.replicate} of {wildcards.model} on "
        "{wildcards.dataset}, part {wildcards.scatteritem}"


use rule measures as replicate_measures with:
    input:
        unpack(replicate_measure_inputs),
        topk=rules.replicate.output.topk,
        stats=rules.stats.output[0],
        grades=opt_in_grades,
    output:
        layout.output("replicate_measures"),
    log:
        layout.log("replicate_measures"),
    wildcard_constraints:
        replicate=r"[1-9]\d*",
        model=one_of(REPLICATED_MODELS),
    message:
        "Every measure of replicate {wildcards.replicate} of {wildcards.model} on "
        "{wildcards.dataset}"


use rule uncertainty as replicate_uncertainty with:
    input:
        unpack(replicate_splits),
        unpack(replicate_similarities),
        topk=rules.replicate.output.topk,
        item=replicate_opt_in_item_genres,
        vectors=opt_in_user_vectors,
        grades=opt_in_grades,
    output:
        layout.output("replicate_uncertainty"),
    log:
        layout.log("replicate_uncertainty"),
    wildcard_constraints:
        replicate=r"[1-9]\d*",
        model=one_of(REPLICATED_MODELS),
    message:
        "Bootstrap resamples of replicate {wildcards.replicate} of {wildcards.model} on "
        "{wildcards.dataset}"


rule table_replicates:
    input:
        unpack(per_replicate("measures", prefix="measures:")),
        unpack(per_replicate("uncertainty", prefix="resamples:")),
        unpack(replicate_group_inputs),
    output:
        values=report(
            layout.output("table_replicates", "values"),
            caption="../report/replicates.rst",
            category="Tables",
            labels={"table": "Every measure per replicate", "format": "CSV"},
        ),
        variance=report(
            layout.output("table_replicates", "variance"),
            caption="../report/variance.rst",
            category="Tables",
            labels={"table": "Variance from training and from users", "format": "CSV"},
        ),
        scores=report(
            layout.output("table_replicates", "scores"),
            caption="../report/table_replicates.rst",
            category="Tables",
            labels={"table": "Table 2 over replicates and users", "format": "CSV"},
        ),
        significance=report(
            layout.output("table_replicates", "significance"),
            caption="../report/significance_replicates.rst",
            category="Tables",
            labels={
                "table": "Paired comparisons over replicates and users",
                "format": "CSV",
            },
        ),
        agreement=report(
            layout.output("table_replicates", "agreement"),
            caption="../report/agreement_replicates.rst",
            category="Tables",
            labels={
                "table": "Fig. 1's tau over replicates and users",
                "format": "CSV",
            },
        ),
        conclusions=report(
            layout.output("table_replicates", "conclusions"),
            caption="../report/conclusions.rst",
            category="Tables",
            labels={"table": "Conclusions that survive replicates", "format": "CSV"},
        ),
    log:
        layout.log("table_replicates"),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        **nested_param(),
        datasets=DATASETS,
        models=MODELS,
        replicates=REPLICATES,
        level=config["uncertainty"]["level"],
        seed=config["seed"],
    message:
        "Tables over {params.replicates} training replicates and the users: values, "
        "variance shares, Table 2 with intervals, comparisons, tau, conclusions"
    script:
        "../scripts/table_replicates.py"


rule fig_replicates:
    input:
        values=rules.table_replicates.output.values,
        scores=rules.table_replicates.output.scores,
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_replicates", "Replicates and intervals"),
    log:
        layout.log("fig_replicates"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        models=MODELS,
    message:
        "Each model's per-replicate values beside its interval over replicates and users"
    script:
        "../scripts/figure.py"
