# Artificial experiments (docs/method.md#analyses): each saves its table (parquet) before any plotting.
# Every random choice is seeded from config `seed`.

EXPERIMENTS_CONFIG = config["experiments"]
# The lists of Fig. 3 come from experiments.model; when it is not trained, the first
# configured model stands in (the rule's log says so).
EXPERIMENT_MODEL = (
    EXPERIMENTS_CONFIG["model"] if EXPERIMENTS_CONFIG["model"] in MODELS else MODELS[0]
)
GAMMA_DATASETS = [d for d in DATASETS if d in GENRE_DATASETS]
EXPERIMENT_PARAMS = dict(
    k=config["k"],
    epsilon=MEASURES_CONFIG["epsilon"],
    block_size=MEASURES_CONFIG["block_size"],
    device=MEASURES_CONFIG["device"],
    seed=config["seed"],
)


rule exp_relevance:
    input:
        train=SPLIT_FILES["train"],
        test=SPLIT_FILES["test"],
        jacc="results/{dataset}/similarity/jacc.npz",
        genre=(
            ["results/{dataset}/similarity/genre.npz"]
            if MEASURES_CONFIG["gamma"] < 1
            else []
        ),
    output:
        "results/{dataset}/experiments/relevance.parquet",
    log:
        "results/logs/exp_relevance/{dataset}.log",
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        **EXPERIMENT_PARAMS,
        envy_utility=MEASURES_CONFIG["envy_utility"],
        gamma=MEASURES_CONFIG["gamma"],
    message:
        "Fig. 2 experiment on {wildcards.dataset}: varying relevance"
    script:
        "../scripts/exp_relevance.py"


rule exp_similarity:
    input:
        train=SPLIT_FILES["train"],
        valid=SPLIT_FILES["valid"],
        test=SPLIT_FILES["test"],
        topk=f"results/{{dataset}}/models/{EXPERIMENT_MODEL}/topk.parquet",
        jacc="results/{dataset}/similarity/jacc.npz",
    output:
        "results/{dataset}/experiments/similarity.parquet",
    log:
        "results/logs/exp_similarity/{dataset}.log",
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        **EXPERIMENT_PARAMS,
        weibull_shapes=EXPERIMENTS_CONFIG["weibull_shapes"],
        requested_model=EXPERIMENTS_CONFIG["model"],
        model=EXPERIMENT_MODEL,
    message:
        "Fig. 3 experiment on {wildcards.dataset}: varying similarity, {params.model} lists"
    script:
        "../scripts/exp_similarity.py"


rule exp_extreme:
    input:
        train=SPLIT_FILES["train"],
        test=SPLIT_FILES["test"],
    output:
        "results/{dataset}/experiments/extreme.parquet",
    log:
        "results/logs/exp_extreme/{dataset}.log",
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        **EXPERIMENT_PARAMS,
    message:
        "Fig. 4 experiment on {wildcards.dataset}: MostFair and MostUnfair similarities"
    script:
        "../scripts/exp_extreme.py"


rule exp_gamma:
    input:
        train=SPLIT_FILES["train"],
        valid=SPLIT_FILES["valid"],
        test=SPLIT_FILES["test"],
        item="results/{dataset}/data/{dataset}.item",
        jacc="results/{dataset}/similarity/jacc.npz",
        genre="results/{dataset}/similarity/genre.npz",
        topk=expand("results/{{dataset}}/models/{model}/topk.parquet", model=MODELS),
    output:
        models="results/{dataset}/experiments/gamma_models.parquet",
        relevance="results/{dataset}/experiments/gamma_relevance.parquet",
    log:
        "results/logs/exp_gamma/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, GENRE_DATASETS)),
    conda:
        "../../envs/measures.yaml"
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        **EXPERIMENT_PARAMS,
        gammas=EXPERIMENTS_CONFIG["gammas"],
        models=MODELS,
    message:
        "Appendix experiment on {wildcards.dataset}: UF and PUF for every gamma"
    script:
        "../scripts/exp_gamma.py"


EXPERIMENT_FILES = {
    name: expand(
        f"results/{{dataset}}/experiments/{name}.parquet",
        dataset=GAMMA_DATASETS if name.startswith("gamma") else DATASETS,
    )
    for name in (
        "relevance",
        "similarity",
        "extreme",
        "gamma_models",
        "gamma_relevance",
    )
}


TARGETS += sum(EXPERIMENT_FILES.values(), [])
