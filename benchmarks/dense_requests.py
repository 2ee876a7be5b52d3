"""The dense route's jobs timed at several sizes, for their resource requests
(docs/cluster.md#dense-requests, docs/performance.md).

    python benchmarks/dense_requests.py RUN_ROOT [--users 2000 5000 10000] [--density qk]
        [--threads 2] [--rules similarity measures exp_relevance ...] [--json dense.json]
    python -m userfair.workflow.dense_plan dense*.json \
        --write-calibration workflow/userfair/workflow/data/dense_parts.json
    python benchmarks/dense_requests.py RUN_ROOT --extras gamma graded similarity \
        [--users 2000 4000 7000] [--json extras.json]
    python -m userfair.workflow.dense_plan dense*.json --extras extras.json \
        --write-calibration workflow/userfair/workflow/data/dense_parts.json

For each size, writes the synthetic input of ``benchmarks/streaming.py`` as workflow files
(``benchmarks/workflow_scatter.py``) in ``RUN_ROOT/mN`` with a dense configuration
(``measures.stream_above`` at its default, ``measures.threads`` ``--threads``), then runs
the workflow's own jobs one by one, each its own ``snakemake --cores THREADS
--allowed-rules RULE`` under GNU time: the ``similarity`` job of the cosine and of the
Jaccard (always: every other job reads them), the ``measures`` job of UserKNN on them,
the ``uncertainty`` (``--resamples``, default 1,000) and ``users`` jobs of UserKNN, and
the experiments of Figs. 2-4 and ``exp_variants`` (Figs. 3 and 4 with the opt-in
genre similarity too: a run of its own, as the option changes the other jobs)
(``exp_relevance``, ``exp_similarity``, ``exp_extreme``) and the appendix's ``exp_gamma``
(on synthetic item genres, 1 to 3 of ml-100k's 18 per item, written as the ``genres``
rule's output, and the ``genre_similarity`` job of them), at the experiments' settings
of the configuration (``--weibull-shapes``, ``--gammas``; each row records its
``units``, the measure evaluations that repeat with them, ``dense_plan.units``). Each
job's peak RSS is the largest of the process tree (snakemake's own process included, so
an upper bound of the job's), its seconds those of the whole invocation (snakemake's
start included). Prints one row per job and size; ``python -m userfair.workflow.dense_plan``
merges such files, prints the fit with what each measured job used and would ask for, and
writes the package data the workflow's requests read.

With ``--extras``, each size is timed once as above (the rules the extras reach,
``dense_plan.EXTRAS``) and once per opt-in setting that adds work to those jobs, each in
its own run folder ``mN-EXTRA`` and recorded with ``"extra": EXTRA``: ``gamma`` (UF mixes
in the genre similarity, ``measures.gamma`` 0.5), ``graded`` (``measures.relevance``
binary and graded, on synthetic grades 1 to 5) and ``similarity`` (the opt-in genre
similarity in ``measures.similarities``). The base rows and the extras' rows of one
sitting are what ``dense_plan`` sets side by side: an extra's memory as the difference,
its time as the ratio, so that the machine the base calibration was timed on need not be
this one.
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

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from userfair.workflow import dense_plan  # noqa: E402
from workflow_scatter import write_run  # noqa: E402

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
JOBS = (
    ("similarity", "results/ml-100k/similarity/cos.npz"),
    ("similarity", "results/ml-100k/similarity/jacc.npz"),
    ("genre_similarity", "results/ml-100k/similarity/genre.npz"),
    ("measures", "results/ml-100k/measures/UserKNN.json"),
    ("exp_relevance", "results/ml-100k/experiments/relevance.parquet"),
    ("exp_similarity", "results/ml-100k/experiments/similarity.parquet"),
    ("exp_extreme", "results/ml-100k/experiments/extreme.parquet"),
    ("exp_gamma", "results/ml-100k/experiments/gamma_models.parquet"),
    ("uncertainty", "results/ml-100k/uncertainty/UserKNN.parquet"),
    ("users", "results/ml-100k/measures/UserKNN/users.parquet"),
    ("exp_variants", "results/ml-100k/experiments/similarity_variants.parquet"),
)
#: ml-100k's genres, for the synthetic items' (exp_gamma needs genres).
GENRES = (
    "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
    "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi",
    "Thriller", "War", "Western",
)  # fmt: skip


def write_genres(folder: Path, seed: int = 0) -> None:
    """The ``genres`` rule's output for the synthetic items: 1 to 3 genres each."""
    train = pd.read_csv(folder / "results/ml-100k/data/ml-100k.train.inter", sep="\t")
    items = sorted(set(train.iloc[:, 1].astype(str)))
    rng = np.random.default_rng(seed)
    lines = ["item_id:token\tgenre:token_seq"]
    for item in items:
        chosen = rng.choice(len(GENRES), size=int(rng.integers(1, 4)), replace=False)
        lines.append(f"{item}\t{' '.join(GENRES[g].replace(' ', '_') for g in sorted(chosen))}")
    (folder / "results/ml-100k/data/ml-100k.item").write_text("\n".join(lines) + "\n")


def write_grades(folder: Path, seed: int = 0) -> None:
    """The ``grades`` rule's output for the synthetic interactions: a grade of 1 to 5 for
    each train and test interaction."""
    data = folder / "results/ml-100k/data"
    kept = pd.concat(
        [
            pd.read_csv(data / f"ml-100k.{split}.inter", sep="\t", dtype=str)
            for split in ("train", "test")
        ]
    )
    kept.columns = ["user_id", "item_id"]
    kept = kept.drop_duplicates()
    rng = np.random.default_rng(seed)
    kept["grade"] = rng.integers(1, 6, len(kept)).astype(float)
    kept.reset_index(drop=True).to_parquet(data / "grades.parquet")


#: What each opt-in setting of ``--extras`` sets in the configuration (the rules it
#: reaches: ``dense_plan.EXTRAS``).
EXTRA_SETTINGS = {
    "gamma": {"gamma": 0.5},
    "graded": {"relevance": ["binary", "graded"]},
    "similarity": {"similarities": ["cos", "jacc", "genre"]},
}


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


def measure(
    root: Path, users: int, density: str, threads: int, rules, experiments: dict, resamples: int,
    extra: str | None = None,
) -> list[dict]:  # fmt: skip
    """The rows of ``rules`` timed at ``users``; with ``extra`` (of :data:`EXTRA_SETTINGS`)
    in a folder of its own and under that setting, each row marked with it (the similarity
    files it needs run first, unrecorded: the base rows have them)."""
    folder = root / (f"m{users}" if extra is None else f"m{users}-{extra}")
    line = write_run(folder, users, density, [1], threads)
    config = yaml.safe_load((folder / "n1.yaml").read_text())
    config["measures"] = {"threads": threads, "device": "cpu"}  # dense: the default threshold
    config["experiments"] = experiments
    config["uncertainty"] = {"resamples": resamples}
    variants = ["genre"] if "exp_variants" in rules else []  # exp_variants' opt-in one
    config["measures"]["similarities"] = ["cos", "jacc", *variants]
    config["measures"].update(EXTRA_SETTINGS.get(extra, {}))
    added = config["measures"]["similarities"][2:]  # the opt-in similarities configured
    config["who"] = {"features": []}  # the synthetic users have no features
    (folder / "dense.yaml").write_text(yaml.safe_dump(config))
    write_genres(folder)
    if extra == "graded":
        write_grades(folder)
    print(line if extra is None else f"{line} ({extra})", flush=True)
    stats = json.loads((folder / "results/ml-100k/data/stats.json").read_text())
    genre = "exp_gamma" in rules or extra == "gamma"  # UF's mix reads the genre similarity
    rows = []
    for rule, target in JOBS:
        # the similarity files first, each its own row: every other job reads them
        needed = rule == "similarity" or (rule == "genre_similarity" and genre)
        if rule not in rules and not needed:
            continue
        row = {"users": users, "density": density, "threads": threads}
        row.update(visits=stats["item_visits"], train=stats["train"])
        row["units"] = dense_plan.units(rule, {**config, "models": ["UserKNN"]}, added)
        row.update(timed(folder, rule, target, threads))
        if rule == "genre_similarity":  # it asks for the similarity job's request
            row.update(rule="similarity", job=rule)
        if extra is not None:
            if rule not in rules:
                continue  # a prerequisite of this setting's jobs
            row["extra"] = extra
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_root", type=Path)
    parser.add_argument("--users", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--density", default="qk", choices=["qk", "ml"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--rules", nargs="+", default=list(dense_plan.RULES), choices=dense_plan.RULES
    )
    parser.add_argument("--weibull-shapes", type=float, nargs="+", default=[0.5, 1, 2, 5, 10, 50])
    parser.add_argument("--gammas", type=float, nargs="+", default=[0, 0.25, 0.5, 0.75, 1])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--extras", nargs="+", default=[], choices=sorted(EXTRA_SETTINGS),
        help="time these opt-in settings beside the base (the rules they reach, dense_plan.EXTRAS)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    experiments = {"weibull_shapes": args.weibull_shapes, "gammas": args.gammas}
    rules = args.rules
    if args.extras:  # the rules the extras reach, the base and each extra in one sitting
        rules = [r for r in dense_plan.RULES if any(r in dense_plan.EXTRAS[e] for e in args.extras)]
    rows = [
        row
        for m in args.users
        for extra in [None, *args.extras]
        for row in measure(
            args.run_root, m, args.density, args.threads,
            [r for r in rules if extra is None or r in dense_plan.EXTRAS[extra]],
            experiments, args.resamples, extra,
        )
    ]  # fmt: skip
    machine = f"{cpu_model()}, {os.cpu_count()} cores, {args.threads} threads a job"
    record = {"machine": machine, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(record, indent=1))
    if len(set(args.users)) > 1:  # a fit needs two sizes
        base = {**record, "rows": [row for row in rows if "extra" not in row]}
        for rule in rules:
            print(rule, dense_plan.coefficients(base, rule))
        for extra in args.extras:
            for rule in dense_plan.EXTRAS[extra]:
                print(rule, extra, dense_plan.extra_coefficients({"extras": record}, rule, extra))


if __name__ == "__main__":
    main()
