"""The streamed measures scattered over 1, 2 and 4 SLURM jobs, end to end, and the plan lines
built from the timed parts (docs/performance.md#scatter-parts, docs/cluster.md).

    bash tests/slurm/cluster.sh up     # as root: the one-node test cluster
    python benchmarks/scatter_cluster.py RUN_DIR [--users 100000] [--density qk]
        [--parts 1 2 4] [--json scatter.json] [--plan-users 1000000 10000000] [--nodes 100]

Writes the synthetic input of ``benchmarks/streaming.py`` as workflow files once
(``benchmarks/workflow_scatter.py``), copies it to ``RUN_DIR/nN`` for each N of ``--parts`` and
runs there ``snakemake results/ml-100k/measures/UserKNN.json --configfile nN.yaml
--allowed-rules pairs_part pairs measure_sums measures --profile profiles/slurm`` (one thread
per job). Per N it records the wall time, each job's ``sacct`` elapsed time and peak RSS,
and the seconds each part's pass reports in its file. Then it checks that the gathered
values equal the one-job run's: the counts (pairs sharing an item, UF's pairs and similar
pairs, envious users) and the extremes of the similarities identical, every measure to
``--rtol`` (the float sums of the parts are added in row order, so only the order of the
additions differs). Last, the plan lines of :mod:`userfair.workflow.scatter_plan` for
``--plan-users`` on ``--nodes`` nodes, from the parts of the largest N.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from userfair.files.io import read_inter  # noqa: E402
from userfair.streamed import pair_records  # noqa: E402
from userfair.workflow import scatter_plan  # noqa: E402
from workflow_scatter import write_run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
TARGET = "results/ml-100k/measures/UserKNN.json"
RULES = ("pairs_part", "pairs", "measure_sums", "measures")
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/")
COUNTS = ("sharing_pairs", "uf_pairs", "uf_similar_pairs", "envious_users")
EXTREMES = ("cos_min", "cos_max", "jacc_min", "jacc_max")
SUMS = ("puf_p_jacc", "puf_ndcg_jacc", "uf_sum", "envy_sum", "max_envy_sum")


def seconds_of(elapsed: str) -> float:
    """sacct's [D-]HH:MM:SS as seconds."""
    days, _, clock = elapsed.rpartition("-")
    h, m, s = (int(x) for x in clock.split(":"))
    return (int(days) if days else 0) * 86400 + h * 3600 + m * 60 + s


def megabytes(rss: str) -> float:
    """sacct's MaxRSS (``123456K``, ``1.5G``) in MB; 0 when empty."""
    if not rss:
        return 0.0
    unit = rss[-1].upper()
    scale = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}.get(unit)
    return float(rss[:-1]) * scale if scale else float(rss) / 2**20


def cpu_seconds(total: str) -> float:
    """sacct's TotalCPU ([D-][HH:]MM:SS[.mmm]) as seconds."""
    days, _, clock = total.rpartition("-")
    parts = [float(x) for x in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return (int(days) if days else 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def sacct(job_ids: list[str]) -> dict[str, dict]:
    """Per SLURM job: elapsed and CPU seconds (all its steps), the largest and smallest
    MaxRSS (MB) of its steps (sampled by jobacct_gather every 30 s: a short peak may be
    missed)."""
    out = subprocess.run(
        ["sacct", "-n", "-P", "-j", ",".join(job_ids), "-o",
         "JobID,Elapsed,TotalCPU,MaxRSS,State"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    jobs: dict[str, dict] = {}
    for line in out.splitlines():
        job, elapsed, cpu, rss, state = line.split("|")
        base = job.split(".")[0]
        row = jobs.setdefault(
            base, {"elapsed_s": 0.0, "cpu_s": 0.0, "max_rss_mb": 0.0, "min_rss_mb": math.inf}
        )
        if job == base:
            row["elapsed_s"], row["cpu_s"], row["state"] = (
                seconds_of(elapsed),
                cpu_seconds(cpu),
                state,
            )
        row["max_rss_mb"] = max(row["max_rss_mb"], megabytes(rss))
        if rss:  # the batch step: the job's Snakemake, an interpreter with its imports
            row["min_rss_mb"] = min(row["min_rss_mb"], megabytes(rss))
    for row in jobs.values():  # 0: no step was sampled
        row["min_rss_mb"] = row["min_rss_mb"] if math.isfinite(row["min_rss_mb"]) else 0.0
    return jobs


def run(folder: Path, parts: int) -> dict:
    env = {
        **os.environ,
        "USERFAIR_SLURM_ACCOUNT": "userfair",
        "USERFAIR_SLURM_PARTITION": "debug",
        "USERFAIR_SLURM_GPU_PARTITION": "gpu",
    }
    command = [
        str(SNAKEMAKE), TARGET, "--configfile", f"n{parts}.yaml", "--allowed-rules", *RULES,
        "--profile", "profiles/slurm", "--slurm-init-seconds-before-status-checks", "2",
    ]  # fmt: skip
    load = os.getloadavg()[0]
    clock = time.perf_counter()
    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - clock
    if proc.returncode:
        raise SystemExit(f"snakemake failed in {folder}:\n{proc.stderr[-6000:]}")
    submitted = SUBMITTED.findall(proc.stderr)
    accounted = sacct([job for job, _ in submitted])
    jobs = [{"rule": rule, "slurm_id": job, **accounted.get(job, {})} for job, rule in submitted]
    data = folder / "results/ml-100k"
    one = [json.loads(p.read_text()) for p in sorted((data / "similarity/pairs").glob("*.json"))]
    two = [
        json.loads(p.read_text()) for p in sorted((data / "measures/UserKNN/sums").glob("*.json"))
    ]
    return {
        "parts": parts,
        "wall_s": wall,
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "jobs": jobs,
        "pass_one_s": [p["seconds"] for p in one],
        "pass_two_s": [[p["seconds_pairs"], p["seconds_uf_setup"], p["seconds_envy"]] for p in two],
        "pairs": json.loads((data / "similarity/pairs.json").read_text()),
        "sums": two,
        "measures": json.loads((folder / TARGET).read_text()),
    }


def gathered_sums(run: dict) -> dict:
    """Pass two's record of ``run`` gathered from its parts, as the rule ``measures`` does
    (:func:`userfair.streamed.pair_records.combine`: every sum and count added)."""
    parts = [pair_records.PairSums.from_dict(part) for part in run["sums"]]
    return pair_records.combine(parts).to_dict()


def compare(one: dict, other: dict) -> dict:
    """``other`` against the one-job run ``one``: the counts and extremes identical or not;
    the relative difference of each of pass two's gathered sums and of each measure."""
    pairs_a, pairs_b = one["pairs"], other["pairs"]
    sums_a, sums_b = gathered_sums(one), gathered_sums(other)
    same = {name: pairs_a[name] == pairs_b[name] for name in ("sharing_pairs", "uf_pairs")}
    same |= {name: pairs_a[name] == pairs_b[name] for name in EXTREMES}
    same |= {name: sums_a[name] == sums_b[name] for name in ("uf_similar_pairs", "envious_users")}
    sums = {name: relative(sums_a[name], sums_b[name]) for name in SUMS}
    measures = {
        name: relative(value, other["measures"][name])
        for name, value in one["measures"].items()
        if isinstance(value, float) and math.isfinite(value)
    }
    return {
        "identical": same,
        "sums_relative": sums,
        "uf_moments_relative": {
            name: relative(pairs_a[name], pairs_b[name]) for name in ("uf_mean", "uf_m2")
        },
        "max_relative": max(measures.values()),
        "worst": max(measures, key=measures.get),
        "bit_identical_measures": sum(r == 0.0 for r in measures.values()),
        "measures": len(measures),
    }


def relative(a: float, b: float) -> float:
    return abs(b - a) / max(abs(a), 1e-300)


def item_visits(folder: Path) -> tuple[float, int]:
    """Sum over items of deg (deg - 1) / 2 of the train split, and its interactions."""
    train = read_inter(folder / "results/ml-100k/data/ml-100k.train.inter")
    degrees = train.groupby("item_id").size().to_numpy(dtype=np.float64)
    return float((degrees * (degrees - 1) / 2).sum()), int(len(train))


def measure(args) -> dict:
    """Run the scatter for every N of ``args.parts`` (module docstring); the JSON record."""
    base = args.run_dir / "inputs"
    if not (base / "n1.yaml").exists():
        print(write_run(base, args.users, args.density, sorted({1, *args.parts})), flush=True)
    visits, train = item_visits(base)
    runs = []
    for parts in args.parts:
        folder = args.run_dir / f"n{parts}"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(base, folder, symlinks=True)
        row = run(folder, parts)
        runs.append(row)
        elapsed = ", ".join(f"{j['rule']} {j['elapsed_s']:.0f} s" for j in row["jobs"])
        print(
            f"N = {parts}: wall {row['wall_s']:.0f} s (load {row['load_before']:.1f} -> "
            f"{row['load_after']:.1f}); pass one {row['pass_one_s']}; pass two "
            f"{row['pass_two_s']}; jobs: {elapsed}",
            flush=True,
        )
    return {
        "users": args.users,
        "density": args.density,
        "train_interactions": train,
        "item_visits": visits,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--density", default="qk", choices=["qk", "ml"])
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rtol", type=float, default=1e-12)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--from-json", type=Path,
        help="no run: check and plan an earlier run's JSON again (sacct asked again)",
    )  # fmt: skip
    parser.add_argument("--plan-users", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--nodes", type=int, default=100)
    args = parser.parse_args()
    if args.from_json:
        result = json.loads(args.from_json.read_text())
        for row in result["runs"]:
            accounted = sacct([job["slurm_id"] for job in row["jobs"]])
            row["jobs"] = [{**job, **accounted.get(job["slurm_id"], {})} for job in row["jobs"]]
    else:
        result = measure(args)
    runs, failures = result["runs"], []
    for row in runs[1:]:
        row["against_one_job"] = check = compare(runs[0], row)
        print(f"N = {row['parts']} against N = {runs[0]['parts']}: {check}")
        if not all(check["identical"].values()) or check["max_relative"] > args.rtol:
            failures.append(row["parts"])
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=float))
    measured = scatter_plan.Measured.from_cluster(result)
    for users in args.plan_users:
        print(scatter_plan.line(scatter_plan.plan(measured, users, args.nodes)))
    if failures:
        raise SystemExit(f"N = {failures}: not equal to the one-job run (rtol {args.rtol})")


if __name__ == "__main__":
    main()
