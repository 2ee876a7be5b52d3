"""Cluster requests of the training jobs from a cost model (docs/cluster.md#costs).

A tune job (one grid point) and a top-k job cost what their dataset's size and their
model make them cost, so their ``mem_mb``, ``runtime`` and GPUs come from here, not from
constants:

- :func:`dataset_size`: the size of a dataset before its files exist (the catalogue's
  Table-1 shape, the ``stats.json`` of a dataset already split, else a stated conservative
  default);
- :func:`table`: the per model x device coefficients, shipped as ``data/costs.csv``; each
  row says whether it was ``measured`` or ``extrapolated`` and where it comes from;
- :func:`estimate`: minutes and MB of one job, without margin; :func:`request`: what the
  job asks the scheduler for (with :data:`TIME_MARGIN` / :data:`MEM_MARGIN`, growing with
  the retry attempt); :func:`infeasible`: why a configured device cannot finish a job;
- :func:`plan_row` / :func:`write_plan`: the rows of ``results/plan.csv`` and its totals;
  :func:`markdown` (``python -m userfair.costs markdown results/plan.csv``) its tables;
- :func:`calibrate`: table rows from ``benchmarks/paper_scale.py``'s JSON files
  (``python -m userfair.costs calibrate FILE.json ... --out costs.csv``).

The model: a job loads its dataset (``build_s_per_train`` seconds and ``mem_mb_per_train``
MB per train interaction), then trains ``epochs`` epochs, each one pass over its
``epoch_driver`` and one validation over its ``eval_driver``; a top-k job loads, (for
KNN models) rebuilds the neighbourhoods and evaluates once. Memory is :data:`BASE_MB` plus
the dataset's plus ``mem_mb_per_unit`` per unit of ``mem_driver``. Light on purpose (no
torch, no RecBole): Snakemake calls it while it builds the DAG.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from importlib import resources
from pathlib import Path

from userfair import catalogue, models
from userfair.io import InputError, atomic_path

TABLE = "costs.csv"  # package data: userfair/data/costs.csv
# Requests are the estimate times these (a safety margin: our extrapolations across
# shapes and machines are rough, and a job killed at its limit loses its attempt).
TIME_MARGIN = 1.5
MEM_MARGIN = 1.3
# Every job's floor: Python, torch and RecBole loaded (measured: 478-585 MB peak RSS of
# the ml-100k runs of six models, NeuMF 893 MB; docs/cluster.md#costs), and a
# scheduler-friendly minimum wall time.
BASE_MB = 500
MIN_RUNTIME = 10  # minutes
# A retry asks for the runtime of attempt 1 times the attempt number (1x, 2x, 3x, ...),
# never above training.max_runtime; memory stays.
RULES = ("tune", "topk")
DEVICES = ("cpu", "gpu")
BASES = ("measured", "extrapolated")

# What each kind of model's cost grows with (userfair.models.COST_KINDS): (epoch,
# evaluation, memory) drivers (:func:`drivers`). KNN models have one "epoch": building the
# neighbourhoods. Graph models propagate over the whole user-item graph in every batch,
# hence batches x graph size per epoch.
KINDS = {
    "user-knn": ("users_sq", "eval_items", "users"),
    "item-knn": ("items_sq", "eval_items", "none"),
    "pairwise": ("train", "eval_items", "none"),
    # MultiVAE-family batch rows come from a sparse history (userfair.workflow.recbole_fast),
    # so their memory follows the train interactions, not users x the heaviest history
    "autoencoder": ("users_items", "eval_items", "none"),
    "graph": ("graph", "eval_items", "none"),
}


@dataclass(frozen=True)
class Size:
    """What the costs grow with: users, items, train interactions, the heaviest user's
    history, the evaluated users; ``source``: catalogue, stats or default."""

    name: str
    users: int
    items: int
    train: int
    max_history: int
    evaluated_users: int
    source: str


@dataclass(frozen=True)
class Settings:
    """The training settings a job's cost depends on (config ``training``)."""

    epochs: int = 30
    train_batch_size: int = 2048
    threads: int = 1


@dataclass(frozen=True)
class Cost:
    """One row of the cost table: coefficients of one model on one device, measured at
    ``shape`` with ``threads`` CPU threads. ``build_s_per_train`` / ``mem_mb_per_train``:
    a tune or top-k job's load of the dataset file (and, trainable, its set-up);
    ``dataset_s_per_train`` / ``dataset_mb_per_train``: the recbole_dataset job that builds
    that file (0 where not measured)."""

    model: str
    device: str
    shape: str
    train: int  # the measured shape's train interactions
    threads: int
    build_s_per_train: float
    mem_mb_per_train: float
    epoch_driver: str
    epoch_s_per_unit: float
    eval_driver: str
    eval_s_per_unit: float
    mem_driver: str
    mem_mb_per_unit: float
    basis: str
    source: str
    dataset_s_per_train: float = 0.0
    dataset_mb_per_train: float = 0.0


@dataclass(frozen=True)
class Estimate:
    """One job without margin: minutes, MB of memory, GPUs, and whether the coefficients
    were measured at this dataset's shape (else extrapolated)."""

    minutes: float
    mem_mb: float
    gpus: int
    basis: str
    detail: str


def dataset_size(
    name: str,
    entry: catalogue.Dataset,
    stats_path: str | os.PathLike | None = None,
    train_share: float = 0.6,
) -> Size:
    """The size of dataset ``name``: its ``stats.json`` (``results/D/data/stats.json``)
    when it exists, else the catalogue's shape (train = ``train_share`` of the
    interactions: 1 - valid_share - test_share), else ``catalogue.DEFAULT_SHAPE``. The heaviest
    user's history comes from the shape, bounded by the items."""
    shape = entry.shape
    if stats_path is not None and Path(stats_path).is_file():
        stats = json.loads(Path(stats_path).read_text())
        try:
            users, items, train = int(stats["users"]), int(stats["items"]), int(stats["train"])
            evaluated = int(stats["test_users"])
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"{stats_path}: not a stats file of the data stage ({error})")
        heaviest = min(shape.max_history if shape else items, items)
        return Size(name, users, items, train, heaviest, evaluated, "stats")
    source = "catalogue" if shape is not None else "default"
    shape = shape or catalogue.DEFAULT_SHAPE
    train = int(round(shape.interactions * train_share))
    return Size(name, shape.users, shape.items, train, shape.max_history, shape.test_users, source)


def drivers(size: Size, settings: Settings) -> dict[str, float]:
    """The value of every driver a cost row may name, for ``size`` and ``settings``."""
    nodes = 2 * size.train + size.users + size.items  # adjacency entries of the graph
    return {
        "none": 0.0,
        "train": float(size.train),
        "users": float(size.users),
        "graph": math.ceil(size.train / settings.train_batch_size) * float(nodes),
        "users_items": float(size.users) * size.items,
        "eval_items": float(size.evaluated_users) * size.items,
        "history": float(size.users) * size.max_history,
        "users_sq": float(size.users) ** 2,
        "items_sq": float(size.items) ** 2,
    }


DRIVER_NAMES = tuple(drivers(Size("x", 1, 1, 1, 1, 1, "x"), Settings()))


def read_table(path: str | os.PathLike) -> dict[tuple[str, str], list[Cost]]:
    """The cost table at ``path``: ``{(model, device): [Cost of each measured shape]}``; an
    InputError naming the row and column of a bad value."""
    rows: dict[tuple[str, str], list[Cost]] = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(row for row in handle if not row.startswith("#"))
        names = [f.name for f in fields(Cost)]
        if reader.fieldnames != names:
            raise InputError(f"{path}: columns {reader.fieldnames}, expected {names}")
        for line, row in enumerate(reader, start=2):
            try:
                convert = {"str": str, "int": int, "float": float}
                cost = Cost(**{f.name: convert[f.type](row[f.name]) for f in fields(Cost)})
            except ValueError as error:
                raise InputError(f"{path}: row {line}: {error}") from None
            for column, value, allowed in (
                ("device", cost.device, DEVICES),
                ("basis", cost.basis, BASES),
                ("epoch_driver", cost.epoch_driver, DRIVER_NAMES),
                ("eval_driver", cost.eval_driver, DRIVER_NAMES),
                ("mem_driver", cost.mem_driver, DRIVER_NAMES),
            ):
                if value not in allowed:
                    raise InputError(
                        f"{path}: row {line}: {column} {value!r} is not one of {allowed}"
                    )
            rows.setdefault((cost.model, cost.device), []).append(cost)
    return rows


@cache
def table() -> dict[tuple[str, str], list[Cost]]:
    """The shipped cost table (``userfair/data/costs.csv``)."""
    with resources.as_file(resources.files("userfair") / "data" / TABLE) as path:
        return read_table(path)


def nearest(rows: list[Cost], size: Size) -> Cost:
    """The row measured at the shape closest to ``size`` (train interactions, log scale):
    small datasets take the small shapes' coefficients (per-batch overheads dominate
    there), large ones the large shapes'."""
    return min(rows, key=lambda row: abs(math.log(max(row.train, 1) / max(size.train, 1))))


def cost_of(model: str, device: str, size: Size) -> tuple[Cost, bool]:
    """The table row of ``model`` on ``device`` nearest to ``size`` and whether it is the
    model's own; a model without one borrows the costliest row of its kind
    (userfair.models.COST_KINDS) on that device, else of the graph (trainable) or user-knn
    kind."""
    rows = table()
    if (model, device) in rows:
        return nearest(rows[model, device], size), True
    entry = models.get(model)
    for kind in (entry.cost_kind, "graph" if entry.trainable else "user-knn"):
        same = [
            nearest(found, size)
            for (name, on), found in rows.items()
            if on == device and models.get(name).cost_kind == kind
        ]
        if same:
            return max(same, key=lambda row: row.epoch_s_per_unit), False
    raise InputError(f"userfair/data/{TABLE}: no row for {model} on {device} nor of its kind")


def estimate(
    rule: str, model: str, size: Size, settings: Settings, gpus: int, row: Cost | None = None
) -> Estimate:
    """Minutes and MB of one ``rule`` job (tune: one grid point trained for all
    ``settings.epochs`` epochs, each validated, the worst case that early stopping only
    shortens; topk: load, rebuild KNN neighbourhoods, evaluate once) of ``model`` on a
    dataset of ``size``, on a GPU when ``gpus``, without margin; from the shipped table's
    row (:func:`cost_of`) unless ``row`` is given."""
    if rule not in RULES:
        raise ValueError(f"no cost model for rule {rule!r} (only {RULES})")
    device = "gpu" if gpus else "cpu"
    cost, own = (row, True) if row is not None else cost_of(model, device, size)
    values = drivers(size, settings)
    trainable = models.get(model).trainable
    # CPU coefficients hold for cost.threads threads: fewer are slower, more no faster
    slower = max(1.0, cost.threads / settings.threads) if device == "cpu" else 1.0
    epoch = cost.epoch_s_per_unit * values[cost.epoch_driver] * slower
    evaluation = cost.eval_s_per_unit * values[cost.eval_driver] * slower
    load = cost.build_s_per_train * size.train * slower
    if rule == "tune":
        epochs = settings.epochs if trainable else 1
        seconds = load + epochs * (epoch + evaluation)
        detail = f"load {load:.0f} s + {epochs} x ({epoch:.0f} s epoch + {evaluation:.0f} s valid)"
    else:
        fit = 0.0 if trainable else epoch
        seconds = load + fit + evaluation
        detail = f"load {load:.0f} s + {fit:.0f} s fit + {evaluation:.0f} s evaluation"
    memory = BASE_MB + cost.mem_mb_per_train * size.train
    memory += cost.mem_mb_per_unit * values[cost.mem_driver]
    measured = own and cost.basis == "measured" and cost.shape == size.name
    return Estimate(seconds / 60, memory, gpus, "measured" if measured else "extrapolated", detail)


@dataclass(frozen=True)
class Request:
    """What one job asks the scheduler for, and the basis of its estimate."""

    mem_mb: int
    runtime: int  # minutes
    gpus: int
    basis: str


def request(
    rule: str,
    model: str,
    size: Size,
    settings: Settings,
    gpus: int,
    max_runtime: int,
    attempt: int = 1,
) -> Request:
    """What one job asks the scheduler for: the estimate times the margins, memory rounded
    up to 100 MB, runtime at least :data:`MIN_RUNTIME` and times ``attempt`` on a retry,
    never above ``max_runtime`` (minutes)."""
    job = estimate(rule, model, size, settings, gpus)
    mem_mb = int(math.ceil(job.mem_mb * MEM_MARGIN / 100) * 100)
    runtime = max(MIN_RUNTIME, math.ceil(job.minutes * TIME_MARGIN)) * max(1, int(attempt))
    return Request(mem_mb, min(runtime, int(max_runtime)), gpus, job.basis)


def dataset_request(size: Size, max_runtime: int, attempt: int = 1) -> Request:
    """What the recbole_dataset job (one build of the dataset's RecBole dataset on the CPU,
    the same for every model) asks for: the table's costliest build coefficients among its
    CPU rows nearest to ``size``, with the margins of :func:`request`."""
    rows = [nearest(found, size) for (_, on), found in table().items() if on == "cpu"]
    built = [r for r in rows if r.dataset_s_per_train > 0]  # rows that measured the build
    if built:
        seconds = max(r.dataset_s_per_train for r in built) * size.train
        memory = BASE_MB + max(r.dataset_mb_per_train for r in built) * size.train
    else:  # older rows: a job's own build of the dataset
        seconds = max(r.build_s_per_train for r in rows) * size.train
        memory = BASE_MB + max(r.mem_mb_per_train for r in rows) * size.train
    measured = any(r.basis == "measured" and r.shape == size.name for r in rows)
    mem_mb = int(math.ceil(memory * MEM_MARGIN / 100) * 100)
    runtime = max(MIN_RUNTIME, math.ceil(seconds / 60 * TIME_MARGIN)) * max(1, int(attempt))
    return Request(
        mem_mb, min(runtime, int(max_runtime)), 0, "measured" if measured else "extrapolated"
    )


def infeasible(
    rule: str, model: str, size: Size, settings: Settings, gpus: int, max_runtime: int
) -> str | None:
    """Why a ``rule`` job of ``model`` cannot finish within ``max_runtime`` minutes (its
    estimate, without margin, is longer), else None. Unknown sizes (the default shape)
    never stop a run."""
    if size.source == "default":
        return None
    job = estimate(rule, model, size, settings, gpus)
    if job.minutes <= max_runtime:
        return None
    threads = f"{settings.threads} thread{'s' if settings.threads > 1 else ''}"
    device = "a GPU" if gpus else f"the CPU ({threads})"
    return (
        f"{rule} of {model} on {size.name} cannot finish within training.max_runtime = "
        f"{max_runtime} min on {device}: estimated {job.minutes / 60:,.1f} h per job "
        f"({job.detail}; {job.basis}, userfair/data/{TABLE}). Change one of: "
        "training.device (cpu -> cuda or auto: a GPU for the neural models), "
        f"training.planned_epochs or training.epochs ({settings.epochs} planned), "
        "training.max_runtime (your partition's limit), or drop "
        f"{model} from models or {size.name} from datasets."
    )


PLAN_COLUMNS = (
    "rule",
    "dataset",
    "model",
    "jobs",
    "mem_mb",
    "runtime_min",
    "gpus",
    "cpu_hours",
    "gpu_hours",
    "basis",
    # added by userfair.workflow.energy.with_energy (the power model, docs/cluster.md#energy)
    "energy_kwh",
    "co2e_kg",
    "energy_basis",
)


def plan_row(rule: str, dataset: str, model: str, jobs: list[Request], threads: int) -> dict:
    """One row of results/plan.csv for the ``jobs`` of one rule x dataset x model (the grid
    points of tune, one topk): the largest request, and the hours all of them reserve at
    attempt 1. cpu_hours: core-hours of the jobs without a GPU (threads x runtime);
    gpu_hours: GPU-hours of the GPU jobs (gpus x runtime). basis: extrapolated when any
    job's estimate is."""
    hours = [job.runtime / 60 for job in jobs]
    return {
        "rule": rule,
        "dataset": dataset,
        "model": model,
        "jobs": len(jobs),
        "mem_mb": max(job.mem_mb for job in jobs),
        "runtime_min": max(job.runtime for job in jobs),
        "gpus": max(job.gpus for job in jobs),
        "cpu_hours": round(sum(h * threads for h, j in zip(hours, jobs) if not j.gpus), 2),
        "gpu_hours": round(sum(h * j.gpus for h, j in zip(hours, jobs)), 2),
        "basis": "measured" if all(j.basis == "measured" for j in jobs) else "extrapolated",
    }


def write_plan(rows: list[dict], path: str | os.PathLike) -> str:
    """Write ``rows`` (:func:`plan_row`) as CSV at ``path`` (atomically) and return the
    totals as text: per dataset and overall, jobs, CPU-hours and GPU-hours."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=PLAN_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return totals(rows)


def totals(rows: list[dict]) -> str:
    """Jobs, CPU-hours and GPU-hours per dataset and in all, as lines of text."""
    lines = []
    for dataset in [*dict.fromkeys(r["dataset"] for r in rows), None]:
        part = [r for r in rows if dataset is None or r["dataset"] == dataset]
        jobs = sum(r["jobs"] for r in part)
        cpu = sum(float(r["cpu_hours"]) for r in part)
        gpu = sum(float(r["gpu_hours"]) for r in part)
        extrapolated = sum(r["jobs"] for r in part if r["basis"] == "extrapolated")
        energy = ""
        if all("energy_kwh" in r for r in part):
            kwh = sum(float(r["energy_kwh"]) for r in part)
            energy = f", {kwh:,.1f} kWh, {sum(float(r['co2e_kg']) for r in part):,.1f} kg CO2e"
        lines.append(
            f"{dataset or 'total'}: {jobs} jobs, {cpu:,.1f} CPU-hours, {gpu:,.1f} GPU-hours "
            f"reserved{energy} ({extrapolated} of the jobs' estimates extrapolated)"
        )
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """results/plan.csv's rows (as read back: strings) as the two Markdown tables of
    docs/cluster.md#costs: per dataset x model its tune jobs (with the dataset's topk job
    and its one recbole_dataset job folded into the hours), and the totals per dataset."""
    lines = [
        "| dataset | model | tune jobs | mem_mb | runtime (min) | GPUs "
        "| reserved hours (tune + topk) | basis |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    by = {(r["rule"], r["dataset"], r["model"]): r for r in rows}
    for (rule, dataset, model), row in by.items():
        if rule != "tune":
            continue
        topk = by.get(("topk", dataset, model), {})
        parts = [row, topk]
        cpu = sum(float(p.get("cpu_hours") or 0) for p in parts)
        gpu = sum(float(p.get("gpu_hours") or 0) for p in parts)
        hours = f"{gpu:,.1f} GPU-h" if gpu else f"{cpu:,.1f} CPU-h"
        if gpu and cpu:
            hours += f" + {cpu:,.1f} CPU-h"
        basis = (
            "measured"
            if all(p.get("basis", "measured") == "measured" for p in parts)
            else ("extrapolated")
        )
        lines.append(
            f"| {dataset} | {model} | {int(row['jobs'])} | {int(row['mem_mb']):,} "
            f"| {int(row['runtime_min']):,} | {int(row['gpus'])} | {hours} | {basis} |"
        )
    lines += [
        "",
        "| | jobs | CPU-hours reserved | GPU-hours reserved | jobs extrapolated |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    for dataset in [*datasets, None]:
        part = [r for r in rows if dataset is None or r["dataset"] == dataset]
        jobs = sum(int(r["jobs"]) for r in part)
        cpu = sum(float(r["cpu_hours"]) for r in part)
        gpu = sum(float(r["gpu_hours"]) for r in part)
        extrapolated = sum(int(r["jobs"]) for r in part if r["basis"] == "extrapolated")
        name = f"{dataset} alone" if dataset else "**all**"
        lines.append(f"| {name} | {jobs} | {cpu:,.1f} | {gpu:,.1f} | {extrapolated} |")
    return "\n".join(lines)


# --- calibration from benchmarks/paper_scale.py -----------------------------------------


def stage_seconds(stage: dict, device: str, threads: int) -> float:
    """The seconds a stage of a paper_scale.json costs a job that has its cores to itself:
    the process's CPU seconds for a one-thread CPU run (wall seconds grow with whatever
    else the machine runs; one thread cannot use more CPU time than wall time), else the
    wall seconds (several threads, or a GPU, whose time the CPU clock does not see)."""
    if device == "cpu" and threads == 1 and stage.get("cpu_seconds") is not None:
        return float(stage["cpu_seconds"])
    return float(stage["seconds"])


def calibrate_one(doc: dict, source: str) -> Cost:
    """The cost row of one paper_scale.json document (its schema: docs/cluster.md#costs):
    coefficient = measured seconds (:func:`stage_seconds`) or MB / the driver's value at
    the measured shape. The job's load is the dataset file's (``dataset_load``, else the
    build's) plus, for a trainable model, its ``model_init``; a KNN model's ``model_init``
    (its neighbourhoods) is part of its one epoch."""
    try:
        model, shape, stages = doc["model"], doc["shape"], doc["stages"]
        device = "gpu" if str(doc["device"]).startswith("cuda") else "cpu"
        size = Size(
            shape["name"],
            int(shape["users"]),
            int(shape["items"]),
            int(shape["train"]),
            int(shape["max_history"]),
            int(shape["evaluated_users"]),
            "benchmark",
        )
        settings = Settings(train_batch_size=int(doc["params"].get("train_batch_size", 2048)))
        # the jobs load a serialised dataset where the benchmark measured that
        build = stages["dataset_build"]
        load = stages.get("dataset_load") or build
        # a stage the benchmark left out costs nothing (KNN models may have no epoch of
        # their own); a trainable model needs its epoch, every model an evaluation
        epoch = stages.get("train_epoch") or {"seconds": 0.0}
        valid = stages.get("validation") or stages["topk"]
        if models.get(model).trainable and "train_epoch" not in stages:
            raise KeyError("train_epoch")
        threads = int(doc.get("threads") or 1)
        machine = doc.get("machine") or {}
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"{source}: not a paper_scale.json of version 1 ({error!r})") from None
    epoch_driver, eval_driver, mem_driver = KINDS[models.get(model).cost_kind]
    values = drivers(size, settings)
    # a job's peak: its own stages (the build runs in the recbole_dataset job, which has
    # its own coefficients below, where the benchmark measured the job's load apart)
    own = [n for n in stages if not (n == "dataset_build" and "dataset_load" in stages)]
    peak = max(float(stages[n].get("peak_rss_mb", 0)) for n in own)
    per_train = max(0.0, float(load["peak_rss_mb"]) - BASE_MB) / size.train
    rest = max(0.0, peak - BASE_MB - per_train * size.train)
    if values[mem_driver]:
        per_unit = rest / values[mem_driver]
    else:  # the model's own memory grows with the data: put it on the train interactions
        per_unit, per_train = 0.0, per_train + rest / size.train
    extrapolated = any(stage.get("extrapolated") for stage in stages.values())
    where = machine.get("gpu") if device == "gpu" else machine.get("cpu")
    # model_init (the model and its trainer): a KNN model's neighbourhoods, its one "epoch";
    # a trainable model's once-per-job set-up (graph adjacency), counted with the load
    init = stage_seconds(stages.get("model_init") or {"seconds": 0.0}, device, threads)
    trainable = models.get(model).trainable
    load_s = stage_seconds(load, device, threads) + (init if trainable else 0.0)
    epoch_s = stage_seconds(epoch, device, threads) + (0.0 if trainable else init)
    return Cost(
        model=model,
        device=device,
        shape=size.name,
        train=size.train,
        threads=threads,
        build_s_per_train=load_s / size.train,
        mem_mb_per_train=per_train,
        epoch_driver=epoch_driver,
        epoch_s_per_unit=epoch_s / max(values[epoch_driver], 1.0),
        eval_driver=eval_driver,
        eval_s_per_unit=stage_seconds(valid, device, threads) / max(values[eval_driver], 1.0),
        mem_driver=mem_driver,
        mem_mb_per_unit=per_unit,
        dataset_s_per_train=stage_seconds(build, device, threads) / size.train,
        dataset_mb_per_train=max(0.0, float(build["peak_rss_mb"]) - BASE_MB) / size.train,
        basis="extrapolated" if extrapolated else "measured",
        source=(
            f"benchmarks/paper_scale.py ({size.name}, {machine.get('date')}, {where}, "
            f"{machine.get('cores')} cores, {threads} threads, load "
            f"{float(machine.get('load_1min_start') or 0):.1f})"
        ),
    )


def calibrate(paths: list[str | os.PathLike]) -> list[Cost]:
    """Cost rows from paper_scale.json files, one per model x device x shape (a later file
    of the same three replaces an earlier one)."""
    rows: dict[tuple[str, str, str], Cost] = {}
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise InputError(f"{path}: cannot be read as JSON ({error})") from None
        if not isinstance(doc, dict) or (doc.get("benchmark"), doc.get("version")) != (
            "paper_scale",
            1,
        ):
            raise InputError(f"{path}: not a paper_scale.json of version 1")
        row = calibrate_one(doc, str(path))
        rows[row.model, row.device, row.shape] = row
    return list(rows.values())


def with_host_costs(gpu: Cost, cpu: Cost) -> Cost:
    """``gpu`` (a GPU row no benchmark file measured) with the host side of ``cpu`` (the same
    model's CPU row, measured): the job's dataset load and its host memory, which do not
    depend on where the model trains; the GPU's epoch and evaluation coefficients stay."""
    return replace(
        gpu,
        build_s_per_train=cpu.build_s_per_train,
        mem_mb_per_train=cpu.mem_mb_per_train,
        mem_driver=cpu.mem_driver,
        mem_mb_per_unit=cpu.mem_mb_per_unit,
        source=gpu.source.split("; dataset load and host memory")[0]
        + f"; dataset load and host memory as the {cpu.shape} CPU row ({cpu.source})",
    )


def refresh_gpu_rows(rows: list[Cost], keep: dict[tuple[str, str], list[Cost]]) -> list[Cost]:
    """The GPU rows of ``keep`` that ``rows`` do not measure, their host side taken from the
    model's CPU row of ``rows`` at the largest shape (:func:`with_host_costs`); GPU rows of
    models without such a CPU row are left out (kept as they are by :func:`write_table`)."""
    measured = {(r.model, r.device, r.shape) for r in rows}
    largest: dict[str, Cost] = {}
    for row in rows:
        if row.device == "cpu" and row.train > getattr(largest.get(row.model), "train", -1):
            largest[row.model] = row
    return [
        with_host_costs(gpu, largest[gpu.model])
        for found in keep.values()
        for gpu in found
        if gpu.device == "gpu"
        and gpu.model in largest
        and (gpu.model, gpu.device, gpu.shape) not in measured
    ]


def write_table(rows: list[Cost], path: str | os.PathLike, keep=None) -> None:
    """Write cost rows as the table CSV, sorted; the rows of ``keep`` (:func:`table`'s
    form) are kept unless ``rows`` measure the same model x device x shape."""
    merged = {(r.model, r.device, r.shape): r for found in (keep or {}).values() for r in found}
    merged.update({(r.model, r.device, r.shape): r for r in rows})
    names = [f.name for f in fields(Cost)]
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as handle:
            handle.write(
                "# Cost model of the tune and topk jobs (userfair.costs, docs/cluster.md#costs)\n"
            )
            writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n")
            writer.writeheader()
            for key in sorted(merged):
                row = asdict(merged[key])
                writer.writerow(
                    {k: f"{v:.4g}" if isinstance(v, float) else v for k, v in row.items()}
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m userfair.costs",
        description="Cost rows from benchmarks/paper_scale.py results; a plan as Markdown.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="paper_scale.json files -> cost table CSV")
    cal.add_argument("files", nargs="+", help="paper_scale.json files")
    cal.add_argument("--out", required=True, help="the cost table to write")
    cal.add_argument(
        "--merge",
        action="store_true",
        help="keep the shipped table's rows that the files do not measure (a GPU row takes "
        "its dataset load and host memory from the model's CPU row at the largest shape)",
    )
    table_ = sub.add_parser("markdown", help="results/plan.csv -> the Markdown cost tables")
    table_.add_argument("plan", help="a results/plan.csv written by `snakemake plan`")
    args = parser.parse_args(argv)
    if args.command == "markdown":
        with open(args.plan, newline="") as handle:
            print(markdown(list(csv.DictReader(handle))))
        return 0
    rows = calibrate(args.files)
    if args.merge:
        rows += refresh_gpu_rows(rows, table())
    write_table(rows, args.out, keep=table() if args.merge else None)
    for row in rows:
        print(f"{row.model} {row.device}: {row.basis} at {row.shape} ({row.source})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
