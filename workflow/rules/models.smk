# Models stage (docs/method.md#recommenders): tune (one job per dataset x model x grid point) -> select -> topk.
# The grid file is validated here, while the DAG is built, so an unknown model or grid key
# fails before any training starts.

from userfair import catalogue, grids

GRID_POINTS = grids.load_points(config["grid"], MODELS)
TRAINING = {
    **{key: config["training"][key] for key in grids.TRAINING_SETTINGS},
    "seed": config["seed"],
    "k": config["k"],
}
SPLIT_FILES = expand(
    "results/{{dataset}}/data/{{dataset}}.{split}.inter",
    split=["train", "valid", "test"],
)


rule tune:
    input:
        SPLIT_FILES,
    output:
        valid="results/{dataset}/models/{model}/grid/{point}/valid.json",
        checkpoint="results/{dataset}/models/{model}/grid/{point}/model.pth",
    log:
        "results/logs/tune/{dataset}/{model}/{point}.log",
    wildcard_constraints:
        point=r"\d+",
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=lambda wildcards: max(4000, catalogue.get(wildcards.dataset).mem_mb),
        runtime=config["training"]["runtime"],
        gpu=lambda wildcards: grids.gpus(wildcards.model, config["training"]["device"]),
    params:
        grid_params=lambda wildcards: grids.point_params(
            GRID_POINTS, wildcards.model, wildcards.point
        ),
        training=TRAINING,
        data_dir=lambda wildcards, input: os.path.dirname(input[0]),
        workdir=lambda wildcards, output: os.path.dirname(output.valid),
    message:
        "Train {wildcards.model} grid point {wildcards.point} on {wildcards.dataset}"
    script:
        "../scripts/tune.py"


rule select:
    input:
        valid=lambda wildcards: grids.point_files(
            GRID_POINTS, wildcards.dataset, wildcards.model, "valid.json"
        ),
        checkpoints=lambda wildcards: grids.point_files(
            GRID_POINTS, wildcards.dataset, wildcards.model, "model.pth"
        ),
    output:
        tuning="results/{dataset}/models/{model}/tuning.tsv",
        best="results/{dataset}/models/{model}/best.json",
    log:
        "results/logs/select/{dataset}/{model}.log",
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    message:
        "Pick the best grid point of {wildcards.model} on {wildcards.dataset} (valid NDCG)"
    script:
        "../scripts/select_best.py"


rule topk:
    input:
        best="results/{dataset}/models/{model}/best.json",
        checkpoints=lambda wildcards: grids.point_files(
            GRID_POINTS, wildcards.dataset, wildcards.model, "model.pth"
        ),
        splits=SPLIT_FILES,
    output:
        topk="results/{dataset}/models/{model}/topk.parquet",
        test="results/{dataset}/models/{model}/recbole_test.json",
    log:
        "results/logs/topk/{dataset}/{model}.log",
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=lambda wildcards: max(4000, catalogue.get(wildcards.dataset).mem_mb),
        runtime=60,
        gpu=lambda wildcards: grids.gpus(wildcards.model, config["training"]["device"]),
    params:
        training=TRAINING,
        data_dir=lambda wildcards, input: os.path.dirname(input.splits[0]),
        workdir=lambda wildcards, output: os.path.join(
            os.path.dirname(output.topk), "export"
        ),
    message:
        "Top-{config[k]} lists of the best {wildcards.model} on {wildcards.dataset}"
    script:
        "../scripts/topk.py"


TARGETS += expand(
    "results/{dataset}/models/{model}/{name}",
    dataset=DATASETS,
    model=MODELS,
    name=["tuning.tsv", "best.json", "topk.parquet", "recbole_test.json"],
)
