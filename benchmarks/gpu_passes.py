"""Timing table of the streamed pair passes on a GPU against the compiled CPU kernels
(docs/performance.md#gpu-passes): a short script for a machine with a CUDA GPU.

    python benchmarks/gpu_passes.py [--sizes 20000 100000] [--density qk ml]
        [--device cuda] [--budget 150] [--json gpu.json]

For each size and density, the synthetic input of ``benchmarks/streaming.py`` (built once),
then every streamed pair pass twice, on the CPU (``device="cpu"``: the numba kernels on all
cores) and on ``--device`` (torch: ``cuda``, or ``torch-cpu`` to try the script without a
GPU): pass one (``streaming.pass_one``), pass two (``streaming.pass_two``: PUF-Jacc's and
UF's pair loop, UF's item cosines, envy) and the cosine PUF by the items
(``puf_items.weighted_spread`` of the P and NDCG scores) and the per-user decomposition
(``decompose_stream.stream_parts``: ``userfair users`` streamed). Each route is warmed up first on
a tiny input (numba's compilation or cache load, CUDA's start: printed, not timed as the
passes'). The table gives the seconds of each step on both, the speed-up, and the largest
relative difference of the step's results (counts must be equal; sums to 1e-9). The
inputs run smallest first (both densities at each size); one that would start after
``--budget`` seconds is skipped (said so, with the command that runs it alone), so the
whole run stays within about 5 minutes on a data-centre GPU and a 16-core host (the
ML-like 100,000 users, the largest, take a few minutes on their own).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from streaming import DENSITIES, K, synthetic  # noqa: E402
from userfair.decomposition import decompose_stream  # noqa: E402
from userfair.engine._backend import binary_csr, resolve  # noqa: E402
from userfair.formulas import effectiveness  # noqa: E402
from userfair.similarity.registry import CosineBlocks  # noqa: E402
from userfair.streamed import puf_items, streaming  # noqa: E402

TIMES = {"seconds", "seconds_pairs", "seconds_uf_setup", "seconds_envy", "users_sha256"}


def difference(a, b) -> float:
    """The largest relative difference of two records (or arrays); inf when a count or a
    missing value differs."""
    if dataclasses.is_dataclass(a):
        worst = 0.0
        for field in dataclasses.fields(a):
            if field.name in TIMES:
                continue
            x, y = getattr(a, field.name), getattr(b, field.name)
            if not isinstance(x, float) or not isinstance(y, float):  # counts, settings
                worst = max(worst, 0.0 if x == y else math.inf)
            else:
                worst = max(worst, abs(x - y) / max(abs(y), 1e-300))
        return worst
    if isinstance(a, dict):
        return max(difference(a[name], b[name]) for name in b)
    a, b = np.asarray(a), np.asarray(b)  # relative to the entry, or to 1e-12 of the largest
    floor = max(1e-12 * float(np.max(np.abs(b), initial=0.0)), 1e-300)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), floor), initial=0.0))


def steps(inputs, device: str) -> dict:
    """Seconds and results of every pair pass of ``inputs`` on ``device``."""
    rows = inputs.train_of_evaluated()
    clock = time.perf_counter()
    stats = streaming.pass_one(rows, users=inputs.users, device=device)
    one_s = time.perf_counter() - clock
    sums = streaming.pass_two(inputs, stats, k=K, device=device)
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, K)
    scores = np.stack([per_user["P"], per_user["NDCG"]])
    unit = CosineBlocks(binary_csr(rows)).unit
    clock = time.perf_counter()
    spread = puf_items.weighted_spread(unit, scores, resolve(device))
    spread_s = time.perf_counter() - clock
    clock = time.perf_counter()
    shares = decompose_stream.stream_parts(inputs, stats, k=K, device=device)
    shares_s = time.perf_counter() - clock
    return {
        "pass one": (one_s, stats),
        "pass two: pairs (PUF-Jacc, UF)": (sums.seconds_pairs, sums),
        "pass two: UF's item cosines": (sums.seconds_uf_setup, None),
        "pass two: envy (ME, MME, PEU)": (sums.seconds_envy, None),
        "cosine PUF by the items": (spread_s, spread),
        "per-user decomposition (userfair users)": (shares_s, shares),
    }


def warm(device: str) -> float:
    clock = time.perf_counter()
    steps(synthetic(300, DENSITIES["qk"], seed=1), device)
    return time.perf_counter() - clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--density", nargs="+", default=["qk", "ml"], choices=list(DENSITIES))
    parser.add_argument("--device", default="cuda", choices=["cuda", "torch-cpu"])
    parser.add_argument("--budget", type=float, default=150.0, help="seconds; then skip")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    target = resolve(args.device)  # raises where torch or CUDA is missing
    import torch

    gpu = torch.cuda.get_device_name(target) if target.type == "cuda" else "none (torch on CPU)"
    print(
        f"host {platform.node()}, {os.cpu_count()} cores; GPU {gpu}; torch {torch.__version__}; "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    start = time.perf_counter()
    print(f"warm-up: cpu {warm('cpu'):.1f} s, {args.device} {warm(args.device):.1f} s")
    header = f"| density | users | step | cpu (numba) s | {args.device} s | speed-up | rel diff |"
    lines, rows = [header, "| --- | ---: | --- | ---: | ---: | ---: | ---: |"], []
    print("\n".join(lines), flush=True)
    for size in sorted(args.sizes):
        for density in args.density:
            if time.perf_counter() - start > args.budget:
                print(
                    f"| {density} | {size:,} | skipped: past the --budget of {args.budget} s; "
                    f"alone: --sizes {size} --density {density} |"
                )
                continue
            inputs = synthetic(size, DENSITIES[density], seed=size)
            on_cpu, on_device = steps(inputs, "cpu"), steps(inputs, args.device)
            for step, (cpu_s, expected) in on_cpu.items():
                device_s, found = on_device[step]
                diff = difference(found, expected) if expected is not None else math.nan
                rows.append(
                    {"density": density, "users": size, "step": step, "cpu_s": cpu_s,
                     "device_s": device_s, "max_rel_diff": diff}
                )  # fmt: skip
                line = (
                    f"| {density} | {size:,} | {step} | {cpu_s:.2f} | {device_s:.2f} | "
                    f"{cpu_s / max(device_s, 1e-9):.1f}x | {diff:.1e} |"
                )
                print(line, flush=True)
    print(f"total {time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"device": args.device, "gpu": gpu, "rows": rows}))
    bad = [r for r in rows if not r["max_rel_diff"] <= 1e-9 and not math.isnan(r["max_rel_diff"])]
    if bad:
        raise SystemExit(f"{len(bad)} step(s) differ from the CPU kernels beyond 1e-9: {bad}")


if __name__ == "__main__":
    main()
