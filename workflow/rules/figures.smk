# Figures (docs/analyses.md, docs/method.md#analyses): PDF + PNG in one seaborn style. The
# style settings are params of these rules only, so changing `plots:` reruns only figures;
# so does editing the drawing code (DRAWING_CODE, rules/common/settings.smk).


rule fig_agreement:
    input:
        data=rules.agreement.output[0],
        intervals=agreement_intervals,
        groups=agreement_groups,
        code=DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_agreement", "pdf"),
            caption="../report/fig_agreement.rst",
            category="Figures",
            labels={"figure": "Fig. 1: agreement", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_agreement", "png"),
            caption="../report/fig_agreement.rst",
            category="Figures",
            labels={"figure": "Fig. 1: agreement", "format": "PNG"},
        ),
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
        "../scripts/fig_agreement.py"


rule fig_relevance:
    input:
        data=expand(rules.exp_relevance.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_relevance", "pdf"),
            caption="../report/fig_relevance.rst",
            category="Figures",
            labels={"figure": "Fig. 2: varying relevance", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_relevance", "png"),
            caption="../report/fig_relevance.rst",
            category="Figures",
            labels={"figure": "Fig. 2: varying relevance", "format": "PNG"},
        ),
        reading=layout.output("fig_relevance", "reading"),
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
        "../scripts/fig_relevance.py"


rule fig_similarity:
    input:
        data=expand(rules.exp_similarity.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_similarity", "pdf"),
            caption="../report/fig_similarity.rst",
            category="Figures",
            labels={"figure": "Fig. 3: varying similarity", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_similarity", "png"),
            caption="../report/fig_similarity.rst",
            category="Figures",
            labels={"figure": "Fig. 3: varying similarity", "format": "PNG"},
        ),
        reading=layout.output("fig_similarity", "reading"),
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
        "../scripts/fig_similarity.py"


rule fig_extreme:
    input:
        data=expand(rules.exp_extreme.output[0], dataset=DATASETS),
        code=DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_extreme", "pdf"),
            caption="../report/fig_extreme.rst",
            category="Figures",
            labels={"figure": "Fig. 4: extreme cases", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_extreme", "png"),
            caption="../report/fig_extreme.rst",
            category="Figures",
            labels={"figure": "Fig. 4: extreme cases", "format": "PNG"},
        ),
        reading=layout.output("fig_extreme", "reading"),
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
        "../scripts/fig_extreme.py"


rule fig_gamma:
    input:
        models=expand(rules.exp_gamma.output.models, dataset=GENRE_DATASETS),
        relevance=expand(rules.exp_gamma.output.relevance, dataset=GENRE_DATASETS),
        code=DRAWING_CODE,
    output:
        models_pdf=report(
            layout.output("fig_gamma", "models_pdf"),
            caption="../report/fig_gamma_models.rst",
            category="Figures",
            labels={"figure": "Appendix: gamma, real runs", "format": "PDF"},
        ),
        models_png=report(
            layout.output("fig_gamma", "models_png"),
            caption="../report/fig_gamma_models.rst",
            category="Figures",
            labels={"figure": "Appendix: gamma, real runs", "format": "PNG"},
        ),
        relevance_pdf=report(
            layout.output("fig_gamma", "relevance_pdf"),
            caption="../report/fig_gamma_relevance.rst",
            category="Figures",
            labels={"figure": "Appendix: gamma, varying relevance", "format": "PDF"},
        ),
        relevance_png=report(
            layout.output("fig_gamma", "relevance_png"),
            caption="../report/fig_gamma_relevance.rst",
            category="Figures",
            labels={"figure": "Appendix: gamma, varying relevance", "format": "PNG"},
        ),
        models_reading=layout.output("fig_gamma", "models_reading"),
        relevance_reading=layout.output("fig_gamma", "relevance_reading"),
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
        "../scripts/fig_gamma.py"


rule fig_intervals:
    input:
        intervals=rules.table_uncertainty.output.intervals,
        code=DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_intervals", "pdf"),
            caption="../report/fig_intervals.rst",
            category="Figures",
            labels={"figure": "Fair measures with intervals", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_intervals", "png"),
            caption="../report/fig_intervals.rst",
            category="Figures",
            labels={"figure": "Fair measures with intervals", "format": "PNG"},
        ),
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
        "../scripts/fig_intervals.py"


rule fig_replicates:
    input:
        values=rules.table_replicates.output.values,
        scores=rules.table_replicates.output.scores,
        code=REPLICATE_DRAWING_CODE,
    output:
        pdf=report(
            layout.output("fig_replicates", "pdf"),
            caption="../report/fig_replicates.rst",
            category="Figures",
            labels={"figure": "Replicates and intervals", "format": "PDF"},
        ),
        png=report(
            layout.output("fig_replicates", "png"),
            caption="../report/fig_replicates.rst",
            category="Figures",
            labels={"figure": "Replicates and intervals", "format": "PNG"},
        ),
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
        "../scripts/fig_replicates.py"
