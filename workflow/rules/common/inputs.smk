# The input functions of the rules whose inputs depend on the config: the opt-in inputs
# (item genres, grades, user vectors, asked for only when configured), replicate r's split
# and similarities, the group and bootstrap inputs, and the named inputs of the tables
# that read every dataset, run or replicate (paper_gap, claims, table_energy, run_config).


def run_targets(wildcards):
    """Input function of `run_config`: every target of the run (targets.smk, all_targets,
    defined after every stage and called only when the DAG is built)."""
    return all_targets()


def uf_genre_similarity(wildcards):
    """The genre similarity when UF mixes it in (measures.gamma < 1), else nothing."""
    if config["measures"]["gamma"] < 1:
        return [similarity_file("genre").format(dataset=wildcards.dataset)]
    return []


def item_genres_of_kind(wildcards):
    """The dataset's item genres (D.item) for the genre similarity, else nothing."""
    if wildcards.kind == "genre":
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def uf_item_genres(wildcards):
    """The dataset's item genres when UF mixes in the genre similarity (gamma < 1) on the
    streamed route, else nothing."""
    if config["measures"]["gamma"] < 1:
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def opt_in_item_genres(wildcards):
    """The dataset's item genres when the opt-in genre similarity is configured
    (measures.similarities), else nothing."""
    if "genre" in EXTRA_SIMILARITIES:
        return expand(rules.genres.output[0], dataset=wildcards.dataset)
    return []


def opt_in_grades(wildcards):
    """The dataset's grades (rule grades) when graded relevance is configured
    (measures.relevance), else nothing: the input grades of every job that computes the
    graded measures, which joins them onto its split
    (userfair.workflow.steps.graded_splits)."""
    if GRADED:
        return expand(rules.grades.output[0], dataset=wildcards.dataset)
    return []


def opt_in_user_vectors(wildcards):
    """The user vectors of measures.similarities' embedding:MODEL on the dataset (rule
    user_vectors), else nothing."""
    if EMBEDDING_MODEL is None:
        return []
    return expand(
        rules.user_vectors.output[0], dataset=wildcards.dataset, model=EMBEDDING_MODEL
    )


def agreement_intervals(wildcards):
    """Fig. 1's tau intervals when the bootstrap is on: over the users, or over replicates
    and users when training.replicates > 1 (table_replicates); else nothing (the figure is
    then exactly the one without it)."""
    if not RESAMPLES:
        return []
    if config["training"]["replicates"] > 1:
        return [rules.table_replicates.output.agreement]
    return [rules.table_uncertainty.output.agreement]


def scores_ci_groups(wildcards):
    """Table 2's group rows: the group measures with intervals (table_groups) when the run
    has a grouping (measures.groups not []), else nothing."""
    return [rules.table_groups.output.csv] if group_specs() else []


def agreement_groups(wildcards):
    """Fig. 1's group panels: the group measures' tau against the individual ones
    (table_groups) with a grouping (measures.groups not []), else nothing."""
    return [rules.table_groups.output.agreement] if group_specs() else []


def replicate_splits(wildcards):
    """Input function (use with unpack): train, valid, test of replicate r of the job's
    dataset: its own split (rule replicate_split) where the split is redrawn, else the
    dataset's (rule split)."""
    own = wildcards.dataset in REDRAWN
    template = rules.replicate_split.output if own else rules.split.output
    return {
        name: getattr(template, name).format(**wildcards)
        for name in ("train", "valid", "test")
    }


def replicate_item_genres(wildcards):
    """The item genres of replicate r's split (rule replicate_genres), as a list."""
    return [rules.replicate_genres.output[0].format(**wildcards)]


def replicate_item_genres_of_kind(wildcards):
    """Input of `replicate_similarity`: replicate r's item genres for the genre
    similarity, else nothing (as item_genres_of_kind for the dataset's split)."""
    return replicate_item_genres(wildcards) if wildcards.kind == "genre" else []


def replicate_opt_in_item_genres(wildcards):
    """Input of `replicate_uncertainty`: the item genres the opt-in genre similarity reads
    (opt_in_item_genres), replicate r's own where its split is redrawn."""
    if not opt_in_item_genres(wildcards):
        return []
    if wildcards.dataset in REDRAWN:
        return replicate_item_genres(wildcards)
    return opt_in_item_genres(wildcards)


def replicate_similarities(wildcards):
    """Input function (use with unpack): the dense similarity files (cos, jacc, and genre
    when UF mixes it in) of replicate r's split: its own (rule replicate_similarity) where
    the split is redrawn, else the dataset's."""
    named = {
        "cos": similarity_file("cos").format(dataset=wildcards.dataset),
        "jacc": similarity_file("jacc").format(dataset=wildcards.dataset),
        "genre": uf_genre_similarity(wildcards),
    }
    if wildcards.dataset not in REDRAWN:
        return named
    own = rules.replicate_similarity.output[0]
    return {
        kind: (
            [own.format(kind=kind, **wildcards) for _ in files]
            if isinstance(files, list)
            else own.format(kind=kind, **wildcards)
        )
        for kind, files in named.items()
    }


def groups_raw(wildcards):
    """The raw source of the dataset when a grouping reads a user feature."""
    features = any(spec.startswith("feature:") for spec in group_specs())
    return raw_input(wildcards) if features else []


def group_figure_tests(wildcards):
    """The paired comparisons the group figure's reading names: over replicates and users
    with training.replicates > 1 (table_replicates, with the group rows), else over the
    users (table_uncertainty; the group ones: table_groups)."""
    if REPLICATES > 1:
        return rules.table_replicates.output.significance
    return rules.table_uncertainty.output.significance


def replicate_group_inputs(wildcards):
    """Input function (use with unpack) of `table_replicates`: every replicate's groups
    files (``groups:D/M/r``, ``group_resamples:D/M/r``) with a grouping, else none."""
    if not group_specs():
        return {}
    return {
        **per_replicate("groups", prefix="groups:")(wildcards),
        **per_replicate("group_resamples", prefix="group_resamples:")(wildcards),
    }


def uncertainty_runs(wildcards):
    """The uncertainty stage's resamples of every run when the bootstrap is on."""
    if not RESAMPLES:
        return {}
    return per_run(rules.uncertainty.output[0], prefix="resamples:")(wildcards)


def experiment_model_topk(wildcards):
    """The top-k lists of the similarity experiment's model on the job's dataset."""
    return expand(
        rules.topk.output.topk, dataset=wildcards.dataset, model=EXPERIMENT_MODEL
    )[0]


def paper_gap_inputs(wildcards):
    """Input function (use with unpack) of `paper_gap`: for every dataset of
    PAPER_DATASETS its stats (``stats:D``), every model's measures (``measures:D/M``) and,
    with the bootstrap on, resamples (``resamples:D/M``)."""
    named, resamples = {}, rules.uncertainty.output[0] if RESAMPLES else None
    for d in PAPER_DATASETS:
        named[f"stats:{d}"] = expand(rules.stats.output[0], dataset=d)[0]
        for m in MODELS:
            run = {"dataset": d, "model": m}
            named[f"measures:{d}/{m}"] = expand(rules.measures.output[0], **run)[0]
            if resamples:
                named[f"resamples:{d}/{m}"] = expand(resamples, **run)[0]
    return named


def claims_inputs(wildcards):
    """Input function (use with unpack) of `claims`: every replicate's measures
    (``measures:D/M/r``) and, with the bootstrap on, its resamples (``resamples:D/M/r``);
    per dataset its stats (``stats:D``) and the experiments of Figs. 2-4
    (``relevance:D``, ``similarity:D``, ``extreme:D``)."""
    named = per_replicate("measures", prefix="measures:")(wildcards)
    if RESAMPLES:
        named.update(per_replicate("uncertainty", prefix="resamples:")(wildcards))
    outputs = {
        "stats": rules.stats.output[0],
        "relevance": rules.exp_relevance.output[0],
        "similarity": rules.exp_similarity.output[0],
        "extreme": rules.exp_extreme.output[0],
    }
    for d in DATASETS:
        for name, template in outputs.items():
            named[f"{name}:{d}"] = template.format(dataset=d)
    return named


def energy_inputs(wildcards):
    """Input function (use with unpack) of `table_energy`: the output of every training and
    export job of the run, named ``RULE:D/M/JOB`` (tune: the grid point's valid.json; topk:
    the lists; replicate r: its valid.json), beside which the job wrote its energy record.
    """
    named = {}
    for d in DATASETS:
        for m in MODELS:
            run = {"dataset": d, "model": m}
            for p in job_points("tune", m):
                named[f"tune:{d}/{m}/{p}"] = rules.tune.output.valid.format(
                    point=p, **run
                )
            named[f"topk:{d}/{m}"] = rules.topk.output.topk.format(**run)
            if m in replicated_models(d):
                for r in range(1, REPLICATES):
                    valid = rules.replicate.output.valid.format(replicate=r, **run)
                    named[f"replicate:{d}/{m}/{r}"] = valid
    return named
