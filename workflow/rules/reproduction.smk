# Reproduction stage (docs/reproduction.md): the paper's printed Tables 1 and 2 beside the
# run's numbers, for every dataset whose preprocessing and split are the paper's; the
# others get a "no published numbers" entry. Reads the measures, the Table-1 statistics
# and, with the bootstrap on, every model's resamples. Without any dataset of published
# numbers there is nothing to compare: no figure is drawn, the cell tables (header only)
# stay out of the report, whose verdict table says why (paper_gap_outputs, common.smk).


rule paper_gap:
    input:
        unpack(paper_gap_inputs),
        code=DRAWING_CODE,
    output:
        **paper_gap_outputs(),
    log:
        "results/logs/paper_gap/paper_gap.log",
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        datasets=DATASETS,
        models=MODELS,
        custom_datasets=CUSTOM_DATASETS,
        preprocessing=config["preprocessing"],
        settings=measure_settings("epsilon", "envy_utility", "gamma"),
        run=paper_gap_run(),
        level=config["uncertainty"]["level"],
        resamples=RESAMPLES,
        style=config["plots"],
        unpublished=UNPUBLISHED,
    message:
        "The paper's printed numbers beside the run's"
    script:
        "../scripts/paper_gap.py"
