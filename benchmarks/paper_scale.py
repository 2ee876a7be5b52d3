"""Rehearsal of the paper's training jobs at a dataset's Table-1 shape: synthetic raw files in
the dataset's own format, the workflow's own preprocess and split, then one model's dataset
build, model set-up, training epoch(s), validation and top-k export, timed, with the peak
resident memory of each stage.

    python benchmarks/paper_scale.py --shape ml-20m --model MultiVAE --epochs 1 --out DIR \\
        [--device cpu|cuda] [--threads N] [--max-batches B] [--scale F] [--cache DIR]

writes ``DIR/paper_scale.json`` (keys: machine, shape, model, params, device, threads,
stages, data). Shapes (Table 1 of the paper, after preprocessing; ``tiny`` for tests):

- ``ml-20m``: 89,917 users, 16,404 items, 10,588,141 interactions; heaviest user 9,254 items
  (ML-20M's heaviest user), most popular item half the users;
- ``ml-10m``: 49,378 users, 9,821 items, 5,362,685 interactions; heaviest user 7,359 items
  (ML-10M's heaviest user in the raw file: an upper bound for after preprocessing);
- ``qk-video``: 4,656 users, 6,423 items, 51,777 interactions; heaviest user 720 items (not
  published: an assumption, ~65x the mean user as in ML-10M/ML-20M); users have >= 10
  interactions (with >= 5 the seeded split leaves far fewer than Table 1's 3,514 test
  users);
- ``tiny``: 300 users, 200 items, 6,000 interactions, heaviest user 120.

``--scale F`` keeps the mean user: users and test users times F, interactions the mean user
times the users, items and the heaviest user times sqrt(F) (items at most one per 8
interactions, the heaviest user at most 60 % of the items). The raw file is written by
``data_rehearsal.write_shaped`` (every user and item keeps >= 5 interactions, so the 5-core
keeps the requested shape exactly); preprocess and split are the functions the rules call
(``userfair.workflow.preprocess.preprocess_file``, ``make_splits``, ``write_inter``), each in a
fresh
process, cached per shape under ``--cache`` (default ``DIR/../paper_scale_cache``) so that
the next model reuses the split.

``dataset_build`` is the rule ``recbole_dataset``'s job, in a child process of its own as on
the cluster (``userfair.workflow.shared_dataset.build_shared`` + ``write_shared``: RecBole's
dataset, parts, sampler and evaluation loaders, written once per dataset). The model stages
then run in this process, as a tune job runs them, which never builds: ``dataset_load``
(reading that file and unpacking it for the job's config, ``read_shared`` + ``load_shared``,
what ``userfair.workflow.recommenders.prepare`` does with ``shared=``), ``model_init`` (the model
and its trainer: KNN neighbourhoods, graph adjacency), ``train_epoch`` (RecBole's
``_train_epoch``; NCL's E-step is included once, as ``fixed_seconds``), ``validation``
(``Trainer.evaluate`` on the valid loader) and ``topk`` (the test evaluation plus the ranked
lists of ``export_topk``). ``cpu_seconds`` beside ``seconds``: the CPU time of the process
(all its threads) during the stage, the better number on a shared, loaded machine. Peak RSS
per stage: a thread samples the process's resident
memory every 10 ms (psutil) and keeps the largest value seen during the stage; it includes
what earlier stages still hold (a tune job holds it too). ``--max-batches B`` runs only the
first B batches of a loader and scales the time by batches / B (``extrapolated: true``);
in validation and top-k the first batch (set-up; a graph model's one propagation over the
whole graph, which the later batches reuse) counts once (``fixed_seconds``) and the other
B - 1 are scaled to all but one.
The grid point is the first of ``--grid`` (default config/grids/quick.yaml); the training
settings are config/config.yaml's.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import logging
import math
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "benchmarks"))

MODELS = ("UserKNN", "ItemKNN", "BPR", "MultiVAE", "NGCF", "NeuMF", "NCL")
STAGES = ("dataset_build", "dataset_load", "model_init", "train_epoch", "validation", "topk")


@dataclass(frozen=True)
class Shape:
    """A dataset's shape after preprocessing (Table 1) and the raw format it is written in."""

    name: str
    dataset: str  # the catalogue name whose raw format and reader are used
    users: int
    items: int
    interactions: int
    test_users: int
    max_user: int
    max_item: int
    min_user: int = 5

    def scaled(self, factor: float) -> Shape:
        if factor == 1:
            return self
        root = math.sqrt(factor)
        users = max(20, round(self.users * factor))
        interactions = round(users * self.interactions / self.users)  # the mean user stays
        items = max(20, min(round(self.items * root), interactions // 8))  # >= 8 per item
        return replace(
            self,
            name=f"{self.name}@{factor:g}",
            users=users,
            items=items,
            interactions=interactions,
            test_users=max(2, round(self.test_users * factor)),
            max_user=min(round(0.6 * items), max(self.min_user + 1, round(self.max_user * root))),
            max_item=min(users, max(2 * interactions // items, round(self.max_item * factor))),
        )

    def write_raw(self, folder: Path) -> Path:
        """The raw file of this shape in its dataset's format under ``folder``
        (``data_rehearsal.write_shaped``); returns its path."""
        from data_rehearsal import write_shaped

        return write_shaped(
            folder,
            self.dataset,
            users=self.users,
            items=self.items,
            interactions=self.interactions,
            max_user=self.max_user,
            max_item=self.max_item,
            test_users=self.test_users,
            min_user=self.min_user,
        )


SHAPES = {
    "ml-20m": Shape("ml-20m", "ml-20m", 89_917, 16_404, 10_588_141, 2_178, 9_254, 44_958),
    "ml-10m": Shape("ml-10m", "ml-10m", 49_378, 9_821, 5_362_685, 1_523, 7_359, 24_689),
    "qk-video": Shape("qk-video", "qk-video", 4_656, 6_423, 51_777, 3_514, 720, 466, 10),
    "tiny": Shape("tiny", "ml-20m", 300, 200, 6_000, 30, 120, 90),
}
# How close the preprocessed data must come to the requested shape (tests check it).
TOLERANCE = {"users": 0.0, "items": 0.0, "interactions": 0.0, "max_user": 0.0, "test_users": 0.5}


# --- data: generate, preprocess, split (each step a fresh process, cached) -----------------


def raw_path(shape: Shape, folder: Path) -> Path:
    """What the preprocess rule reads: a folder of atomic files, or QK-video.csv."""
    return folder / "raw" / "QK-video.csv" if shape.dataset == "qk-video" else folder / "raw"


def data_step(step: str, shape: Shape, folder: Path) -> dict:
    """One data step in this process; the split and stats go to ``folder``."""
    import numpy as np
    import pandas as pd

    from userfair.files.io import write_inter
    from userfair.workflow import preprocess as data

    started = time.perf_counter()
    if step == "generate":
        shape.write_raw(folder / "raw")
        extra = {}
    elif step == "preprocess":  # the preprocess rule's call (config defaults: >= 3, 5-core)
        frame = data.preprocess_file(shape.dataset, raw_path(shape, folder), min_rating=3, core=5)
        data.as_written(frame).to_parquet(folder / "preprocessed.parquet", index=False)
        extra = {"kept": len(frame)}
    else:  # split: the split rule's call (global protocol, temporal where there are times)
        frame = pd.read_parquet(folder / "preprocessed.parquet")
        splits = data.make_splits(
            frame,
            temporal="timestamp" in frame,
            seed=2024,
            valid_share=0.2,
            test_share=0.2,
            min_train=5,
            protocol="global",
        )
        for name in data.SPLITS:
            write_inter(data.as_written(splits[name]), folder / f"{shape.dataset}.{name}.inter")
        train_counts = splits["train"]["user_id"].astype(str).value_counts()
        counts = data.split_counts(splits)
        extra = {
            "shape": {
                "users": int(frame["user_id"].nunique()),
                "items": int(frame["item_id"].nunique()),
                "interactions": len(frame),
                "max_user": int(frame["user_id"].value_counts().max()),
                "train": len(splits["train"]),
                "valid": len(splits["valid"]),
                "test": len(splits["test"]),
                "max_history": int(train_counts.max()),
                "mean_history": float(np.mean(train_counts)),
                "test_users": int(splits["test"]["user_id"].nunique()),
                "valid_users": int(splits["valid"]["user_id"].nunique()),
                "split_users": counts["split_users"],
                "split_items": counts["split_items"],
            }
        }
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **extra,
    }


def prepare_data(shape: Shape, folder: Path) -> dict:
    """Generate, preprocess and split ``shape`` into ``folder`` unless done before; the
    record of ``folder/data.json`` (steps' seconds and peak RSS, the resulting shape)."""
    record_path = folder / "data.json"
    if record_path.is_file():
        record = json.loads(record_path.read_text())
        if record.get("request") == asdict(shape):
            return {**record, "cached": True}
    folder.mkdir(parents=True, exist_ok=True)
    record = {"request": asdict(shape), "steps": {}}
    for step in ("generate", "preprocess", "split"):
        print(f"[data] {shape.name}: {step} ...", flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--data-step", step, "--folder", str(folder),
             "--shape-json", json.dumps(asdict(shape))],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode:
            sys.exit(f"data step {step} failed:\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        record["shape"] = result.pop("shape", record.get("shape"))
        record["steps"][step] = result
        print(f"[data] {step}: {result['seconds']:.1f} s, {result['peak_rss_mb']:.0f} MB")
    record_path.write_text(json.dumps(record, indent=2))
    return {**record, "cached": False}


def shape_errors(shape: Shape, got: dict) -> list[str]:
    """The quantities of the preprocessed/split data outside TOLERANCE of the request."""
    wanted = {
        "users": shape.users,
        "items": shape.items,
        "interactions": shape.interactions,
        "max_user": shape.max_user,
        "test_users": shape.test_users,
    }
    return [
        f"{key}: {got[key]} vs {want} requested (tolerance {TOLERANCE[key]:.0%})"
        for key, want in wanted.items()
        if abs(got[key] - want) > TOLERANCE[key] * want
    ]


# --- peak memory and stages -----------------------------------------------------------------


class PeakRSS:
    """Samples this process's RSS every ``interval`` s in a thread; ``stage()`` times a block
    and records the largest RSS seen during it (and the CUDA peak, on a GPU)."""

    def __init__(self, interval: float = 0.01):
        import psutil

        self.process = psutil.Process()
        self.interval = interval
        self.peak = self.process.memory_info().rss
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.interval):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def measure(self, func, cuda: bool = False) -> tuple[object, dict]:
        import torch

        self.peak = self.process.memory_info().rss
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        started, cpu = time.perf_counter(), time.process_time()
        value = func()
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        self.peak = max(self.peak, self.process.memory_info().rss)
        record = {
            "seconds": seconds,
            "peak_rss_mb": round(self.peak / 2**20, 1),
            "cpu_seconds": round(time.process_time() - cpu, 3),
        }
        if cuda:
            record["peak_gpu_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        return value, record


def limited(loader, batches: int | None, marks: list | None = None):
    """``loader`` itself, or a copy that stops after ``batches`` batches (same class, so
    RecBole's isinstance checks still hold). ``marks`` gets (wall, CPU) times at each batch
    requested after the first: the first batch's end."""
    if marks is None and (batches is None or batches >= len(loader)):
        return loader
    base = loader.__class__

    def iterate(self):
        for index, batch in enumerate(itertools.islice(base.__iter__(self), batches)):
            if index == 1 and marks is not None:
                marks.append((time.perf_counter(), time.process_time()))
            yield batch

    clone = copy.copy(loader)
    clone.__class__ = type(f"First{batches}{base.__name__}", (base,), {"__iter__": iterate})
    return clone


def batched(
    record: dict,
    total: int,
    measured: int,
    fixed: float = 0.0,
    fixed_cpu: float = 0.0,
    first_batch: bool = False,
) -> dict:
    """A loop stage's record: seconds (and CPU seconds) scaled from the measured batches to
    all of them; ``fixed`` seconds of the stage are not scaled (with ``first_batch``, they
    are the first batch's, and the other measured batches are scaled to all but one)."""
    loop = record["seconds"] - fixed
    one = 1 if first_batch else 0
    factor = (total - one) / max(measured - one, 1)
    out = {
        **record,
        "seconds": round(loop * factor + fixed, 3),
        "cpu_seconds": round((record["cpu_seconds"] - fixed_cpu) * factor + fixed_cpu, 3),
        "batches": int(total),
        "batches_measured": int(measured),
        "extrapolated": measured < total,
    }
    if measured < total:
        out["measured_seconds"] = round(record["seconds"], 3)
        out["measured_cpu_seconds"] = record["cpu_seconds"]
    if fixed:
        out["fixed_seconds"] = round(fixed, 3)
    return out


def evaluation_stage(meter, func, loader, max_batches: int | None, cuda: bool):
    """An evaluation stage (validation, top-k) over the first ``max_batches`` batches of
    ``loader``. Extrapolated, the first batch counts once, not scaled: it holds the set-up,
    and for graph models the one propagation over the whole graph that later batches reuse."""
    marks: list = []
    part = limited(loader, max_batches, marks)
    started = {}

    def timed():
        started["wall"], started["cpu"] = time.perf_counter(), time.process_time()
        return func(part)

    value, record = meter.measure(timed, cuda)
    measured = min(len(loader), max_batches or len(loader))
    if measured < len(loader) and marks and measured > 1:
        fixed = marks[0][0] - started["wall"]
        fixed_cpu = marks[0][1] - started["cpu"]
        return value, batched(record, len(loader), measured, fixed, fixed_cpu, True)
    return value, batched(record, len(loader), measured)


def training_settings(args) -> dict:
    import yaml

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    keys = ("stopping_step", "train_batch_size", "eval_batch_size")
    settings = {key: config["training"][key] for key in keys}
    return {
        **settings,
        "epochs": args.epochs,
        "device": args.device,
        "threads": args.threads,
        "seed": config["seed"],
        "k": config["k"],
    }


def grid_point(model: str, grid: Path) -> dict:
    from userfair.workflow import grids

    return grids.load_points(grid, [model])[model][0]


def build_dataset_file(folder, dataset: str, workdir, training, out, cuda: bool) -> dict:
    """The rule recbole_dataset's job, run in a child process: build the dataset's RecBole
    dataset, parts, sampler and evaluation loaders and write the file; its stage record
    (the child's seconds, CPU seconds and peak RSS)."""
    from userfair.recbole_patches import apply
    from userfair.workflow import shared_dataset

    apply()
    sys.argv = sys.argv[:1]
    meter = PeakRSS()
    _, record = meter.measure(
        lambda: shared_dataset.write_shared(
            shared_dataset.build_shared(folder, dataset, workdir, training), out
        ),
        cuda,
    )
    meter.stop.set()
    return record


def run_model(args, shape: Shape, folder: Path, workdir: Path) -> dict:
    """The model stages in this process; the ``stages`` mapping of the JSON."""
    import contextlib

    import torch

    from userfair.recbole_patches import apply
    from userfair.workflow import recbole_setup, recommenders, shared_dataset

    apply()
    sys.argv = sys.argv[:1]  # RecBole's Config reads --key=value arguments from the command line
    from recbole.config import Config
    from recbole.utils import get_trainer, init_seed

    params = grid_point(args.model, args.grid)
    training = recbole_setup.Training(**training_settings(args))
    cuda = args.device == "cuda"
    meter = PeakRSS()
    stages: dict[str, dict] = {}
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(workdir):
        torch.set_num_threads(training.threads)
        data_path = recbole_setup.link_split(folder, shape.dataset, workdir)
        cls = recbole_setup.model_class(args.model)
        settings = recbole_setup.recbole_settings(args.model, params, data_path, workdir, training)

        # The rule recbole_dataset's work, in a process of its own as on the cluster: build
        # the dataset, its parts, sampler and evaluation loaders once and write the file.
        shared_file = workdir / "dataset.pth"
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            stages["dataset_build"] = pool.submit(
                build_dataset_file, folder, shape.dataset, workdir / "shared", training,
                shared_file, cuda,
            ).result()  # fmt: skip
        print(f"[{args.model}] dataset_build {stages['dataset_build']}", flush=True)
        config = Config(model=cls, dataset=recbole_setup.recbole_name(shape.dataset),
                        config_dict=settings)  # fmt: skip
        init_seed(config["seed"], config["reproducibility"])

        # What a tune or top-k job does instead of the build: read the dataset file and
        # unpack it for the job's config (as userfair.workflow.recommenders.prepare does).
        def load():
            loaded = shared_dataset.load_shared(shared_dataset.read_shared(shared_file), config)
            if loaded is None:
                raise RuntimeError(f"{shared_file}: built with other settings than the job's")
            return loaded

        (dataset, train, valid, test), stages["dataset_load"] = meter.measure(load, cuda)
        print(f"[{args.model}] dataset_load {stages['dataset_load']}", flush=True)

        def init():
            init_seed(config["seed"], config["reproducibility"])
            net = cls(config, train.dataset).to(config["device"])
            return net, get_trainer(config["MODEL_TYPE"], config["model"])(config, net)

        (net, trainer), stages["model_init"] = meter.measure(init, cuda)
        print(f"[{args.model}] model_init {stages['model_init']}", flush=True)
        for epoch in range(args.epochs):
            fixed = {}

            def one_epoch(epoch=epoch, fixed=fixed):
                if hasattr(trainer, "num_m_step") and epoch % trainer.num_m_step == 0:
                    begun, cpu = time.perf_counter(), time.process_time()
                    net.e_step()  # NCL's clustering, once per m_step epochs (NCLTrainer.fit)
                    fixed["e_step"] = time.perf_counter() - begun
                    fixed["e_step_cpu"] = time.process_time() - cpu
                return trainer._train_epoch(limited(train, args.max_batches), epoch)

            _, record = meter.measure(one_epoch, cuda)
            total = len(train)
            measured = min(total, args.max_batches or total)
            record = batched(
                record, total, measured, fixed.get("e_step", 0.0), fixed.get("e_step_cpu", 0.0)
            )
            print(f"[{args.model}] train_epoch {epoch}: {record}", flush=True)
            if "train_epoch" in stages:  # the mean of the epochs, the largest peak
                previous = stages["train_epoch"]
                for key in ("seconds", "cpu_seconds"):
                    record[key] = (previous[key] * epoch + record[key]) / (epoch + 1)
                record["peak_rss_mb"] = max(previous["peak_rss_mb"], record["peak_rss_mb"])
            stages["train_epoch"] = {**record, "epochs": epoch + 1}

        def evaluate(loader):
            return trainer.evaluate(loader, load_best_model=False, show_progress=False)

        result, stages["validation"] = evaluation_stage(
            meter, evaluate, valid, args.max_batches, cuda
        )
        stages["validation"]["valid_ndcg"] = float(result[f"ndcg@{training.k}"])
        print(f"[{args.model}] validation {stages['validation']}", flush=True)
        for name in ("restore_user_e", "restore_item_e"):  # a top-k job propagates anew
            if getattr(net, name, None) is not None:
                setattr(net, name, None)

        def topk(part):
            evaluate(part)
            run = recbole_setup.Run(config, dataset, train, valid, part, net, trainer)
            return recommenders._ranked_lists(run, training.k)

        lists, stages["topk"] = evaluation_stage(meter, topk, test, args.max_batches, cuda)
        stages["topk"]["users_listed"] = int(lists["user_id"].nunique())
        print(f"[{args.model}] topk {stages['topk']}", flush=True)
    meter.stop.set()
    return {"params": params, "stages": stages, "recbole_device": str(config["device"])}


def machine(device: str) -> dict:
    import psutil
    import torch

    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if device == "cuda" and torch.cuda.is_available() else None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "gpu": gpu,
        "load_1min_start": round(os.getloadavg()[0], 2),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="ml-20m")
    parser.add_argument("--model", choices=MODELS, default="BPR")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/paper_scale"))
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-batches", type=int, default=None)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--grid", type=Path, default=ROOT / "config" / "grids" / "quick.yaml")
    parser.add_argument("--data-step", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shape-json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.data_step:
        result = data_step(args.data_step, Shape(**json.loads(args.shape_json)), args.folder)
        print(json.dumps(result))
        return 0
    if args.max_batches is not None and args.max_batches < 1:
        parser.error("--max-batches must be >= 1")
    logging.basicConfig(level=logging.WARNING)
    load_start = os.getloadavg()[0]
    info = machine(args.device)
    info["load_1min_start"] = round(load_start, 2)
    shape = SHAPES[args.shape].scaled(args.scale)
    cache = args.cache or args.out.resolve().parent / "paper_scale_cache"
    folder = cache / shape.name
    prepared = prepare_data(shape, folder)
    got = prepared["shape"]
    errors = shape_errors(shape, got)
    for error in errors:
        print(f"[data] shape off: {error}", file=sys.stderr)
    result = run_model(args, shape, folder, args.out.resolve() / "work")
    info["load_1min_end"] = round(os.getloadavg()[0], 2)
    record = {
        "benchmark": "paper_scale",
        "version": 1,
        "machine": info,
        "shape": {
            "name": shape.name,
            "users": got["users"],
            "items": got["items"],
            "train": got["train"],
            "valid": got["valid"],
            "test": got["test"],
            "max_history": got["max_history"],
            "evaluated_users": got["test_users"],
            "interactions": got["interactions"],
            "max_user": got["max_user"],
            "mean_history": round(got["mean_history"], 2),
            "valid_users": got["valid_users"],
            "split_users": got["split_users"],
            "split_items": got["split_items"],
            "scale": args.scale,
            "requested": {k: v for k, v in asdict(shape).items() if k not in ("name", "dataset")},
            "within_tolerance": not errors,
        },
        "model": args.model,
        "params": result["params"],
        "grid": f"{args.grid.name}, point 0",
        "device": args.device,
        "threads": args.threads,
        "epochs": args.epochs,
        "max_batches": args.max_batches,
        "peak_rss_method": (
            "psutil sampling every 10 ms; dataset_build in a process of its own, the model "
            "stages in one process"
        ),
        "stages": result["stages"],
        "data": {
            "cached": prepared["cached"],
            "steps": prepared["steps"],
            "peak_rss_method": "ru_maxrss of a fresh process per step",
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "paper_scale.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2))
    os.replace(tmp, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
