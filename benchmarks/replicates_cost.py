"""What the measures of R training replicates cost against one replicate's; results go to
docs/performance.md#replicates-cost.

    python benchmarks/replicates_cost.py [--users 1000] [--models 3] [--resamples 200]
                                         [--replicates 1 3 5] [--repeats 3]
                                         [--json out.json]

Input: the synthetic data of benchmarks/measures.py (``synthetic(--users)``, QK-video's
shape scaled), one split; ``--models`` models, each replicate of each model its own lists
(the synthetic lists with every user's ranks shuffled by the replicate's seed: other
values, the same sizes). The similarities are computed once per dataset, as the
workflow's similarity files are (not timed: a fixed split builds them once whatever R).

Per R, the library calls of the replicate stage's jobs, in one process, kernels warmed up:

- ``measures``: ``evaluate`` of every replicate of every model (rules measures and
  replicate_measures);
- ``bootstrap``: ``bootstrap`` over ``--resamples`` resamples of every replicate of every
  model, the same weights (rules uncertainty and replicate_uncertainty);
- ``tables``: ``userfair.bootstrap.replicates``' ``stack``, ``variance``, ``summary``,
  ``significance`` and ``tau_intervals`` over the R replicates of the models (rule
  table_replicates' inference).

Each R is timed ``--repeats`` times, interleaved (1, 3, 5, 1, 3, 5, ...), and the fastest
repeat counts (a shared machine's load only adds time). It prints the seconds of each
part and ``ratio`` = total(R) / (R x total(1)): at most 1 is the issue's bound (the
measures of R replicates cost at most R times one replicate's).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
K = 10


def shuffled_ranks(topk, seed: int):
    """``topk`` with every user's ranks permuted by ``seed`` (seed 0: as given)."""
    if seed == 0:
        return topk
    rng = np.random.default_rng(seed)
    out = topk.sort_values(["user_id", "rank"]).reset_index(drop=True)
    ranks = np.argsort(rng.random((len(out) // K, K)), axis=1) + 1
    out["rank"] = ranks.ravel()
    return out


def run(r, data, sims, weights, models, resamples) -> dict[str, float]:
    """The seconds of the measures, bootstrap and tables of ``r`` replicates."""
    from userfair.bootstrap import replicates, uncertainty
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs
    from userfair.measures import NAMES

    train, test, topk = data
    seconds = {"measures": 0.0, "bootstrap": 0.0, "tables": 0.0}
    frames, points = {}, {}
    for model in range(models):
        per_frame, per_point = [], []
        for replicate in range(r):
            inputs = load_inputs(
                train, test, shuffled_ranks(topk, 1 + 100 * model + replicate), k=K
            )
            start = time.perf_counter()
            values = evaluate(inputs, k=K, similarities=sims)
            seconds["measures"] += time.perf_counter() - start
            start = time.perf_counter()
            per_frame.append(uncertainty.bootstrap(inputs, weights, similarities=sims, k=K))
            seconds["bootstrap"] += time.perf_counter() - start
            per_point.append({m: values[m] for m in NAMES})
        frames[f"M{model}"], points[f"M{model}"] = per_frame, per_point
    start = time.perf_counter()
    resampled, full = {}, {}
    for model in frames:
        resampled[model], full[model] = replicates.stack(frames[model], points[model])
    replicates.variance(resampled, full)
    replicates.summary(resampled, full)
    replicates.significance(resampled, full)
    replicates.tau_intervals(resampled, full, seed=0)
    seconds["tables"] = time.perf_counter() - start
    seconds["total"] = sum(seconds.values())
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=1000, help="evaluated users (1000)")
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--replicates", type=int, nargs="+", default=[1, 3, 5])
    parser.add_argument("--repeats", type=int, default=3, help="timings per R; the fastest counts")
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    args = parser.parse_args()

    from measures import synthetic
    from uncertainty import load, machine
    from userfair.bootstrap import uncertainty
    from userfair.files.inputs import load_inputs
    from userfair.formulas import _kernels

    _kernels.use_job_cores()
    info = {"machine": machine(), "load_before": load(), "args": vars(args) | {"json": None}}
    data = synthetic(args.users)
    inputs = load_inputs(*data, k=K)
    sims = uncertainty.dataset_similarities(inputs)
    weights = uncertainty.resample_weights(len(inputs.users), args.resamples, 0)
    print(f"{len(inputs.users)} evaluated users, {len(inputs.items)} items, k = {K}, "
          f"{args.models} models, {args.resamples} resamples")  # fmt: skip
    print(f"machine: {info['machine']}; load before: {info['load_before']}")
    run(1, data, sims, weights[:4], 1, 4)  # warm-up: the compiled kernels
    results, every = {}, {r: [] for r in args.replicates}
    for _ in range(args.repeats):
        for r in args.replicates:
            every[r].append(run(r, data, sims, weights, args.models, args.resamples))
            print(
                f"R = {r}: " + ", ".join(f"{k} {v:.2f} s" for k, v in every[r][-1].items())
                + f"; load {load()}"
            )  # fmt: skip
    for r in args.replicates:
        results[r] = min(every[r], key=lambda seconds: seconds["total"])
    one = results.get(1)
    if one:
        for r, seconds in results.items():
            print(
                f"R = {r}: fastest total {seconds['total']:.2f} s, "
                f"total / (R x total(1)) = {seconds['total'] / (r * one['total']):.3f}"
            )
    info["results"] = {str(r): s for r, s in results.items()}
    info["every"] = {str(r): s for r, s in every.items()}
    info["load_after"] = load()
    if args.json:
        args.json.write_text(json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
