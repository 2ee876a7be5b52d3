# Reproduction stage (docs/reproduction.md): the paper's printed Tables 1 and 2 beside the
# run's numbers, for every dataset whose preprocessing and split are the paper's; the
# others get a "no published numbers" entry. Reads the measures, the Table-1 statistics
# and, with the bootstrap on, every model's resamples. Without any dataset of published
# numbers there is nothing to compare: no figure is drawn, the cell tables (header only)
# stay out of the report, whose verdict table says why (report_when, rules/common/paths.smk).


# The figure (pdf, png), only when some dataset has published numbers.
PAPER_GAP_FIGURE = {
    kind: report(
        layout.output("paper_gap", kind),
        caption="../report/fig_paper_gap.rst",
        category="Reproduction",
        labels={"figure": "Ours / paper", "format": kind.upper()},
    )
    for kind in ("pdf", "png")
    if PAPER_DATASETS
}


rule paper_gap:
    input:
        unpack(paper_gap_inputs),
        code=DRAWING_CODE,
    output:
        **PAPER_GAP_FIGURE,
        csv=report_when(
            PAPER_DATASETS,
            layout.output("paper_gap", "csv"),
            caption="../report/paper_gap.rst",
            category="Reproduction",
            labels={"table": "The paper's numbers beside ours", "format": "CSV"},
        ),
        verdicts=report(
            layout.output("paper_gap", "verdicts"),
            caption="../report/paper_gap_verdicts.rst",
            category="Reproduction",
            labels={"table": "Verdict per dataset", "format": "CSV"},
        ),
        tau=report_when(
            PAPER_DATASETS,
            layout.output("paper_gap", "tau"),
            caption="../report/paper_gap_tau.rst",
            category="Reproduction",
            labels={"table": "Model orderings: paper vs ours", "format": "CSV"},
        ),
        table1=report_when(
            PAPER_DATASETS,
            layout.output("paper_gap", "table1"),
            caption="../report/paper_gap_stats.rst",
            category="Reproduction",
            labels={"table": "Table 1: paper vs ours", "format": "CSV"},
        ),
    log:
        layout.log("paper_gap"),
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
