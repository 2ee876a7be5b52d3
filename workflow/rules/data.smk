# Data stage (SPEC §1-2): download -> preprocess -> split (+ genres) -> stats -> table_stats.

import os

from userfair import catalogue

DATA = RESULTS + "/data"
DOWNLOADABLE = [n for n, d in catalogue.CATALOGUE.items() if d.source != "tenrec"]
GENRE_DATASETS = [n for n, d in catalogue.CATALOGUE.items() if d.has_genres]


def raw_source(dataset):
    """The raw folder/archive/CSV of `dataset` (a configured `path` wins)."""
    return catalogue.raw_source(dataset, config.get("dataset_options"))


def raw_input(wildcards):
    """The raw file as a tracked input when a rule makes it or it exists; otherwise nothing,
    and the job itself fails with a message saying where the file comes from."""
    source = raw_source(wildcards.dataset)
    needed = catalogue.needs_download(wildcards.dataset, config.get("dataset_options"))
    return source if needed or os.path.exists(source) else []


def dataset_option(key):
    return lambda wildcards: catalogue.options_of(
        wildcards.dataset, config.get("dataset_options")
    )[key]


def split_files(dataset):
    return expand(
        "{results}/{dataset}/data/{dataset}.{split}.inter",
        results=RESULTS,
        dataset=dataset,
        split=["train", "valid", "test"],
    )


rule download:
    output:
        "resources/raw/{dataset}/{dataset}.zip",
    log:
        LOGS + "/download/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, DOWNLOADABLE)),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        url=lambda wildcards: catalogue.download_url(
            wildcards.dataset, config.get("dataset_options")
        ),
        sha256=dataset_option("sha256"),
    message:
        "Fetch the raw archive of {wildcards.dataset}"
    script:
        "../scripts/download.py"


rule preprocess:
    input:
        raw_input,
    output:
        RESULTS + "/{dataset}/data/preprocessed.parquet",
    log:
        LOGS + "/preprocess/{dataset}.log",
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=lambda wildcards: catalogue.get(wildcards.dataset).mem_mb,
        runtime=60,
    params:
        source=lambda wildcards: raw_source(wildcards.dataset),
        min_rating=config["preprocessing"]["min_rating"],
        core=config["preprocessing"]["core"],
    message:
        "Deduplicate, binarise and 5-core {wildcards.dataset} (SPEC §2 steps 1-3)"
    script:
        "../scripts/preprocess.py"


rule split:
    input:
        RESULTS + "/{dataset}/data/preprocessed.parquet",
    output:
        train=RESULTS + "/{dataset}/data/{dataset}.train.inter",
        valid=RESULTS + "/{dataset}/data/{dataset}.valid.inter",
        test=RESULTS + "/{dataset}/data/{dataset}.test.inter",
    log:
        LOGS + "/split/{dataset}.log",
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
        "Split {wildcards.dataset} 60/20/20 (SPEC §2 steps 4-5)"
    script:
        "../scripts/split.py"


rule genres:
    input:
        raw_input,
        splits=lambda wildcards: split_files(wildcards.dataset),
    output:
        RESULTS + "/{dataset}/data/{dataset}.item",
    log:
        LOGS + "/genres/{dataset}.log",
    wildcard_constraints:
        dataset="|".join(map(re.escape, GENRE_DATASETS)),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        source=lambda wildcards: raw_source(wildcards.dataset),
    message:
        "Item genres of the split of {wildcards.dataset}"
    script:
        "../scripts/genres.py"


rule stats:
    input:
        preprocessed=RESULTS + "/{dataset}/data/preprocessed.parquet",
        splits=lambda wildcards: split_files(wildcards.dataset),
    output:
        RESULTS + "/{dataset}/data/stats.json",
    log:
        LOGS + "/stats/{dataset}.log",
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
        stats=expand(RESULTS + "/{dataset}/data/stats.json", dataset=DATASETS),
        splits=[f for dataset in DATASETS for f in split_files(dataset)],
    output:
        csv=RESULTS + "/tables/stats.csv",
        tex=RESULTS + "/tables/stats.tex",
    log:
        LOGS + "/table_stats/table_stats.log",
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


TARGETS += [RESULTS + "/tables/stats.csv", RESULTS + "/tables/stats.tex"]
TARGETS += [f"{RESULTS}/{d}/data/{d}.item" for d in DATASETS if d in GENRE_DATASETS]
