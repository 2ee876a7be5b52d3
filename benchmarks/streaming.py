"""Benchmark of the streamed measures (userfair.streamed.streaming); results go to
docs/performance.md.

    python benchmarks/streaming.py [--sizes 10000 20000 50000 100000] [--density qk ml]
        [--dense-max 20000] [--parts 4] [--device cpu] [--json out.json]
        [--plot docs/figures/streaming_scaling.png]

Synthetic inputs where every user is evaluated (a per-user split): 20,000 items with
power-law popularity (1 / (rank + 10)^0.9, ranks shuffled); per user a log-normal number of
train interactions (sigma 0.8, at least 5) with mean about 20 (``qk``: QK-video / Last.fm
sparsity) or about 100 (``ml``: ML-20M), drawn by popularity (19 and 89 once repeated
draws are merged); about 25 % more items (at least one) held out as test; a list of
k = 10 distinct items drawn by popularity among the user's non-train items. The inputs are
built as index arrays (``userfair.files.inputs.Inputs``), so the timings are of the measures, not
of reading files.

Each (size, density, route) runs in a fresh subprocess, so that its peak RSS
(``resource.getrusage``) is its own; wall and CPU seconds (``time.process_time``, all
threads) are recorded, since the machine may be shared. ``stream``: pass one, then
``stream_evaluate`` with its stats (what ``evaluate(route="stream")`` runs: all 18 measures
in one process), then both passes again on the first of ``--parts`` balanced row ranges
(``userfair.streamed.stream_rows.ranges``): the job of a scatter over ``--parts`` jobs. ``sample``
(sizes from
``--sample-from`` on): only that one range, and the one-process time estimated from its
share of the work (``python -m userfair.workflow.scatter_plan out.json`` turns the largest
sampled row of ``--json`` into plan lines on N nodes). ``dense``: ``evaluate(route="dense")``,
where its m x m matrices fit
(``--dense-max``), as the naive comparison. ``--device`` (default ``cpu``: the numba
kernels) is where the streamed passes run: ``cuda`` for a GPU, ``torch-cpu`` for the same
torch code on the CPU; the dense comparison always runs on ``cpu``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

K = 10
ITEMS = 20_000
DENSITIES = {"qk": 20.0, "ml": 100.0}


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB -> GiB (Linux)


def synthetic(m: int, mean_train: float, seed: int = 0, n_items: int = ITEMS):
    """``userfair.files.inputs.Inputs`` of ``m`` evaluated users (see the module docstring)."""
    from userfair.files.inputs import Inputs

    rng = np.random.default_rng(seed)
    popularity = 1.0 / (np.arange(n_items) + 10.0) ** 0.9
    popularity = rng.permutation(popularity / popularity.sum())
    sigma = 0.8
    train_size = np.maximum(5, rng.lognormal(np.log(mean_train) - sigma**2 / 2, sigma, m))
    test_size = np.maximum(1, np.round(0.25 * train_size))
    draws = (train_size + test_size).astype(np.int64)
    users = np.repeat(np.arange(m, dtype=np.int64), draws)
    items = rng.choice(n_items, size=len(users), p=popularity)
    keys, first = np.unique(users * n_items + items, return_index=True)  # duplicates once
    users, items = keys // n_items, keys % n_items
    # a random share of each user's distinct items goes to test, at least one
    order = np.lexsort((rng.random(len(users)), users))
    users, items = users[order], items[order]
    start = np.r_[0, np.flatnonzero(users[1:] != users[:-1]) + 1]
    rank = np.arange(len(users)) - np.repeat(start, np.diff(np.r_[start, len(users)]))
    is_test = rank < test_size[users]
    train = sp.csr_matrix(
        (np.ones((~is_test).sum()), (users[~is_test], items[~is_test])), shape=(m, n_items)
    )
    relevant = sp.csr_matrix(
        (np.ones(is_test.sum()), (users[is_test], items[is_test])), shape=(m, n_items)
    )
    train.sort_indices()
    relevant.sort_indices()
    train_keys = np.sort(users[~is_test] * n_items + items[~is_test])
    # lists: the first K distinct candidates (drawn by popularity) outside the train items
    topk = np.empty((m, K), dtype=np.int64)
    for lo in range(0, m, 20_000):
        hi = min(lo + 20_000, m)
        cand = rng.choice(n_items, size=(hi - lo, 6 * K), p=popularity)
        row_keys = np.arange(lo, hi, dtype=np.int64)[:, None] * n_items + cand
        found = np.searchsorted(train_keys, row_keys).clip(max=len(train_keys) - 1)
        valid = train_keys[found] != row_keys
        order = np.argsort(cand, axis=1, kind="stable")  # first occurrence of each item
        ranked = np.take_along_axis(cand, order, axis=1)
        repeat = np.zeros_like(valid)
        repeat[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
        np.put_along_axis(valid, order, np.take_along_axis(valid, order, 1) & ~repeat, 1)
        for row in range(hi - lo):
            chosen = cand[row][valid[row]][:K]
            while len(chosen) < K:  # rare: top up with a random unseen item
                extra = rng.integers(n_items)
                key = (lo + row) * n_items + extra
                if (
                    extra not in chosen
                    and train_keys[min(np.searchsorted(train_keys, key), len(train_keys) - 1)]
                    != key
                ):
                    chosen = np.r_[chosen, extra]
            topk[lo + row] = chosen
    ids = np.char.add("u", np.char.zfill(np.arange(m).astype(str), 7))  # sorted = index order
    return Inputs(
        users=ids,
        items=np.char.add("i", np.char.zfill(np.arange(n_items).astype(str), 6)),
        train=train,
        train_rows=np.arange(m, dtype=np.int64),
        relevant=relevant,
        topk=topk,
        genres=None,
    )


def run_stream(inputs, parts: int, device: str) -> dict:
    """Pass one, then ``stream_evaluate`` with its stats (one process, one range: what
    ``evaluate(route="stream")`` runs), then both passes on the first of ``parts`` balanced
    ranges alone: the job of a scatter."""
    from userfair.streamed import stream_rows, streaming

    rows = inputs.train_of_evaluated()
    clock, cpu = time.perf_counter(), time.process_time()
    stats = streaming.pass_one(rows, users=inputs.users, device=device)
    result = streaming.stream_evaluate(inputs, k=K, stats=stats, device=device)
    total, cpu = time.perf_counter() - clock, time.process_time() - cpu
    cuts = stream_rows.ranges(rows, parts)
    a, b = cuts[0]
    one = streaming.pass_one(rows, a, b, users=inputs.users, device=device)
    two = streaming.pass_two(inputs, stats, a, b, k=K, device=device)
    return {
        "measures": {
            key: value for key, value in result.items() if key not in ("seconds", "conventions")
        },  # fmt: skip
        "seconds": result["seconds"],
        "evaluate_s": total,
        "cpu_s": cpu,
        "ranges": cuts,
        "range_pass_one_s": one.seconds,
        "range_pass_two_s": two.seconds_pairs + two.seconds_uf_setup + two.seconds_envy,
        "range_pass_two_parts_s": [two.seconds_pairs, two.seconds_uf_setup, two.seconds_envy],
        "full_pass_one_s": stats.seconds,
        "sharing_pairs": stats.sharing_pairs,
        "pairs": stats.pairs,
        "similar_pairs": two.uf_similar_pairs,
        "cos_range": stats.cos_range,
        "jacc_range": stats.jacc_range,
    }


def run_sample(inputs, parts: int, device: str) -> dict:
    """Both passes on the first of ``parts`` balanced ranges only (the job of a scatter over
    ``parts`` jobs), for sizes too slow to run whole here. Pass two runs with the range's
    own pass-one stats stretched to all rows (a timing stand-in: its threshold and ranges
    are those of the sample), so only its time is meaningful."""
    import dataclasses

    from userfair.streamed import stream_rows, streaming

    rows = inputs.train_of_evaluated()
    work = stream_rows.row_work(rows)
    cuts = stream_rows.ranges(rows, parts)
    a, b = cuts[0]
    clock, cpu = time.perf_counter(), time.process_time()
    one = streaming.pass_one(rows, a, b, users=inputs.users, device=device)
    stand_in = dataclasses.replace(one, start=0, stop=one.m)
    two = streaming.pass_two(inputs, stand_in, a, b, k=K, device=device)
    total, cpu = time.perf_counter() - clock, time.process_time() - cpu
    share = float(work[a:b].sum() / work.sum())
    return {
        "ranges": cuts,
        "sample_share": share,
        "range_s": total,
        "range_cpu_s": cpu,
        "range_pass_one_s": one.seconds,
        "range_pass_two_parts_s": [two.seconds_pairs, two.seconds_uf_setup, two.seconds_envy],
        "sample_sharing_pairs": one.sharing_pairs,
        "pairs": one.pairs,
        # one process: the range's pair work scaled by the work share, setup once
        "evaluate_s": (total - two.seconds_uf_setup) / share + two.seconds_uf_setup,
        "cpu_s": cpu / share,
        "estimated": True,
    }


def one_run(size: int, density: str, route: str, parts: int, device: str = "cpu") -> dict:
    clock = time.perf_counter()
    inputs = synthetic(size, DENSITIES[density], seed=size)
    generated = time.perf_counter() - clock
    rows = inputs.train_of_evaluated()
    item_degrees = np.bincount(rows.indices, minlength=ITEMS).astype(np.float64)
    out = {
        "size": size,
        "density": density,
        "route": route,
        "device": device if route != "dense" else "cpu",
        "train_interactions": int(rows.nnz),
        "train_per_user": rows.nnz / size,
        "recommended_items": int(len(np.unique(inputs.topk))),
        "item_visits": float((item_degrees * (item_degrees - 1) / 2).sum()),
        "generate_s": generated,
        "rss_before_gib": peak_rss_gib(),
    }
    if route in ("stream", "sample"):
        if device != "cpu":  # torch's import and CUDA start, not timed as the measures'
            from userfair.engine._backend import resolve

            resolve(device)
        result = (run_stream if route == "stream" else run_sample)(inputs, parts, device)
        out["total_s"] = result["evaluate_s"]
        out["peak_rss_gib"] = peak_rss_gib()  # the scatter sample holds no more than this
    else:
        from userfair.evaluate import evaluate

        clock, cpu = time.perf_counter(), time.process_time()
        result = evaluate(inputs, k=K, device="cpu", route="dense")
        out["cpu_s"] = time.process_time() - cpu
        result = {"measures": {k: v for k, v in result.items() if k not in ("seconds",
                                                                              "conventions")},
                  "seconds": result["seconds"]}  # fmt: skip
        out["total_s"] = time.perf_counter() - clock
        out["peak_rss_gib"] = peak_rss_gib()
    out.update(result)
    return out


def machine() -> dict:
    model = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if "model name" in line),
        platform.processor(),
    )
    return {
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "cpu": model,
        "load": os.getloadavg(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    styles = {("stream", "qk"): "o-", ("stream", "ml"): "s-", ("dense", "qk"): "o--",
              ("dense", "ml"): "s--"}  # fmt: skip
    labels = {"qk": "~20 train/user", "ml": "~90 train/user"}
    panels = (
        ("total_s", "wall seconds (shared machine: see load)"),
        ("cpu_s", "CPU seconds, all threads"),
        ("peak_rss_gib", "peak RSS (GiB)"),
    )
    for (route, density), style in styles.items():
        same = [
            r
            for r in rows
            if r["density"] == density
            and r.get("device", "cpu") == "cpu"  # the CPU runs (a GPU's would need own lines)
            and (r["route"] == route or (route == "stream" and r["route"] == "sample"))
        ]
        same.sort(key=lambda r: r["size"])
        if not same:
            continue
        size = [r["size"] for r in same]
        label = f"{route}, {labels[density]}"
        for axis, (key, _) in zip(axes, panels):
            line = axis.plot(size, [r[key] for r in same], style, label=label)[0]
            estimated = [r for r in same if r["route"] == "sample"]
            if estimated:
                axis.plot([r["size"] for r in estimated], [r[key] for r in estimated], "o",
                          mfc="white", color=line.get_color(), ms=10,
                          label=f"{label}: estimated from one range")  # fmt: skip
    for axis, (_, title) in zip(axes, panels):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("evaluated users")
        axis.set_title(title, fontsize=10)
        axis.grid(True, which="both", alpha=0.3)
    axes[0].axhline(600, color="grey", lw=0.8, ls=":")
    axes[2].axhline(4, color="grey", lw=0.8, ls=":")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 20_000, 50_000, 100_000])
    parser.add_argument("--density", nargs="+", default=["qk", "ml"], choices=list(DENSITIES))
    parser.add_argument("--dense-max", type=int, default=20_000)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument(
        "--device", default="cpu", choices=["cpu", "cuda", "torch-cpu", "auto"],
        help="where the streamed passes run (cpu: the numba kernels; cuda: torch on the GPU)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument(
        "--sample-from", type=int, default=10**9,
        help="from this size on, time one range of --parts instead of the whole (estimate)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        size, density, route = args.one
        row = one_run(int(size), density, route, args.parts, args.device)
        print(json.dumps(row, default=float))
        return
    rows = []
    print(json.dumps(machine()))
    for density in args.density:
        for size in args.sizes:
            routes = ("stream", "dense") if size <= args.dense_max else ("stream",)
            if size >= args.sample_from:
                routes = ("sample",)
            for route in routes:
                try:
                    proc = subprocess.run(
                        [sys.executable, __file__, "--one", str(size), density, route,
                         "--parts", str(args.parts), "--device", args.device],
                        capture_output=True, text=True, timeout=args.timeout,
                    )  # fmt: skip
                except subprocess.TimeoutExpired:
                    print(f"{density} {size:>7} {route:<6} over {args.timeout} s", flush=True)
                    continue
                if proc.returncode:
                    print(proc.stderr[-3000:], file=sys.stderr)
                    continue
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                row["load_after"] = os.getloadavg()
                rows.append(row)
                print(
                    f"{density} {size:>7} {route:<6} {row['device']:<9} "
                    f"total {row['total_s']:8.1f} s  "
                    f"cpu {row['cpu_s']:8.1f} s  "
                    f"peak {row['peak_rss_gib']:5.2f} GiB  (before {row['rss_before_gib']:.2f})  "
                    f"load {row['load_after'][0]:.1f}",
                    flush=True,
                )
                if args.json:
                    previous = json.loads(args.json.read_text()) if args.json.exists() else {}
                    key = (size, density, route, row["device"])
                    runs = [r for r in previous.get("runs", []) if (r["size"], r["density"],
                            r["route"], r.get("device", "cpu")) != key] + [row]  # fmt: skip
                    args.json.write_text(json.dumps({"machine": machine(), "runs": runs},
                                                    indent=1, default=float))  # fmt: skip
    if args.plot:  # every run of the JSON file when given (several invocations add up)
        plot(json.loads(args.json.read_text())["runs"] if args.json else rows, args.plot)


if __name__ == "__main__":
    main()
