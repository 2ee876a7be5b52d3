"""The plan of a configured run before anything runs (rule ``plan``,
docs/cluster.md#costs): the rows of ``results/plan.csv`` from the requests of
:mod:`userfair.workflow.costs`, their totals, and the Markdown tables of docs/cluster.md
(``python -m userfair.workflow.plan results/plan.csv``)."""

from __future__ import annotations

import argparse
import csv
import os

from userfair.files.io import atomic_path
from userfair.workflow import layout
from userfair.workflow.costs import Request

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
    totals as text (per dataset and overall: jobs, CPU-hours and GPU-hours) followed by the
    most expensive job groups (:func:`most_expensive`)."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=PLAN_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return totals(rows) + "\n" + most_expensive(rows)


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


def most_expensive(rows: list[dict], n: int = 5) -> str:
    """The ``n`` rows of ``rows`` that reserve the most hours (CPU- plus GPU-hours), one line
    each: what a person should look at before submitting (the longest jobs, their memory,
    whether the estimate was measured)."""
    ranked = sorted(
        rows, key=lambda r: float(r["cpu_hours"]) + float(r["gpu_hours"]), reverse=True
    )[:n]
    lines = [f"the {len(ranked)} most expensive job groups (rule dataset model):"]
    for r in ranked:
        hours = float(r["gpu_hours"]) or float(r["cpu_hours"])
        unit = "GPU-hours" if float(r["gpu_hours"]) else "CPU-hours"
        lines.append(
            f"  {r['rule']} {r['dataset']} {r['model'] or '(all models)'}: {r['jobs']} job(s) "
            f"of up to {int(r['runtime_min']):,} min and {int(r['mem_mb']):,} MB, "
            f"{int(r['gpus'])} GPU each; {hours:,.1f} {unit} ({r['basis']})"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m userfair.workflow.plan",
        description=f"{layout.output('plan')} (written by `snakemake plan`) as the Markdown "
        "cost tables of docs/cluster.md#costs.",
    )
    parser.add_argument("plan", help=f"a {layout.output('plan')} written by `snakemake plan`")
    args = parser.parse_args(argv)
    with open(args.plan, newline="") as handle:
        print(markdown(list(csv.DictReader(handle))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
