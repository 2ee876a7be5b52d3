# Measures stage (docs/method.md#user-similarity onwards): similarities once per dataset, every measure per dataset x
# model, Tables 2-3 and the Kendall tau agreement behind Fig. 1.

from userfair import catalogue

MEASURES_CONFIG = config["measures"]
SIMILARITY_KINDS = ["cos", "jacc", "genre"]


# UF with gamma < 1 mixes in the genre similarity, which needs the dataset's item genres.
if MEASURES_CONFIG["gamma"] < 1 and set(DATASETS) - set(GENRE_DATASETS):
    raise ValueError(
        f"config measures.gamma = {MEASURES_CONFIG['gamma']} < 1 needs item genres, which "
        f"{sorted(set(DATASETS) - set(GENRE_DATASETS))} lack; use gamma: 1 or datasets "
        f"with genres ({', '.join(GENRE_DATASETS)})"
    )

SPLIT_FILES = {
    name: f"results/{{dataset}}/data/{{dataset}}.{name}.inter"
    for name in ("train", "valid", "test")
}
ITEM_FILE = "results/{dataset}/data/{dataset}.item"
MEASURE_FILES = expand(
    "results/{dataset}/measures/{model}.json", dataset=DATASETS, model=MODELS
)


rule similarity:
    input:
        train=SPLIT_FILES["train"],
        test=SPLIT_FILES["test"],
        item=lambda wildcards: [ITEM_FILE] if wildcards.kind == "genre" else [],
    output:
        "results/{dataset}/similarity/{kind}.npz",
    log:
        "results/logs/similarity/{dataset}_{kind}.log",
    wildcard_constraints:
        kind="|".join(SIMILARITY_KINDS),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        block_size=MEASURES_CONFIG["block_size"],
    message:
        "User similarity {wildcards.kind} of {wildcards.dataset}"
    script:
        "../scripts/similarity.py"


rule measures:
    input:
        train=SPLIT_FILES["train"],
        valid=SPLIT_FILES["valid"],
        test=SPLIT_FILES["test"],
        topk="results/{dataset}/models/{model}/topk.parquet",
        cos="results/{dataset}/similarity/cos.npz",
        jacc="results/{dataset}/similarity/jacc.npz",
        genre=(
            ["results/{dataset}/similarity/genre.npz"]
            if MEASURES_CONFIG["gamma"] < 1
            else []
        ),
    output:
        "results/{dataset}/measures/{model}.json",
    log:
        "results/logs/measures/{dataset}_{model}.log",
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        k=config["k"],
        epsilon=MEASURES_CONFIG["epsilon"],
        envy_utility=MEASURES_CONFIG["envy_utility"],
        gamma=MEASURES_CONFIG["gamma"],
        block_size=MEASURES_CONFIG["block_size"],
        device=MEASURES_CONFIG["device"],
    message:
        "Every Eff and Fair measure of {wildcards.model} on {wildcards.dataset}"
    script:
        "../scripts/measures.py"


rule table_scores:
    input:
        MEASURE_FILES,
    output:
        csv=report(
            "results/tables/scores.csv",
            caption="../report/table_scores.rst",
            category="Tables",
            labels={"table": "Table 2: Eff and Fair scores", "format": "CSV"},
        ),
        tex=report(
            "results/tables/scores.tex",
            caption="../report/table_scores.rst",
            category="Tables",
            labels={"table": "Table 2: Eff and Fair scores", "format": "LaTeX"},
        ),
    log:
        "results/logs/table_scores/table_scores.log",
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
        MEASURE_FILES,
    output:
        csv=report(
            "results/tables/timing.csv",
            caption="../report/table_timing.rst",
            category="Tables",
            labels={"table": "Table 3: computation time", "format": "CSV"},
        ),
        tex=report(
            "results/tables/timing.tex",
            caption="../report/table_timing.rst",
            category="Tables",
            labels={"table": "Table 3: computation time", "format": "LaTeX"},
        ),
    log:
        "results/logs/table_timing/table_timing.log",
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
        MEASURE_FILES,
    output:
        report(
            "results/tables/agreement.csv",
            caption="../report/agreement.rst",
            category="Tables",
            labels={
                "table": "Kendall tau between measures (Fig. 1 data)",
                "format": "CSV",
            },
        ),
    log:
        "results/logs/agreement/agreement.log",
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


TARGETS += MEASURE_FILES
TARGETS += [
    f"results/tables/{t}.{e}" for t in ("scores", "timing") for e in ("csv", "tex")
]
TARGETS += ["results/tables/agreement.csv"]
