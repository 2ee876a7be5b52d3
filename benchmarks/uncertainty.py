"""Benchmark of the bootstrap (``userfair.bootstrap.uncertainty``); results go to
docs/performance.md#bootstrap.

    python benchmarks/uncertainty.py [--resamples 1000] [--naive 5] [--device cpu]
                                     [--json results.json]

Input: the QK-video-sized synthetic data of benchmarks/measures.py (``synthetic(3514)``:
3,514 evaluated users, 6,423 items, k = 10); the similarities are computed once (as the
workflow's similarity files give them) and are not part of either timing.

- **fast**: ``bootstrap`` of all 18 measures for ``--resamples`` resamples (after a warm-up
  on 4 resamples that loads the compiled kernels), with the seconds of its steps;
- **naive**: for the first ``--naive`` of the same resamples, the resampled population is
  materialised (duplicated users as distinct rows, the similarity matrices gathered to
  N x N) and the 18 measures computed on it with vectorised code that leaves the copy
  pairs out (the library's own per-user, sparse envy and compiled UF routines, masked);
  seconds per resample, the total extrapolated to ``--resamples``, and the ratio;
- **lower bound** of any route that recomputes the measures per resample: one ``evaluate``
  of the full data (similarities given) times ``--resamples``.

Both routes run in the same process, one after the other; the largest relative difference
between their values on the naive resamples is printed (they must agree).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
K = 10
EPSILON = 0.05


def machine() -> dict:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    import numba
    import scipy

    return {
        "nproc": int(subprocess.run(["nproc"], capture_output=True, text=True).stdout),
        "cpu": model,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
    }


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def naive(inputs, sims, sim_uf, weights_row) -> dict[str, float]:
    """The 18 measures of one resample on its materialised population (copy pairs out)."""
    from userfair.formulas import _kernels, effectiveness, fairness, spread
    from userfair.measures import EFF
    from userfair.measures import NAMES as KEYS

    origin = np.repeat(np.arange(len(inputs.users)), weights_row)
    n = len(origin)
    topk, relevant = inputs.topk[origin], inputs.relevant[origin]
    out = {}
    per_user = effectiveness.per_user(topk, relevant, K)
    for name in EFF:
        out[name] = float(per_user[name].mean())
    for name in ("P", "NDCG"):
        out[f"SD-{name}"] = spread.sd(per_user[name])
        out[f"Gini-{name}"] = spread.gini(per_user[name])
    distinct = origin[:, None] != origin[None, :]  # (N, N): False on the copy pairs
    ordered = int(distinct.sum())
    for kind, label in (("cos", "Cos"), ("jacc", "Jacc")):
        sim = sims[kind].sim[np.ix_(origin, origin)]
        for name in ("P", "NDCG"):
            gap = np.abs(per_user[name][:, None] - per_user[name][None, :])
            out[f"PUF-{name}-{label}"] = float((sim * gap)[distinct].sum() / ordered)
    # envy: the sparse counts of evaluate's envy, copy pairs masked out
    denominator = fairness.envy_denominators(relevant, K, "precision")
    items, local = fairness.recommended_items(topk)
    relevant_rec = relevant[:, items]
    own = effectiveness.hits(local, relevant_rec, K).sum(axis=1) / denominator
    counts = (relevant_rec @ fairness.lists_matrix(local, len(items)).T).tocsr()
    rows = np.repeat(np.arange(n), np.diff(counts.indptr))
    keep = origin[rows] != origin[counts.indices]
    gain = np.maximum(counts.data[keep] / denominator[rows[keep]] - own[rows[keep]], 0.0)
    max_envy = np.zeros(n)
    np.maximum.at(max_envy, rows[keep], gain)
    out["ME"] = float(gain.sum() / ordered)
    out["MME"] = float(max_envy.mean())
    out["PEU"] = float((max_envy > EPSILON).mean())
    # UF: threshold over the resampled pairs, then the compiled pass of evaluate's UF
    uf_sim = sim_uf[np.ix_(origin, origin)]
    mean = np.where(distinct, uf_sim, 0.0).sum() / ordered
    sd = np.sqrt(np.where(distinct, (uf_sim - mean) ** 2, 0.0).sum() / ordered)
    uf_sim[~distinct] = -np.inf  # never similar
    unit = fairness.unit_item_columns(inputs.train, items)
    rows_csr = unit.tocsr()
    item_cos = _kernels.item_cosines(
        unit.indptr,
        unit.indices,
        unit.data,
        rows_csr.indptr,
        rows_csr.indices,
        rows_csr.data,
        len(items),
    )
    total = _kernels.similar_pairs_distance(uf_sim, mean + sd, local, item_cos, K) / K**2
    out["UF"] = float(np.log(total) / np.log(ordered / 2)) if total > 0 else float("nan")
    return {key: out[key] for key in KEYS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--naive", type=int, default=5, help="naive resamples to time (5)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    args = parser.parse_args()

    from measures import QK, synthetic
    from userfair.bootstrap import uncertainty
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs
    from userfair.formulas import _kernels
    from userfair.measures import NAMES as KEYS
    from userfair.similarity import pairwise

    _kernels.use_job_cores()
    info = {"machine": machine(), "load_before": load()}
    train, test, topk = synthetic(QK["evaluated"])
    inputs = load_inputs(train, test, topk, k=K)
    m = len(inputs.users)
    sims = uncertainty.dataset_similarities(inputs)
    sim_uf = pairwise.uf_similarity(sims["jacc"].raw(), None, 1.0)
    print(f"QK-video-sized input: {m} evaluated users, {len(inputs.items)} items, k = {K}")
    print(f"machine: {info['machine']}; load before: {info['load_before']}")

    uncertainty.bootstrap(
        inputs, uncertainty.resample_weights(m, 4, 99), similarities=sims, k=K, device=args.device
    )  # fmt: skip  (warm-up)
    start = time.perf_counter()
    weights = uncertainty.resample_weights(m, args.resamples, args.seed)
    frame = uncertainty.bootstrap(inputs, weights, similarities=sims, k=K, device=args.device)
    fast = time.perf_counter() - start
    info["load_after_fast"] = load()
    print(
        f"fast: {args.resamples} resamples of all 18 measures in {fast:.2f} s "
        f"({1000 * fast / args.resamples:.1f} ms per resample); load {info['load_after_fast']}"
    )
    for step, seconds in frame.attrs["seconds"].items():
        print(f"    {step:<42} {seconds:7.2f} s")

    per_resample, worst = [], 0.0
    for b in range(args.naive):
        start = time.perf_counter()
        values = naive(inputs, sims, sim_uf, weights[b])
        per_resample.append(time.perf_counter() - start)
        for key in KEYS:
            a, c = frame.loc[b, key], values[key]
            if np.isfinite(a) or np.isfinite(c):
                worst = max(worst, abs(a - c) / max(abs(c), 1e-300))
    info["load_after_naive"] = load()
    naive_mean = float(np.mean(per_resample))
    extrapolated = naive_mean * args.resamples
    print(
        f"naive: {args.naive} resamples, {naive_mean:.3f} s per resample "
        f"(min {min(per_resample):.3f}, max {max(per_resample):.3f}); "
        f"{args.resamples} extrapolated: {extrapolated:.0f} s; load {info['load_after_naive']}"
    )
    print(f"ratio naive / fast: {extrapolated / fast:.0f}x")
    start = time.perf_counter()
    evaluate(inputs, k=K, similarities=sims, device=args.device)
    once = time.perf_counter() - start
    print(
        f"lower bound of any recompute-per-resample route: evaluate() on the full data "
        f"(similarities given) {once:.3f} s, x {args.resamples} = {once * args.resamples:.0f} s "
        f"({once * args.resamples / fast:.0f}x the fast route)"
    )
    print(f"largest relative difference fast vs naive over {args.naive} resamples: {worst:.1e}")
    info.update(
        users=m,
        items=len(inputs.items),
        resamples=args.resamples,
        fast_s=fast,
        fast_steps=frame.attrs["seconds"],
        naive_per_resample_s=per_resample,
        naive_extrapolated_s=extrapolated,
        ratio=extrapolated / fast,
        max_rel_diff=worst,
        evaluate_once_s=once,
    )
    if args.json:
        args.json.write_text(json.dumps(info, indent=2) + "\n")


if __name__ == "__main__":
    main()
