"""The dense route's jobs timed at several sizes, for their resource requests
(docs/cluster.md#dense-requests, docs/performance.md).

    python benchmarks/dense_requests.py RUN_ROOT [--users 2000 5000 10000] [--density qk]
        [--threads 2] [--json dense.json]
    python -m userfair.workflow.dense_plan dense*.json \
        --write-calibration workflow/userfair/workflow/data/dense_parts.json

For each size, writes the synthetic input of ``benchmarks/streaming.py`` as workflow files
(``benchmarks/workflow_scatter.py``) in ``RUN_ROOT/mN`` with a dense configuration
(``measures.stream_above`` at its default, ``measures.threads`` ``--threads``), then runs
the workflow's own jobs one by one, each its own ``snakemake --cores THREADS
--allowed-rules RULE`` under GNU time: the ``similarity`` job of the cosine and of the
Jaccard, then the ``measures`` job of UserKNN on them. Each job's peak RSS is the largest
of the process tree (snakemake's own process included, so an upper bound of the job's),
its seconds those of the whole invocation (snakemake's start included). Prints one row per
job and size; ``python -m userfair.workflow.dense_plan`` merges such files, prints the fit
with what each measured job used and would ask for, and writes the package data the
workflow's requests read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from userfair.workflow import dense_plan  # noqa: E402
from workflow_scatter import write_run  # noqa: E402

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
JOBS = (
    ("similarity", "results/ml-100k/similarity/cos.npz"),
    ("similarity", "results/ml-100k/similarity/jacc.npz"),
    ("measures", "results/ml-100k/measures/UserKNN.json"),
)


def timed(folder: Path, rule: str, target: str, threads: int) -> dict:
    """One job of ``rule`` building ``target`` in ``folder``: its seconds and peak MB."""
    command = [
        "/usr/bin/time", "-f", "%M %e", str(SNAKEMAKE), target, "--cores", str(threads),
        "--allowed-rules", rule, "--configfile", "dense.yaml",
    ]  # fmt: skip
    clock = time.perf_counter()
    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - clock
    if proc.returncode != 0:
        raise SystemExit(f"{rule} -> {target} in {folder} failed:\n{proc.stderr[-3000:]}")
    peak_kb, _ = proc.stderr.strip().splitlines()[-1].split()
    return {"rule": rule, "target": target, "seconds": seconds, "peak_mb": int(peak_kb) / 1024}


def cpu_model() -> str:
    """The CPU's model name (Linux), else the platform's machine."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def measure(root: Path, users: int, density: str, threads: int) -> list[dict]:
    folder = root / f"m{users}"
    line = write_run(folder, users, density, [1], threads)
    config = yaml.safe_load((folder / "n1.yaml").read_text())
    config["measures"] = {"threads": threads, "device": "cpu"}  # dense: the default threshold
    (folder / "dense.yaml").write_text(yaml.safe_dump(config))
    print(line, flush=True)
    stats = json.loads((folder / "results/ml-100k/data/stats.json").read_text())
    rows = []
    for rule, target in JOBS:
        row = {"users": users, "density": density, "threads": threads}
        row.update(visits=stats["item_visits"], train=stats["train"])
        row.update(timed(folder, rule, target, threads))
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_root", type=Path)
    parser.add_argument("--users", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--density", default="qk", choices=["qk", "ml"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = [
        row for m in args.users for row in measure(args.run_root, m, args.density, args.threads)
    ]
    machine = f"{cpu_model()}, {os.cpu_count()} cores, {args.threads} threads a job"
    record = {"machine": machine, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(record, indent=1))
    if len(set(args.users)) > 1:  # a fit needs two sizes
        for rule in dense_plan.RULES:
            print(rule, dense_plan.coefficients(record, rule))


if __name__ == "__main__":
    main()
