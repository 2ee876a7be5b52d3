"""Coverage of the intervals over both sources (``userfair.bootstrap.replicates``) by simulation;
results go to docs/performance.md#replicates-coverage.

    python benchmarks/replicates_coverage.py [--experiments 500] [--users 200]
                                             [--resamples 400] [--json out.json]

Each simulated experiment: two models A and B with the same true value 0 are trained R
times on the same m users. The per-user score of user u in replicate r of a model is
``s_r + a_u + e_ur``: a seed effect s_r ~ N(0, sigma_seed^2) per replicate, a user effect
a_u ~ N(0, 1) shared by both models (the users are paired) and an interaction
e_ur ~ N(0, 0.3^2). The measure is the mean over the users; its users-only standard error
is about 1 / sqrt(m), and ``ratio`` = sigma_seed sqrt(m) says how large the seed effect is
relative to it. ``nested``: every replicate draws its own m users (a split redrawn per
replicate), with their own bootstrap weights.

Per cell (R, ratio, design) the share of experiments whose 95 % interval of A holds 0:

- ``users, one run``: today's interval, the users-only percentile bootstrap of replicate 0;
- ``users, mean of R``: the users-only percentile bootstrap of the mean over the R
  replicates (the seeds ignored);
- ``two-level percentile``: the percentile interval of 2,000 two-level draws
  (``replicates.draws``, replicate level rescaled by sqrt(R / (R - 1)));
- ``two-level t``: the library's interval (``replicates.summary``: the two-level variance
  with Student's t and Welch-Satterthwaite degrees of freedom);

and ``A = B rejected``: the share of experiments where the two-level paired test of A
against B (true difference 0) has p < 0.05 (nominal 5 %), beside the users-only paired
bootstrap test of replicate 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from userfair.bootstrap import inference, replicates
from userfair.bootstrap.uncertainty import resample_weights

LEVEL = 0.95
INTERACTION = 0.3
CELLS = [(r, ratio, False) for r in (3, 5, 10) for ratio in (0.0, 1.0, 2.0, 4.0)] + [
    (r, ratio, True) for r in (3, 5) for ratio in (1.0, 4.0)
]


def experiment(rng, replicates_, ratio, m, resamples, nested, seed):
    """(y_a, full_a, y_b, full_b): the (R, B) user-resampled values and R full-data
    values of models A and B in one simulated experiment."""
    sigma_seed = ratio / np.sqrt(m)
    users = rng.normal(size=(m, replicates_) if nested else (m, 1))
    out = []
    for _ in range(2):
        scores = (
            rng.normal(0.0, sigma_seed, size=replicates_)
            + users
            + rng.normal(0.0, INTERACTION, size=(m, replicates_))
        )
        out.append(scores)
    if nested:
        weights = [resample_weights(m, resamples, seed * 1000 + r) for r in range(replicates_)]
        ys = [np.stack([w @ s[:, r] / m for r, w in enumerate(weights)]) for s in out]
    else:
        weights = resample_weights(m, resamples, seed)
        ys = [(weights @ s / m).T for s in out]
    return ys[0], out[0].mean(axis=0), ys[1], out[1].mean(axis=0)


def cell(experiments, replicates_, ratio, nested, m, resamples, seed=0, n_draws=2000):
    """Coverage shares (and the null rejection rates) of one cell."""
    rng = np.random.default_rng([seed, replicates_, int(ratio * 100), int(nested)])
    hits = {"users, one run": 0, "users, mean of R": 0, "two-level percentile": 0}
    hits["two-level t"] = 0
    rejected = {"two-level": 0, "users, one run": 0}
    for e in range(experiments):
        y_a, full_a, y_b, full_b = experiment(rng, replicates_, ratio, m, resamples, nested, e)
        low, high = inference.percentile_interval(y_a[0], LEVEL)
        hits["users, one run"] += low <= 0 <= high
        low, high = inference.percentile_interval(y_a.mean(axis=0), LEVEL)
        hits["users, mean of R"] += low <= 0 <= high
        rows, users = replicates.draw_indices(replicates_, resamples, n_draws, e, nested)
        low, high = inference.percentile_interval(replicates.draws(y_a, rows, users), LEVEL)
        hits["two-level percentile"] += low <= 0 <= high
        low, high = replicates.t_interval(replicates.moments(y_a, full_a, nested), LEVEL)
        hits["two-level t"] += low <= 0 <= high
        d = replicates.moments(y_b - y_a, full_b - full_a, nested)
        rejected["two-level"] += replicates.t_p_value(d) < 1 - LEVEL
        rejected["users, one run"] += inference.p_value(y_b[0] - y_a[0]) < 1 - LEVEL
    out = {key: value / experiments for key, value in hits.items()}
    out.update({f"A = B rejected, {key}": value / experiments for key, value in rejected.items()})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=500)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = []
    for r, ratio, nested in CELLS:
        result = cell(args.experiments, r, ratio, nested, args.users, args.resamples)
        rows.append({"R": r, "ratio": ratio, "design": "nested" if nested else "shared users"})
        rows[-1].update(result)
        print(
            f"R={r:2d} ratio={ratio:3.1f} {rows[-1]['design']:12s} "
            + " ".join(f"{key}={value:.3f}" for key, value in result.items()),
            flush=True,
        )
    seconds = time.perf_counter() - started
    meta = {
        "experiments": args.experiments,
        "users": args.users,
        "resamples": args.resamples,
        "seconds": round(seconds, 1),
        "load": os.getloadavg(),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
    }
    print(json.dumps(meta))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"meta": meta, "cells": rows}, handle, indent=1)


if __name__ == "__main__":
    sys.exit(main())
