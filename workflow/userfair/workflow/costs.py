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
The plan report (``results/plan.csv``, its totals and Markdown) is
:mod:`userfair.workflow.plan`; the calibration of the cost table from
``benchmarks/paper_scale.py``'s JSON files is :mod:`userfair.workflow.calibrate`.

The model: a job loads its dataset (``build_s_per_train`` seconds and ``mem_mb_per_train``
MB per train interaction), then trains ``epochs`` epochs, each one pass over its
``epoch_driver`` and one validation over its ``eval_driver``; a top-k job loads, (for
KNN models) rebuilds the neighbourhoods and evaluates once. Memory is :data:`BASE_MB` plus
the dataset's plus ``mem_mb_per_unit`` per unit of ``mem_driver``. Light on purpose (no
torch, no RecBole): Snakemake calls it while it builds the DAG.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path

from userfair.files.io import InputError
from userfair.workflow import catalogue, models, rawfiles

TABLE = "costs.csv"  # package data: userfair/workflow/data/costs.csv
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

# What each kind of model's cost grows with (userfair.workflow.models.COST_KINDS): (epoch,
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
    history, the evaluated users; ``source``: catalogue, stats or default;
    ``item_visits``: the sum over items of deg (deg - 1) / 2, deg the evaluated users with
    the item in train, the streamed pair passes' work (its ``stats.json``'s; None where
    not known)."""

    name: str
    users: int
    items: int
    train: int
    max_history: int
    evaluated_users: int
    source: str
    item_visits: int | None = None


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


def read_stats(path: str | os.PathLike) -> dict[str, int]:
    """The counts of a data stage's ``stats.json`` (users, items, train, test_users, and
    item_visits where the file has them: older ones do not), read when the workflow is
    parsed. A damaged file is an InputError naming it and the commands
    that rebuild exactly it: it must be removed first, since every command, the rebuild
    included, reads it at parse time."""
    try:
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
        counts = {key: stats[key] for key in ("users", "items", "train", "test_users")}
        counts.update({key: stats[key] for key in ("item_visits",) if key in stats})
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values()):
            raise ValueError(f"non-integer counts {counts}")
    except (ValueError, KeyError, TypeError) as error:
        reason = (str(error).strip().splitlines() or [""])[0]
        kind = type(error).__name__
        raise InputError(
            f"{path}: truncated or unreadable stats file ({kind}: {reason}); {_REBUILD}"
            f"rm {path} && snakemake {path}"
        ) from None
    negative = [key for key, value in counts.items() if value < 0]
    if negative or counts["items"] == 0 or counts["users"] == 0:
        key = negative[0] if negative else ("items" if counts["items"] == 0 else "users")
        raise InputError(
            f"{path}: damaged stats file (field {key!r} is {counts[key]}, not a count of a "
            f"split that has test users); {_REBUILD}rm {path} && snakemake {path}"
        )
    return counts


_REBUILD = (
    "every command reads it when the workflow is parsed, so remove it, then rebuild just it: "
)


def dataset_size(
    name: str,
    entry: catalogue.Dataset,
    stats_path: str | os.PathLike | None = None,
    train_share: float = 0.6,
    raw_path: str | os.PathLike | None = None,
) -> Size:
    """The size of dataset ``name``: its ``stats.json`` (``results/D/data/stats.json``)
    when it exists, else the catalogue's shape (train = ``train_share`` of the
    interactions: 1 - valid_share - test_share), else the shape of the declared dataset's
    raw file at ``raw_path`` (:func:`raw_shape`), else ``catalogue.DEFAULT_SHAPE``;
    ``Size.source`` says which (:data:`SOURCES`). The heaviest
    user's history comes from the shape, bounded by the items."""
    shape = entry.shape
    if stats_path is not None and Path(stats_path).is_file():
        stats = read_stats(stats_path)
        users, items, train = stats["users"], stats["items"], stats["train"]
        evaluated = stats["test_users"]
        heaviest = min(shape.max_history if shape else items, items)
        visits = stats.get("item_visits")
        return Size(name, users, items, train, heaviest, evaluated, "stats", visits)
    source = "catalogue" if shape is not None else "default"
    if shape is None and raw_path is not None:
        shape = raw_shape(entry, raw_path)
        source = "raw" if shape is not None else source
    shape = shape or catalogue.DEFAULT_SHAPE
    train = int(round(shape.interactions * train_share))
    return Size(name, shape.users, shape.items, train, shape.max_history, shape.test_users, source)


#: A raw file up to this size is read when the workflow is parsed to size a declared
#: dataset's jobs before its split exists (a 12k-row CSV takes milliseconds).
RAW_SHAPE_MAX_BYTES = 64 * 2**20


def raw_shape(entry: catalogue.Dataset, path: str | os.PathLike) -> catalogue.Shape | None:
    """The shape of a declared dataset's raw table (``path``: a csv, tsv or parquet file of
    at most :data:`RAW_SHAPE_MAX_BYTES`) before preprocessing: an upper bound of the split's
    (the filters only drop), so requests from it are on the safe side. None when the file is
    absent, larger, not a table file, or cannot be read as declared (its preprocess job then
    says why, with the config key: sizing never stops a run)."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size > RAW_SHAPE_MAX_BYTES:
        return None
    if path.suffix.lower() not in (".csv", ".tsv", ".parquet", ".txt"):
        return None
    stat = path.stat()  # read once per file version: every job's resources ask
    key = (entry.name, str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _RAW_SHAPES:
        _RAW_SHAPES[key] = _raw_shape(entry, path)
    return _RAW_SHAPES[key]


_RAW_SHAPES: dict[tuple, catalogue.Shape] = {}


def _raw_shape(entry: catalogue.Dataset, path: Path) -> catalogue.Shape | None:
    try:
        frame = rawfiles.read_interactions(entry, path)
    except (ValueError, OSError):  # the preprocess job names what is wrong with the file
        return None
    per_user = frame.groupby("user_id", observed=True).size()
    return catalogue.Shape(
        users=int(per_user.size),
        items=int(frame["item_id"].nunique()),
        interactions=len(frame),
        test_users=int(per_user.size),
        max_history=int(per_user.max()) if per_user.size else 0,
    )


#: How each ``Size.source`` came about, as the dry run and the plan say it.
SOURCES = {
    "stats": "from its stats.json",
    "raw": "estimated before the split from its raw file (an upper bound)",
    "catalogue": "estimated before the split from the catalogue's Table-1 shape",
    "default": "estimated before the split from a default shape (ml-20m's: no shape known)",
}


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
    """The shipped cost table (``userfair/workflow/data/costs.csv``)."""
    with resources.as_file(resources.files("userfair.workflow") / "data" / TABLE) as path:
        return read_table(path)


def nearest(rows: list[Cost], size: Size) -> Cost:
    """The row measured at the shape closest to ``size`` (train interactions, log scale):
    small datasets take the small shapes' coefficients (per-batch overheads dominate
    there), large ones the large shapes'."""
    return min(rows, key=lambda row: abs(math.log(max(row.train, 1) / max(size.train, 1))))


def cost_of(model: str, device: str, size: Size) -> tuple[Cost, bool]:
    """The table row of ``model`` on ``device`` nearest to ``size`` and whether it is the
    model's own; a model without one borrows the costliest row of its kind
    (userfair.workflow.models.COST_KINDS) on that device, else of the graph (trainable) or user-knn
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
    return margined(job.mem_mb, job.minutes, gpus, job.basis, max_runtime, attempt)


def margined(
    memory_mb: float, minutes: float, gpus: int, basis: str, max_runtime: int, attempt: int = 1
) -> Request:
    """A job's estimate (``memory_mb``, ``minutes``) as what it asks for: memory times
    :data:`MEM_MARGIN` rounded up to 100 MB, runtime times :data:`TIME_MARGIN` rounded up,
    at least :data:`MIN_RUNTIME`, times ``attempt`` on a retry, never above ``max_runtime``
    (minutes). Every request of the workflow is made here."""
    mem_mb = int(math.ceil(memory_mb * MEM_MARGIN / 100) * 100)
    runtime = max(MIN_RUNTIME, math.ceil(minutes * TIME_MARGIN)) * max(1, int(attempt))
    return Request(mem_mb, min(runtime, int(max_runtime)), gpus, basis)


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
    basis = "measured" if measured else "extrapolated"
    return margined(memory, seconds / 60, 0, basis, max_runtime, attempt)


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


def gpu_here() -> bool:
    """Whether this machine has an NVIDIA GPU (its device file or nvidia-smi), told without
    importing torch: where a job with training.device auto trains when it runs here."""
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None
