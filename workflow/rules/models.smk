# Models stage (SPEC §3): tune (one job per dataset x model x grid point) -> select -> topk.
# The grid file is validated here, while the DAG is built, so an unknown model or grid key
# fails before any training starts.

from userfair import catalogue, grids

GRID_POINTS = grids.load_points(config["grid"], MODELS)
TRAINING = {
    **{key: config["training"][key] for key in grids.TRAINING_SETTINGS},
    "seed": config["seed"],
    "k": config["k"],
}


def grid_point_params(wildcards):
    points = GRID_POINTS[wildcards.model]
    point = int(wildcards.point)
    if point >= len(points):
        raise ValueError(
            f"{config['grid']}: model {wildcards.model} has {len(points)} grid points, "
            f"no point {point}"
        )
    return points[point]


def grid_outputs(name):
    """The files `name` (valid.json, model.pth) of every grid point of a dataset x model."""
    return lambda wildcards: [
        f"results/{wildcards.dataset}/models/{wildcards.model}/grid/{point}/{name}"
        for point in range(len(GRID_POINTS[wildcards.model]))
    ]


def training_mem_mb(wildcards):
    return max(4000, catalogue.get(wildcards.dataset).mem_mb)


def uses_gpu(wildcards):
    """One GPU for the neural models unless training.device is cpu (KNN models: none)."""
    trainable = wildcards.model not in grids.NON_TRAINABLE
    return int(trainable and config["training"]["device"] != "cpu")


rule tune:
    input:
        expand(
            "results/{{dataset}}/data/{{dataset}}.{split}.inter",
            split=["train", "valid", "test"],
        ),
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
        mem_mb=training_mem_mb,
        runtime=config["training"]["runtime"],
        gpu=uses_gpu,
    params:
        grid_params=grid_point_params,
        training=TRAINING,
        data_dir="results/{dataset}/data",
        workdir="results/{dataset}/models/{model}/grid/{point}",
    message:
        "Train {wildcards.model} grid point {wildcards.point} on {wildcards.dataset}"
    script:
        "../scripts/tune.py"


rule select:
    input:
        valid=grid_outputs("valid.json"),
        checkpoints=grid_outputs("model.pth"),
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
        checkpoints=grid_outputs("model.pth"),
        splits=expand(
            "results/{{dataset}}/data/{{dataset}}.{split}.inter",
            split=["train", "valid", "test"],
        ),
    output:
        topk="results/{dataset}/models/{model}/topk.parquet",
        test="results/{dataset}/models/{model}/recbole_test.json",
    log:
        "results/logs/topk/{dataset}/{model}.log",
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=training_mem_mb,
        runtime=60,
        gpu=uses_gpu,
    params:
        training=TRAINING,
        data_dir="results/{dataset}/data",
        workdir="results/{dataset}/models/{model}/export",
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
