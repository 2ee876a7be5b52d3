# The targets of the whole run, one function per stage listing the files that stage
# delivers for the configured datasets and models; the Snakefile's `all` asks for them.
# Included last, after every stage file, so that each function names the rules of its
# stage through rules.RULE.output, and the figure rules of its stage file by stage_figures.


def stage_figures(stage):
    """The files of the figure rules of rules/STAGE.smk that run scripts/figure.py (their
    figures declared in the drawing modules, their outputs ``**figure_outputs(...)``), in
    the order of the file, those of a figure per dataset for every dataset, but those
    FIGURE_SWITCHES (figures.smk) turns off: a new figure there is a target of its stage,
    last, by itself."""
    return [
        path
        for rule in workflow.rules
        if os.path.basename(rule.snakefile) == f"{stage}.smk"
        and os.path.basename(rule.script or "") == "figure.py"
        and FIGURE_SWITCHES.get(rule.name, True)
        for template in getattr(rules, rule.name).output
        for path in (
            expand(template, dataset=DATASETS)
            if "{dataset}" in template
            else [template]
        )
    ]


def data_targets():
    """Table 1 and the item genres of the datasets that have them."""
    return [
        *rules.table_stats.output,
        *expand(rules.genres.output[0], dataset=GENRE_DATASETS),
    ]


def model_targets():
    """Per dataset and model: the tuning table, the winner, its top-k lists and RecBole's
    test metrics."""
    return expand(
        [*rules.select.output, *rules.topk.output], dataset=DATASETS, model=MODELS
    )


def measure_targets():
    """Every measures file, Tables 2-3 and the agreement table."""
    return [
        *expand(rules.measures.output[0], dataset=DATASETS, model=MODELS),
        *rules.table_scores.output,
        *rules.table_timing.output,
        *rules.agreement.output,
    ]


def uncertainty_targets():
    """With resamples > 0: every model's resamples, Table 2 with intervals, the paired
    comparisons, the interval and tau tables and the stage's figures (the intervals
    figure); else nothing."""
    if not RESAMPLES:
        return []
    return [
        *expand(rules.uncertainty.output[0], dataset=DATASETS, model=MODELS),
        *rules.table_uncertainty.output,
        *stage_figures("uncertainty"),
    ]


def replicate_targets():
    """With training.replicates R > 1: the lists, measures and bootstrap resamples of
    replicates 1..R-1 of every trainable model (of every model on a dataset whose split is
    redrawn: replicated_models), the tables over replicates and users and
    the stage's figures; else nothing."""
    if REPLICATES == 1:
        return []
    outputs = [
        rules.replicate.output.topk,
        rules.replicate_measures.output[0],
        rules.replicate_uncertainty.output[0],
    ]
    runs = [
        path
        for dataset in DATASETS
        for path in expand(
            outputs,
            dataset=dataset,
            model=replicated_models(dataset),
            replicate=range(1, REPLICATES),
        )
    ]
    return runs + list(rules.table_replicates.output) + stage_figures("replicates")


def who_targets():
    """Every users file, the group and worst-case tables and the stage's figures (the who
    figure)."""
    return [
        *expand(rules.users.output, dataset=DATASETS, model=MODELS),
        *rules.who_table.output,
        *rules.who_worst.output,
        *stage_figures("who"),
    ]


def group_targets():
    """Every groups file, the groups tables and the stage's figures (with resamples > 0
    the figure per dataset: FIGURE_SWITCHES)."""
    return [
        *expand(rules.groups.output, dataset=DATASETS, model=MODELS),
        *rules.table_groups.output,
        *stage_figures("groups"),
    ]


def experiment_targets():
    """The tables behind Figs. 2-4 (every dataset) and the gamma figures (datasets with
    genres)."""
    return [
        *expand(
            [
                *rules.exp_relevance.output,
                *rules.exp_similarity.output,
                *rules.exp_extreme.output,
            ],
            dataset=DATASETS,
        ),
        *expand(rules.exp_gamma.output, dataset=GENRE_DATASETS),
    ]


def figure_targets():
    """The figures of figures.smk: Figs. 1-4, and the gamma figures when a configured
    dataset has genres (FIGURE_SWITCHES)."""
    return stage_figures("figures")


def variant_targets():
    """With opt-in measures (measures.relevance graded or measures.similarities beyond cos
    and jacc): the PUF variants' tau table and summary, Figs. 3 and 4 with each similarity
    and their figures; else nothing."""
    if not VARIANTS:
        return []
    return [
        *rules.table_variants.output,
        *expand(rules.exp_variants.output, dataset=DATASETS),
        *stage_figures("variants"),
    ]


def reproduction_targets():
    """The paper's numbers beside the run's: the gap table and its companions, the figure."""
    return list(rules.paper_gap.output)


def claims_targets():
    """Every measure's properties, the paper's claims on this run (per dataset and across
    the datasets) and the report's first page."""
    return list(rules.claims.output)


def all_targets():
    """Every stage's targets: what a complete run of this configuration delivers."""
    return [
        *data_targets(),
        *model_targets(),
        *measure_targets(),
        *uncertainty_targets(),
        *replicate_targets(),
        *who_targets(),
        *group_targets(),
        *experiment_targets(),
        *figure_targets(),
        *variant_targets(),
        *reproduction_targets(),
        *claims_targets(),
    ]
