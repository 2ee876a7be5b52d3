# Figures (docs/analyses.md, docs/method.md#analyses): PDF + PNG in one seaborn style. The
# style settings are params of these rules only, so changing `plots:` reruns only figures;
# so does editing the drawing code (DRAWING_CODE, rules/common/settings.smk). Each rule
# here runs scripts/figure.py, which draws the figures a drawing module declares for it
# (userfair.workflow.figure_registry), and is a target by itself (targets.smk,
# stage_figures) unless FIGURE_SWITCHES turns it off (docs/architecture.md, "Adding a figure").

# The figure rules (of this file or a stage's) drawn only under a condition of their own:
# fig_gamma with a dataset with genres, fig_groups with the bootstrap (resamples > 0).
FIGURE_SWITCHES = {"fig_gamma": bool(GENRE_DATASETS), "fig_groups": bool(RESAMPLES)}


rule fig_agreement:
    input:
        data=rules.agreement.output[0],
        intervals=agreement_intervals,
        groups=agreement_groups,
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_agreement", "Fig. 1: agreement"),
    log:
        layout.log("fig_agreement"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
        replicates=REPLICATES,
        resamples=RESAMPLES,
    message:
        "Fig. 1: Kendall tau heatmap"
    script:
        "../scripts/figure.py"


rule fig_relevance:
    input:
        data=expand(rules.exp_relevance.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_relevance", "Fig. 2: varying relevance", reading=True),
    log:
        layout.log("fig_relevance"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
    message:
        "Fig. 2: varying relevance"
    script:
        "../scripts/figure.py"


rule fig_similarity:
    input:
        data=expand(rules.exp_similarity.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_similarity", "Fig. 3: varying similarity", reading=True),
    log:
        layout.log("fig_similarity"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
    message:
        "Fig. 3: varying similarity"
    script:
        "../scripts/figure.py"


rule fig_extreme:
    input:
        data=expand(rules.exp_extreme.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        **figure_outputs("fig_extreme", "Fig. 4: extreme cases", reading=True),
    log:
        layout.log("fig_extreme"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
    message:
        "Fig. 4: MostFair and MostUnfair"
    script:
        "../scripts/figure.py"


rule fig_gamma:
    input:
        models=expand(rules.exp_gamma.output.models, dataset=GENRE_DATASETS),
        relevance=expand(rules.exp_gamma.output.relevance, dataset=GENRE_DATASETS),
        code=DRAWING_CODE,
    output:
        **figure_outputs(
            "fig_gamma",
            {
                "models": "Appendix: gamma, real runs",
                "relevance": "Appendix: gamma, varying relevance",
            },
            reading=True,
        ),
    log:
        layout.log("fig_gamma"),
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        style=config["plots"],
    message:
        "Appendix figures: UF and PUF for every gamma"
    script:
        "../scripts/figure.py"
