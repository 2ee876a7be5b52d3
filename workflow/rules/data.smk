# Data stage (docs/method.md#data): download -> preprocess -> split (+ genres) -> stats -> table_stats.

from userfair import catalogue

DATA_OPTIONS = config.get("dataset_options")
DOWNLOADABLE = [n for n, d in catalogue.CATALOGUE.items() if d.source != "tenrec"]
GENRE_DATASETS = [n for n, d in catalogue.CATALOGUE.items() if d.has_genres]
SPLITS = ["train", "valid", "test"]


rule download:
    output:
        "resources/raw/{dataset}/{dataset}.zip",
    log:
        "results/logs/download/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, DOWNLOADABLE)),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        url=lambda wildcards: catalogue.download_url(wildcards.dataset, DATA_OPTIONS),
        sha256=lambda wildcards: catalogue.options_of(wildcards.dataset, DATA_OPTIONS)[
            "sha256"
        ],
    message:
        "Fetch the raw archive of {wildcards.dataset}"
    script:
        "../scripts/download.py"


rule preprocess:
    input:
        lambda wildcards: catalogue.tracked_raw_input(wildcards.dataset, DATA_OPTIONS),
    output:
        "results/{dataset}/data/preprocessed.parquet",
    log:
        "results/logs/preprocess/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: catalogue.get(wildcards.dataset).mem_mb,
        runtime=60,
    params:
        source=lambda wildcards: catalogue.raw_source(wildcards.dataset, DATA_OPTIONS),
        min_rating=config["preprocessing"]["min_rating"],
        core=config["preprocessing"]["core"],
    message:
        "Deduplicate, binarise and 5-core {wildcards.dataset} (steps 1-3)"
    script:
        "../scripts/preprocess.py"


rule split:
    input:
        "results/{dataset}/data/preprocessed.parquet",
    output:
        train="results/{dataset}/data/{dataset}.train.inter",
        valid="results/{dataset}/data/{dataset}.valid.inter",
        test="results/{dataset}/data/{dataset}.test.inter",
    log:
        "results/logs/split/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: catalogue.get(wildcards.dataset).mem_mb,
        runtime=60,
    params:
        temporal=lambda wildcards: catalogue.get(wildcards.dataset).temporal,
        seed=config["seed"],
        valid_share=config["preprocessing"]["valid_share"],
        test_share=config["preprocessing"]["test_share"],
        min_train=config["preprocessing"]["min_train_interactions"],
    message:
        "Split {wildcards.dataset} 60/20/20 (steps 4-5)"
    script:
        "../scripts/split.py"


rule genres:
    input:
        lambda wildcards: catalogue.tracked_raw_input(wildcards.dataset, DATA_OPTIONS),
        splits=expand(
            "results/{{dataset}}/data/{{dataset}}.{split}.inter", split=SPLITS
        ),
    output:
        "results/{dataset}/data/{dataset}.item",
    log:
        "results/logs/genres/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, GENRE_DATASETS)),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: catalogue.get(wildcards.dataset).mem_mb,
        runtime=30,
    params:
        source=lambda wildcards: catalogue.raw_source(wildcards.dataset, DATA_OPTIONS),
    message:
        "Item genres of the split of {wildcards.dataset}"
    script:
        "../scripts/genres.py"


rule stats:
    input:
        preprocessed="results/{dataset}/data/preprocessed.parquet",
        splits=expand(
            "results/{{dataset}}/data/{{dataset}}.{split}.inter", split=SPLITS
        ),
    output:
        "results/{dataset}/data/stats.json",
    log:
        "results/logs/stats/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: catalogue.get(wildcards.dataset).mem_mb,
        runtime=30,
    message:
        "Table-1 statistics of {wildcards.dataset}"
    script:
        "../scripts/stats.py"


rule table_stats:
    input:
        stats=expand("results/{dataset}/data/stats.json", dataset=DATASETS),
        splits=expand(
            "results/{dataset}/data/{dataset}.{split}.inter",
            dataset=DATASETS,
            split=SPLITS,
        ),
    output:
        csv="results/tables/stats.csv",
        tex="results/tables/stats.tex",
    log:
        "results/logs/table_stats/table_stats.log",
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: max(catalogue.get(d).mem_mb for d in DATASETS),
        runtime=30,
    params:
        datasets=DATASETS,
    message:
        "Table 1: dataset statistics"
    script:
        "../scripts/table_stats.py"


TARGETS += ["results/tables/stats.csv", "results/tables/stats.tex"]
TARGETS += [f"results/{d}/data/{d}.item" for d in DATASETS if d in GENRE_DATASETS]
