# Models stage (docs/training.md, docs/method.md#recommenders): recbole_dataset (once per
# dataset) -> tune (one job per dataset x model x grid point) -> select -> topk. The grid is
# loaded and checked in rules/common/settings.smk.


rule recbole_dataset:
    input:
        rules.split.output,
    output:
        layout.output("recbole_dataset"),
    log:
        layout.log("recbole_dataset"),
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=dataset_resource("mem_mb"),
        runtime=dataset_resource("runtime"),
    params:
        # only what the shared parts depend on, so that other training settings do not
        # rebuild it (userfair.workflow.shared_dataset.SHARED_KEYS); the speed-only
        # eval_batch_size is read by the script (steps.TRAINING_SPEED_KEYS)
        training={"seed": config["seed"], "k": config["k"]},
        data_dir=split_folder,
        workdir=layout.WORKING["recbole_dataset"],
    message:
        "Build the RecBole dataset of {wildcards.dataset} once for every training job "
        "({resources.mem_mb} MB, {resources.runtime} min)"
    script:
        "../scripts/recbole_dataset.py"


rule tune:
    input:
        splits=rules.split.output,
        shared=rules.recbole_dataset.output[0],
    output:
        valid=layout.output("tune", "valid"),
        checkpoint=layout.output("tune", "checkpoint"),
    log:
        layout.log("tune"),
    wildcard_constraints:
        point=r"\d+",
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=training_resource("tune", "mem_mb"),
        runtime=training_resource("tune", "runtime"),
        gpu=training_gpus,
        slurm_partition=training_partition,
    params:
        grid_params=point_params,
        training=training_settings(),
        data_dir=split_folder,
        workdir=grid_point_folder,
    message:
        training_message(
            "Train {wildcards.model} grid point {wildcards.point} on {wildcards.dataset}"
        )
    script:
        "../scripts/tune.py"


rule select:
    input:
        valid=grid_point_files("valid"),
        checkpoints=grid_point_files("checkpoint"),
    output:
        tuning=layout.output("select", "tuning"),
        best=layout.output("select", "best"),
    log:
        layout.log("select"),
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    message:
        "Pick the best grid point of {wildcards.model} on {wildcards.dataset} (valid NDCG)"
    script:
        "../scripts/select.py"


rule topk:
    input:
        best=rules.select.output.best,
        checkpoints=grid_point_files("checkpoint"),
        splits=rules.split.output,
        shared=rules.recbole_dataset.output[0],
    output:
        topk=layout.output("topk", "topk"),
        test=layout.output("topk", "test"),
    log:
        layout.log("topk"),
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=training_resource("topk", "mem_mb"),
        runtime=training_resource("topk", "runtime"),
        gpu=training_gpus,
        slurm_partition=training_partition,
    params:
        training=training_settings(),
        data_dir=split_folder,
        workdir=export_folder,
    message:
        training_message(
            "Top-{config[k]} lists of the best {wildcards.model} on {wildcards.dataset}"
        )
    script:
        "../scripts/topk.py"


rule user_vectors:
    input:
        best=rules.select.output.best,
        checkpoints=grid_point_files("checkpoint"),
        splits=rules.split.output,
        shared=rules.recbole_dataset.output[0],
    output:
        layout.output("user_vectors"),
    log:
        layout.log("user_vectors"),
    conda:
        "../../envs/train.yaml"
    threads: config["training"]["threads"]
    resources:
        mem_mb=training_resource("topk", "mem_mb"),
        runtime=training_resource("topk", "runtime"),
        gpu=training_gpus,
        slurm_partition=training_partition,
    params:
        training=training_settings(),
        data_dir=split_folder,
        workdir=vectors_folder,
    message:
        training_message(
            "User vectors of the best {wildcards.model} on {wildcards.dataset} "
            "(measures.similarities embedding:{wildcards.model})"
        )
    script:
        "../scripts/user_vectors.py"
