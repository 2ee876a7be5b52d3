"""The cost table of :mod:`userfair.workflow.costs` (``userfair/workflow/data/costs.csv``)
calibrated from ``benchmarks/paper_scale.py``'s JSON files (docs/cluster.md#costs):
``python -m userfair.workflow.calibrate FILE.json ... --out costs.csv [--merge]``."""

from __future__ import annotations

import argparse
import csv
import json
import os
from dataclasses import asdict, fields, replace
from pathlib import Path

from userfair.files.io import InputError, atomic_path
from userfair.workflow import models
from userfair.workflow.costs import BASE_MB, KINDS, Cost, Settings, Size, drivers, table


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
                "# Cost model of the tune and topk jobs "
                "(userfair.workflow.costs, docs/cluster.md#costs)\n"
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
        prog="python -m userfair.workflow.calibrate",
        description="Cost rows from benchmarks/paper_scale.py results.",
    )
    parser.add_argument("files", nargs="+", help="paper_scale.json files")
    parser.add_argument("--out", required=True, help="the cost table to write")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the shipped table's rows that the files do not measure (a GPU row takes "
        "its dataset load and host memory from the model's CPU row at the largest shape)",
    )
    args = parser.parse_args(argv)
    rows = calibrate(args.files)
    if args.merge:
        rows += refresh_gpu_rows(rows, table())
    write_table(rows, args.out, keep=table() if args.merge else None)
    for row in rows:
        print(f"{row.model} {row.device}: {row.basis} at {row.shape} ({row.source})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
