"""Benchmark of the measures library; results go to docs/performance.md.

    python benchmarks/measures.py [--part a b c] [--sizes 1000 5000 20000] [--device cpu]

(a) a QK-video-sized synthetic input (4,656 users of whom 3,514 evaluated, 6,423 items,
    about 51,777 interactions, k = 10): seconds of the similarities and of each measure;
(b) the loop reference (tests/reference.py) against the library on 1,000 evaluated users:
    seconds (loop: one run; library: best of 5) and speed ratio per measure;
(c) 1k, 5k, 20k evaluated users (same shape as (a), scaled): seconds and peak memory, each
    size in a fresh process so that peak RSS is its own.
Synthetic data: power-law item popularity, log-normal user activity (>= 5 items), 20% of
each evaluated user's items held out as test, lists drawn by popularity (the first k distinct draws)
among the user's non-train items.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
QK = {"users": 4656, "evaluated": 3514, "items": 6423, "interactions": 51777}
K = 10


def synthetic(evaluated: int, seed: int = 0):
    """(train, test, topk) DataFrames shaped like QK-video, scaled to ``evaluated`` users."""
    rng = np.random.default_rng(seed)
    scale = evaluated / QK["evaluated"]
    n_users, n_items = round(QK["users"] * scale), round(QK["items"] * scale)
    mean_degree = QK["interactions"] / QK["users"]
    popularity = 1.0 / (np.arange(n_items) + 10.0) ** 0.9
    popularity = rng.permutation(popularity / popularity.sum())
    degrees = np.maximum(5, rng.lognormal(np.log(mean_degree) - 0.56, 1.0, n_users)).astype(int)
    users = np.repeat(np.arange(n_users), degrees)
    items = rng.choice(n_items, size=len(users), p=popularity)
    unseen = np.setdiff1d(np.arange(n_items), items)  # every item gets one interaction
    users = np.r_[users, rng.choice(n_users, len(unseen))]
    items = np.r_[items, unseen]
    pairs = np.unique(users.astype(np.int64) * n_items + items)
    users, items = pairs // n_items, pairs % n_items
    is_evaluated = np.zeros(n_users, bool)
    is_evaluated[rng.choice(n_users, evaluated, replace=False)] = True
    held_out = is_evaluated[users] & (rng.random(len(users)) < 0.2)
    first = np.r_[True, users[1:] != users[:-1]]  # each evaluated user tests its first item
    held_out |= is_evaluated[users] & first
    train_users, train_items = users[~held_out], items[~held_out]
    train_of = pd.Series(train_items).groupby(train_users).apply(np.asarray)
    evaluated_users = np.flatnonzero(is_evaluated)
    # Lists by popularity among the user's non-train items: the first K distinct candidates.
    candidates = rng.choice(n_items, size=(evaluated, 8 * K), p=popularity)
    lists = np.empty((evaluated, K), dtype=np.int64)
    for row, user in enumerate(evaluated_users):
        fresh = candidates[row][~np.isin(candidates[row], train_of.get(user, []))]
        _, first_seen = np.unique(fresh, return_index=True)
        chosen = fresh[np.sort(first_seen)][:K]
        while len(chosen) < K:  # rare: top up with random unseen items
            extra = rng.integers(n_items)
            if extra not in chosen and extra not in train_of.get(user, []):
                chosen = np.r_[chosen, extra]
        lists[row] = chosen
    name = np.char.add
    train = pd.DataFrame(
        {
            "user_id": name("u", train_users.astype(str)),
            "item_id": name("i", train_items.astype(str)),
        }
    )
    test = pd.DataFrame(
        {
            "user_id": name("u", users[held_out].astype(str)),
            "item_id": name("i", items[held_out].astype(str)),
        }
    )
    topk = pd.DataFrame(
        {
            "user_id": np.repeat(name("u", evaluated_users.astype(str)), K),
            "item_id": name("i", lists.ravel().astype(str)),
            "rank": np.tile(np.arange(1, K + 1), evaluated),
        }
    )
    return train, test, topk


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB -> GiB (Linux)


def run_library(inputs, device: str, block_size: int) -> dict:
    from userfair.evaluate import evaluate

    start = time.perf_counter()
    result = evaluate(inputs, k=K, block_size=block_size, device=device)
    result["total"] = time.perf_counter() - start
    return result


def part_a(device: str, block_size: int) -> dict:
    from userfair.files.inputs import load_inputs

    train, test, topk = synthetic(QK["evaluated"])
    inputs = load_inputs(train, test, topk, k=K)
    shape = {
        "users": int(inputs.train.shape[0]),
        "evaluated": len(inputs.users),
        "items": len(inputs.items),
        "interactions": len(train) + len(test),
    }
    run_library(inputs, device, block_size)  # warm-up (imports, page faults)
    result = run_library(inputs, device, block_size)
    print(f"(a) QK-video-sized input {shape}")
    for name, seconds in result["seconds"].items():
        print(f"    {name:<16} {seconds:8.4f} s")
    print(f"    {'TOTAL':<16} {result['total']:8.4f} s  (target <= 3 s)")
    return {"shape": shape, "seconds": result["seconds"], "total": result["total"]}


def part_b(device: str, block_size: int, users: int = 1000) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from userfair.files.inputs import load_inputs
    from userfair.formulas import effectiveness, fairness, spread
    from userfair.similarity import pairwise

    import reference as ref
    from measures_data import python_views

    train, test, topk = synthetic(users, seed=1)
    inputs = load_inputs(train, test, topk, k=K)
    lists, relevant, train_sets, all_train = python_views(inputs, train, test, topk, k=K)
    rows = inputs.train_of_evaluated()

    def timed(function, *args, repeat=1, **kwargs):
        """Value and best wall seconds over ``repeat`` calls."""
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            value = function(*args, **kwargs)
            best = min(best, time.perf_counter() - start)
        return value, best

    def library(function, *args, **kwargs):
        return timed(function, *args, repeat=5, **kwargs)

    opts = {"block_size": block_size, "device": device}
    eff, lib_eff = library(effectiveness.per_user, inputs.topk, inputs.relevant, K)
    eff_ref, ref_eff = timed(ref.effectiveness, lists, relevant, K)
    jacc, lib_jacc = library(pairwise.jaccard, rows, block_size)
    jacc_ref, ref_jacc = timed(ref.jaccard, train_sets)
    _, lib_cos = library(pairwise.cosine, rows, block_size)
    _, ref_cos = timed(ref.cosine, train_sets)
    rows_out = {
        "effectiveness": (ref_eff, lib_eff),
        "similarity-cos": (ref_cos, lib_cos),
        "similarity-jacc": (ref_jacc, lib_jacc),
        "SD-NDCG": (timed(ref.sd, eff_ref["NDCG"])[1], library(spread.sd, eff["NDCG"])[1]),
        "Gini-NDCG": (timed(ref.gini, eff_ref["NDCG"])[1], library(spread.gini, eff["NDCG"])[1]),
    }
    lib_envy, t_lib = library(fairness.envy, inputs.topk, inputs.relevant, K, **opts)
    ref_envy, t_ref = timed(ref.envy, lists, relevant, K)
    rows_out["ME, MME, PEU (one pass)"] = (t_ref, t_lib)
    # UF on the raw Jaccard (docs/method.md#uf)
    jacc_raw = pairwise.jaccard(rows, block_size, normalise=False)
    lib_uf, t_lib = library(fairness.uf, inputs.topk, inputs.train, jacc_raw, K, **opts)
    ref_uf, t_ref = timed(ref.uf, lists, all_train, ref.jaccard_raw(train_sets), K)
    rows_out["UF"] = (t_ref, t_lib)
    lib_puf, t_lib = library(fairness.puf, eff["NDCG"], jacc, **opts)
    ref_puf, t_ref = timed(ref.puf, eff_ref["NDCG"], jacc_ref)
    rows_out["PUF-NDCG-Jacc"] = (t_ref, t_lib)
    agree = {
        "ME": (lib_envy["ME"], ref_envy["ME"]),
        "MME": (lib_envy["MME"], ref_envy["MME"]),
        "PEU": (lib_envy["PEU"], ref_envy["PEU"]),
        "UF": (lib_uf, ref_uf),
        "PUF-NDCG-Jacc": (lib_puf, ref_puf),
    }
    print(f"(b) loop reference vs library, {len(inputs.users)} evaluated users")
    print(f"    {'measure':<26} {'loop s':>9} {'library s':>10} {'ratio':>9}")
    for name, (t_ref, t_lib) in rows_out.items():
        print(f"    {name:<26} {t_ref:9.3f} {t_lib:10.4f} {t_ref / t_lib:8.0f}x")
    for name, (a, b) in agree.items():
        print(f"    {name}: library {a:.12g} loop {b:.12g} rel diff {abs(a - b) / abs(b):.1e}")
    return {"seconds": rows_out, "values": agree, "users": len(inputs.users)}


def one_size(evaluated: int, device: str, block_size: int) -> dict:
    """Generate, load and evaluate ``evaluated`` users in this process; peak RSS included."""
    from userfair.files.inputs import load_inputs

    start = time.perf_counter()
    train, test, topk = synthetic(evaluated, seed=2)
    generated = time.perf_counter() - start
    inputs = load_inputs(train, test, topk, k=K)
    loaded = time.perf_counter() - start - generated
    before = peak_rss_gb()
    # Twice: the first run also pays the first touch of fresh memory pages (slow on a VM).
    cold = run_library(inputs, device, block_size)
    warm = run_library(inputs, device, block_size)
    return {
        "evaluated": evaluated,
        "items": len(inputs.items),
        "generate_s": generated,
        "load_s": loaded,
        "evaluate_cold_s": cold["total"],
        "evaluate_s": warm["total"],
        "seconds": warm["seconds"],
        "seconds_cold": cold["seconds"],
        "peak_rss_before_evaluate_gb": before,
        "peak_rss_gb": peak_rss_gb(),
    }


def part_c(sizes, device: str, block_size: int) -> list[dict]:
    results = []
    print("(c) scaling (each size in a fresh process)")
    print(
        f"    {'users':>7} {'items':>7} {'load s':>8} {'cold s':>8} {'evaluate s':>11} "
        f"{'peak GiB':>9}"
    )
    for size in sizes:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(size),
                "--device",
                device,
                "--block-size",
                str(block_size),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(row)
        print(
            f"    {row['evaluated']:>7} {row['items']:>7} {row['load_s']:8.2f} "
            f"{row['evaluate_cold_s']:8.2f} {row['evaluate_s']:11.2f} {row['peak_rss_gb']:9.2f}"
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", nargs="+", default=["a", "b", "c"], choices=["a", "b", "c"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 5000, 20000])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--block-size", type=int, default=2048)
    parser.add_argument("--json", type=Path, help="also write every number to this file")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one, args.device, args.block_size)))
        return
    out = {}
    if "a" in args.part:
        out["a"] = part_a(args.device, args.block_size)
    if "b" in args.part:
        out["b"] = part_b(args.device, args.block_size)
    if "c" in args.part:
        out["c"] = part_c(args.sizes, args.device, args.block_size)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
