"""Cost of the per-user decomposition (userfair.decomposition.decompose) against the measures
themselves (userfair.evaluate, dense route) on the same inputs and the same similarity matrices;
results go to docs/performance.md ("Per-user decomposition").

    python benchmarks/decompose.py [--evaluated 3514] [--repeat 3] [--block-size 2048]
    python benchmarks/decompose.py --route stream --evaluated 100000 [--density qk]

Synthetic QK-video-sized input (benchmarks/measures.py's generator: 3,514 evaluated users
of 4,656, 6,423 items, k = 10). The similarities are computed once and given to both, so
both times exclude them (they are reported on their own). Each side runs ``--repeat``
times, alternating, after one untimed warm-up of each (numba compilation); the best time
and the median of each are reported, with their ratios, and the decomposition's time per
part (best of ``--repeat``).

``--route stream``: benchmarks/streaming.py's synthetic input (every user evaluated,
``--density`` qk or ml) and the streamed route on both sides, each in a fresh subprocess
(so that each peak RSS is its own): the measures (``streaming.pass_one`` +
``stream_evaluate``, what ``evaluate(route="stream")`` runs) and the decomposition
(``pass_one`` + ``decompose_stream.stream_decompose``, what ``userfair users --route stream``
runs); wall and CPU seconds (``time.process_time``, all threads) of each, pass one apart.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from measures import K, peak_rss_gb, synthetic  # noqa: E402


def parts(inputs, sims, block_size: int) -> dict[str, float]:
    """Seconds of each part of the decomposition, run one by one."""
    from userfair.decomposition import decompose as dec
    from userfair.decomposition import decompose_columns
    from userfair.formulas import effectiveness, spread
    from userfair.similarity import pairwise

    seconds = {}

    def timed(name, function, *args, **kwargs):
        start = time.perf_counter()
        value = function(*args, **kwargs)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
        return value

    scores = timed("P, NDCG", effectiveness.per_user, inputs.topk, inputs.relevant, K)
    for name in ("P", "NDCG"):
        for kind in ("cos", "jacc"):
            timed("PUF x4", dec.puf_parts, scores[name], sims[kind].sim, block_size)
        timed("Gini, SD", spread.gini_parts, scores[name])
        timed("Gini, SD", spread.sd_share, scores[name])
    sim_uf = timed("UF", pairwise.uf_similarity, sims["jacc"].raw(), None, 1.0).copy()
    timed("UF", dec.uf_parts, inputs.topk, inputs.train, sim_uf, K, block_size)
    envy = (inputs.topk, inputs.relevant, K, 0.05, "precision", block_size)
    timed("ME, MME, PEU", dec.envy_parts, *envy)
    timed("attributes", decompose_columns.attributes, inputs, sims["cos"].sim)
    return seconds


def stream_one(m: int, density: str, what: str, block_size: int) -> dict:
    """One streamed run in this process: ``what`` is ``measures`` or ``decompose``."""
    import resource

    from streaming import DENSITIES
    from streaming import synthetic as synthetic_stream
    from userfair.decomposition import decompose_columns, decompose_stream
    from userfair.streamed import streaming

    inputs = synthetic_stream(m, DENSITIES[density])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    clock, cpu = time.perf_counter(), time.process_time()
    rows = inputs.train_of_evaluated()
    stats = streaming.pass_one(rows, users=inputs.users, block_size=block_size)
    one_wall, one_cpu = time.perf_counter() - clock, time.process_time() - cpu
    if what == "measures":
        result = streaming.stream_evaluate(inputs, k=K, stats=stats, block_size=block_size)
        sums = {key: result[key] for key in decompose_columns.SHARES}
    else:
        frame = decompose_stream.stream_decompose(inputs, k=K, stats=stats, block_size=block_size)
        sums = {key: float(frame[key].sum()) for key in decompose_columns.SHARES}
    return {
        "what": what,
        "evaluated": m,
        "density": density,
        "train_items_per_user": float(rows.getnnz(axis=1).mean()),
        "wall_s": time.perf_counter() - clock,
        "cpu_s": time.process_time() - cpu,
        "pass_one_wall_s": one_wall,
        "pass_one_cpu_s": one_cpu,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "peak_rss_before_gib": before,
        "sums": sums,
        "load": os.getloadavg(),
    }


def stream_main(args) -> None:
    """Both streamed runs, each in a fresh subprocess; the column sums compared."""
    import subprocess

    runs = {}
    for what in ("measures", "decompose"):
        command = [sys.executable, __file__, "--only", what, "--evaluated", str(args.evaluated)]
        command += ["--density", args.density, "--block-size", str(args.block_size)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        runs[what] = json.loads(done.stdout)
    measures, decomposition = runs["measures"]["sums"], runs["decompose"]["sums"]
    report = {
        **runs,
        "ratio_wall": runs["decompose"]["wall_s"] / runs["measures"]["wall_s"],
        "ratio_cpu": runs["decompose"]["cpu_s"] / runs["measures"]["cpu_s"],
        "largest_sum_error": max(
            abs(decomposition[key] - measures[key])
            for key in measures
            if np.isfinite(measures[key])
        ),
    }
    print(json.dumps(report, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluated", type=int, default=3514)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--block-size", type=int, default=2048)
    parser.add_argument("--route", default="dense", choices=["dense", "stream"])
    parser.add_argument("--density", default="qk", choices=["qk", "ml"])
    parser.add_argument("--only", choices=["measures", "decompose"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        print(json.dumps(stream_one(args.evaluated, args.density, args.only, args.block_size)))
        return
    if args.route == "stream":
        stream_main(args)
        return

    from userfair.decomposition import decompose as dec
    from userfair.decomposition import decompose_columns
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs

    train, test, topk = synthetic(args.evaluated)
    inputs = load_inputs(train, test, topk, k=K)
    start = time.perf_counter()
    sims = dec.similarities_of(inputs, block_size=args.block_size)
    similarity_seconds = time.perf_counter() - start
    options = {"k": K, "block_size": args.block_size}

    def run_measures():
        return evaluate(inputs, similarities=dict(sims), device="cpu", route="dense", **options)

    def run_decompose():
        return dec.decompose(inputs, similarities=sims, **options)

    result, frame = run_measures(), run_decompose()  # warm-up: numba compiles once
    worst = 0.0
    for name in decompose_columns.SHARES:
        worst = max(worst, abs(frame[name].sum() - result[name]))
    times = {"measures": [], "decompose": []}
    for _ in range(args.repeat):
        for name, function in (("measures", run_measures), ("decompose", run_decompose)):
            start = time.perf_counter()
            value = function()
            times[name].append(time.perf_counter() - start)
            if name == "measures":
                result = value  # its seconds: a warm run's
    best = {name: min(values) for name, values in times.items()}
    median = {name: float(np.median(values)) for name, values in times.items()}
    runs = [parts(inputs, sims, args.block_size) for _ in range(args.repeat)]
    report = {
        "evaluated": len(inputs.users),
        "items": len(inputs.items),
        "train_items_per_user": float(frame.train_items.mean()),
        "similarities_s": similarity_seconds,
        "measures_s": best["measures"],
        "decompose_s": best["decompose"],
        "ratio": best["decompose"] / best["measures"],
        "median_measures_s": median["measures"],
        "median_decompose_s": median["decompose"],
        "median_ratio": median["decompose"] / median["measures"],
        "all_runs_s": times,
        "decompose_parts_best_s": {name: min(run[name] for run in runs) for name in runs[0]},
        "measures_parts_s": result["seconds"],
        "largest_sum_error": worst,
        "peak_rss_gb": peak_rss_gb(),
        "load": os.getloadavg(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
