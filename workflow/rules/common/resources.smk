# What each job asks a scheduler for (mem_mb, runtime, GPUs, partition) and the plan of
# every training job (results/plan.csv), from the cost model (userfair.workflow.costs,
# docs/cluster.md#costs): the dataset's size (its stats.json once the data stage wrote it,
# else the catalogue's) and the training settings a job's cost depends on.

import math
import os

from snakemake.logging import logger

from userfair.engine import route
from userfair.workflow import (
    catalogue,
    costs,
    dense_plan,
    energy,
    grids,
    models,
    scatter_plan,
)
from userfair.workflow import plan as plan_report


def dataset_mem_mb(wildcards):
    """Memory (MB) of a job on one dataset: the catalogue's size of that dataset; for a job
    over every dataset, the largest configured one."""
    dataset = getattr(wildcards, "dataset", None)
    if dataset is None:
        return max(dataset_entry(d).mem_mb for d in DATASETS)
    return dataset_entry(dataset).mem_mb


def data_size(dataset):
    """The size the cost model sees for the dataset (userfair.workflow.costs.dataset_size): its
    stats.json once the data stage wrote it, else the catalogue's Table-1 shape, else a
    declared dataset's raw file when it is there, else the stated default; train =
    1 - valid_share - test_share of the interactions."""
    shares = config["preprocessing"]
    entry = dataset_entry(dataset)
    return costs.dataset_size(
        dataset,
        entry,
        expand(rules.stats.output[0], dataset=dataset)[0],
        1 - shares["valid_share"] - shares["test_share"],
        raw_path=(
            catalogue.raw_source(entry, DATASET_OPTIONS)
            if dataset in CUSTOM_DATASETS
            else None
        ),
    )


def cost_settings(model, point=None):
    """The training settings a job's cost depends on: training.planned_epochs (null: all
    training.epochs), the grid point's train_batch_size (else training's) and threads.
    """
    training = config["training"]
    params = {} if point is None else grids.point_params(GRID_POINTS, model, point)
    return costs.Settings(
        epochs=min(
            training["planned_epochs"] or training["epochs"], training["epochs"]
        ),
        train_batch_size=params.get("train_batch_size", training["train_batch_size"]),
        threads=training["threads"],
    )


def job_request(step, dataset, model, point=None, attempt=1):
    """What one tune (grid point ``point``) or topk job asks for: userfair.workflow.costs.request,
    runtime times the retry ``attempt``, at most MAX_RUNTIME."""
    return costs.request(
        step,
        model,
        data_size(dataset),
        cost_settings(model, point),
        models.get(model).gpus(config["training"]["device"]),
        MAX_RUNTIME,
        attempt,
    )


def dataset_resource(name):
    """Resource function of recbole_dataset (models.smk), ``name`` (mem_mb or runtime) of
    userfair.workflow.costs.dataset_request; the runtime grows with the retry attempt.
    """

    def resource(wildcards, attempt):
        request = costs.dataset_request(
            data_size(wildcards.dataset), MAX_RUNTIME, attempt
        )
        return getattr(request, name)

    return resource


def training_resource(step, name):
    """Resource function of tune and topk (models.smk), ``name`` (mem_mb or runtime) of the
    job's job_request; Snakemake passes the attempt (1, then 2, 3, ... on retries)."""

    def resource(wildcards, attempt):
        point = wildcards.point if step == "tune" else None
        request = job_request(step, wildcards.dataset, wildcards.model, point, attempt)
        return getattr(request, name)

    return resource


def streamed_request(job, dataset, attempt=1):
    """What one job of the streamed measures (``job``, a rule of
    userfair.workflow.scatter_plan.RULES) of ``dataset`` asks for: the packaged timed
    scatter stretched to the dataset's size (its stats.json's item visits once the data
    stage wrote it) and measures.scatter parts of measures.threads threads
    (userfair.workflow.scatter_plan.requests, docs/cluster.md#scatter-plan)."""
    return scatter_plan.requests(
        data_size(dataset),
        SCATTER,
        MAX_RUNTIME,
        attempt,
        threads=config["measures"]["threads"],
    )[job]


def streamed_resource(job, name):
    """Resource function of pairs_part, pairs and measure_sums (measures.smk): ``name``
    (mem_mb or runtime) of the job's streamed_request; the runtime grows with the retry
    attempt."""

    def resource(wildcards, attempt):
        return getattr(streamed_request(job, wildcards.dataset, attempt), name)

    return resource


def dense_request(job, dataset, attempt=1):
    """What one job of the dense route (``job``: similarity, measures, an experiment,
    uncertainty or users of userfair.workflow.dense_plan.RULES) of ``dataset`` asks for:
    the packaged timings of the jobs at several sizes fitted and stretched to the dataset's
    evaluated users and item visits and to the repeats of the configuration
    (dense_plan.units: Weibull shapes, gammas, models, resamples), with what the opt-in
    settings it is reached by add (UF's gamma < 1, graded relevance, opt-in similarities:
    dense_plan.EXTRAS; userfair.workflow.dense_plan.requests,
    docs/cluster.md#dense-requests)."""
    units = dense_plan.units(job, config, EXTRA_SIMILARITIES)
    return dense_plan.requests(
        data_size(dataset),
        MAX_RUNTIME,
        attempt,
        threads=config["measures"]["threads"],
        gamma=config["measures"]["gamma"],
        repeats={job: units},
        rules=(job,),
        graded=GRADED,
        similarities=len(EXTRA_SIMILARITIES),
    )[job]


def dense_resource(job, name):
    """Resource function of `similarity` (and `genre_similarity`) and of the experiments
    (`exp_relevance`, ...): ``name`` (mem_mb or runtime) of the job's dense_request; the
    runtime grows with the retry attempt."""

    def resource(wildcards, attempt):
        return getattr(dense_request(job, wildcards.dataset, attempt), name)

    return resource


def sized_route(dataset):
    """The route (dense or stream) the dataset's size implies, as measure_route decides it
    but from data_size (its stats.json once written, else the catalogue's test users): a
    resource function cannot wait on the checkpoint `stats`, and a plan has no data."""
    return route.choose_route(
        data_size(dataset).evaluated_users,
        available=math.inf,
        max_users=config["measures"]["stream_above"],
    )


def measures_resource(name):
    """Resource function of `measures` (and the replicates' copy): on the streamed route
    (sized_route) the gather's streamed_request, on the dense route its dense_request.
    """

    def resource(wildcards, attempt):
        if sized_route(wildcards.dataset) == "stream":
            return getattr(
                streamed_request("measures", wildcards.dataset, attempt), name
            )
        return getattr(dense_request("measures", wildcards.dataset, attempt), name)

    return resource


def users_request(dataset, attempt=1):
    """What the `users` job (every user's share) of ``dataset`` asks for: on the streamed
    route (sized_route) the streamed decomposition's (userfair.workflow.scatter_plan.
    decomposition_request), on the dense route its dense_request."""
    if sized_route(dataset) == "stream":
        return scatter_plan.decomposition_request(
            data_size(dataset), MAX_RUNTIME, attempt, config["measures"]["threads"]
        )
    return dense_request("users", dataset, attempt)


def users_resource(name):
    """Resource function of `users` (and the replicates' copy): ``name`` of users_request."""

    def resource(wildcards, attempt):
        return getattr(users_request(wildcards.dataset, attempt), name)

    return resource


def job_points(step, model):
    """The jobs of ``step`` per dataset and model: every grid point of tune, one topk."""
    return range(len(GRID_POINTS[model])) if step == "tune" else [None]


def training_gpus(wildcards):
    """GPUs of a training or export job: one for a trainable model unless training.device
    is cpu; none for UserKNN, ItemKNN and RecBole's other traditional models
    (userfair.workflow.models.Model.gpus). The request a cluster gets: the local executor
    does not reserve GPUs (training_message says where a job trains)."""
    return models.get(wildcards.model).gpus(config["training"]["device"])


def training_message(what):
    """The message of a training or export job (``what``, with wildcards): its requests and
    where it trains, true on this machine and on a cluster's nodes: training.device cpu
    trains on the CPU; cuda, or auto where this machine has a GPU, on the requested GPU;
    auto on a machine without one on its CPU here, on the GPU where a node has one."""
    device = config["training"]["device"]
    if device == "cpu":
        where = "on the CPU (training.device cpu)"
    elif device == "cuda" or costs.gpu_here():
        where = "{resources.gpu} GPU"
    else:
        where = "{resources.gpu} GPU requested; on this machine (no GPU) the CPU"
    return f"{what} ({{resources.mem_mb}} MB, {{resources.runtime}} min, {where})"


def training_partition(wildcards):
    """The SLURM partition of a training or export job, decided by the same number as its
    GPU request: $USERFAIR_SLURM_GPU_PARTITION when it asks for a GPU, else
    $USERFAIR_SLURM_PARTITION (read at parse time; empty when unset). docs/cluster.md.
    """
    variable = (
        "USERFAIR_SLURM_GPU_PARTITION"
        if training_gpus(wildcards)
        else "USERFAIR_SLURM_PARTITION"
    )
    return os.environ.get(variable, "")


def replicate_resource(name):
    """Resource function of `replicate`: a tune job of the winner's model plus its export
    (userfair.workflow.costs.request of both): the runtimes added, the larger memory."""

    def resource(wildcards, attempt):
        requests = [
            job_request(step, wildcards.dataset, wildcards.model, None, attempt)
            for step in ("tune", "topk")
        ]
        if name == "runtime":
            return min(sum(r.runtime for r in requests), MAX_RUNTIME)
        return max(getattr(r, name) for r in requests)

    return resource


def replicate_request(dataset, model):
    """What one `replicate` job asks for: a tune job of the winner's model (its grid point
    unknown before the grid search: the training settings' cost) plus its export, the
    runtimes added, the larger memory (replicate_resource)."""
    tune, topk = (job_request(step, dataset, model) for step in costs.RULES)
    basis = "measured" if tune.basis == topk.basis == "measured" else "extrapolated"
    return costs.Request(
        mem_mb=max(tune.mem_mb, topk.mem_mb),
        runtime=min(tune.runtime + topk.runtime, MAX_RUNTIME),
        gpus=max(tune.gpus, topk.gpus),
        basis=basis,
    )


def plan_rows():
    """The rows of results/plan.csv: per dataset its recbole_dataset job (model empty: one
    for every model), then per rule x dataset x model the requests of job_request
    (attempt 1), summed up by userfair.workflow.plan.plan_row, then with
    training.replicates R > 1 the R - 1 `replicate` jobs of every trainable model; each row
    with its energy (userfair.workflow.energy.with_energy)."""
    threads = config["training"]["threads"]
    builds = [
        plan_report.plan_row(
            "recbole_dataset",
            dataset,
            "",
            [costs.dataset_request(data_size(dataset), MAX_RUNTIME)],
            1,
        )
        for dataset in DATASETS
    ]
    rows = builds + [
        plan_report.plan_row(
            step,
            dataset,
            model,
            [job_request(step, dataset, model, p) for p in job_points(step, model)],
            threads,
        )
        for step in costs.RULES
        for dataset in DATASETS
        for model in MODELS
    ]
    if REPLICATES > 1:
        rows += [
            plan_report.plan_row(
                "replicate",
                dataset,
                model,
                [replicate_request(dataset, model)] * (REPLICATES - 1),
                threads,
            )
            for dataset in DATASETS
            for model in replicated_models(dataset)
        ]
    rows += streamed_plan_rows() + dense_plan_rows() + analysis_plan_rows()
    return [energy.with_energy(row, POWER) for row in rows]


def dense_plan_rows():
    """The rows of results/plan.csv of the dense measures of every dataset whose size takes
    the dense route (sized_route): per dataset `similarity` (cosine and Jaccard, and the
    genre one when measures.gamma < 1), per dataset x model `measures`, each with its
    dense_request (attempt 1)."""
    threads = config["measures"]["threads"]
    kinds = dense_plan.similarity_files(config["measures"]["gamma"])
    rows = []
    for dataset in DATASETS:
        if sized_route(dataset) != "dense":
            continue
        similarity = dense_request("similarity", dataset)
        rows.append(
            plan_report.plan_row(
                "similarity", dataset, "", [similarity] * kinds, threads
            )
        )
        request = dense_request("measures", dataset)  # the same for every model
        for model in MODELS:
            rows.append(
                plan_report.plan_row("measures", dataset, model, [request], threads)
            )
    return rows


def analysis_plan_rows():
    """The rows of results/plan.csv of the analyses on (m, m) matrices: per dataset x model
    `uncertainty` (uncertainty.resamples > 0) and `users` (users_request), then the
    experiments (always dense): per dataset `exp_relevance`, `exp_similarity`,
    `exp_extreme` (and `exp_variants` with an opt-in measure), and `exp_gamma` per dataset
    with genres; each with its request (attempt 1)."""
    threads = config["measures"]["threads"]
    rows = []
    for dataset in DATASETS:
        per_model = []
        if RESAMPLES:
            per_model.append(("uncertainty", dense_request("uncertainty", dataset)))
        per_model.append(("users", users_request(dataset)))
        rows += [
            plan_report.plan_row(rule, dataset, model, [request], threads)
            for rule, request in per_model
            for model in MODELS
        ]
    experiments = ["exp_relevance", "exp_similarity", "exp_extreme", "exp_gamma"]
    return rows + [
        plan_report.plan_row(rule, dataset, "", [dense_request(rule, dataset)], threads)
        for rule in experiments + (["exp_variants"] if VARIANTS else [])
        for dataset in (GENRE_DATASETS if rule == "exp_gamma" else DATASETS)
    ]


def streamed_plan_rows():
    """The rows of results/plan.csv of the streamed measures of every dataset whose size
    takes the streamed route (sized_route): per dataset `pairs_part` (measures.scatter jobs;
    none when 1) and `pairs`, per dataset x model `measure_sums` (as many) and `measures`,
    each with its streamed_request (attempt 1); the dense route's are dense_plan_rows'.
    """
    threads = config["measures"]["threads"]
    rows = []
    for dataset in DATASETS:
        if sized_route(dataset) != "stream":
            continue
        jobs = {
            "pairs_part": SCATTER if SCATTER > 1 else 0,
            "pairs": 1,
            "measure_sums": SCATTER if SCATTER > 1 else 0,
            "measures": 1,
        }
        for job in scatter_plan.RULES:
            request = streamed_request(job, dataset)
            for model in [""] if job in ("pairs_part", "pairs") else MODELS:
                if jobs[job]:
                    rows.append(
                        plan_report.plan_row(
                            job, dataset, model, [request] * jobs[job], threads
                        )
                    )
    return rows
