"""A rehearsal of the data stage at ML-20M size: a synthetic 20-million-rating file in the
ML-20M format (RecBole's ml-20m.inter: user_id, item_id, rating, timestamp) through the
workflow's own preprocess, split and statistics steps (the functions the rules call), each
step in a fresh process so that its peak resident memory is its own.

    python benchmarks/data_rehearsal.py [--ratings 20000000] [--out results/benchmarks/ml20m]

Prints, per step, the wall seconds and the peak RSS, beside the size of one copy of the
ratings in memory, and writes the Table 1 row. Results go to docs/performance.md.

:func:`write_shaped` writes raw files (ML atomic files or Tenrec's QK-video.csv) whose
preprocessing gives a requested Table-1 shape; benchmarks/paper_scale.py uses it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

USERS, ITEMS = 138_493, 26_744  # ML-20M's users and rated movies


# --- raw files of a given shape after preprocessing (benchmarks/paper_scale.py) -------------

ML_SPAN = (789_652_009, 1_427_784_002)  # ML-20M's first and last timestamps
QK_COLUMNS = (
    "user_id", "item_id", "click", "follow", "like", "share", "video_category",
    "watching_times", "gender", "age",
)  # fmt: skip


def power_degrees(n: int, total: int, top: int, low: int, rng) -> np.ndarray:
    """``n`` degrees, largest first: ``max(low, top * rank^-a)`` with ``a`` found by bisection
    so that they sum to ``total``; the first is exactly ``top``, the rounding remainder goes
    to random others (one each), so the sum is exactly ``total``."""
    if n * low > total or top + (n - 1) * low > total or n * top < total:
        raise ValueError(f"no {n} degrees in [{low}, {top}] sum to {total}")
    ranks = np.arange(1, n + 1, dtype=np.float64)
    lo, hi = 0.0, 8.0  # the sum falls as a grows
    for _ in range(80):
        mid = (lo + hi) / 2
        if np.maximum(low, top * ranks**-mid).sum() > total:
            lo = mid
        else:
            hi = mid
    degrees = np.floor(np.maximum(low, top * ranks**-hi)).astype(np.int64)
    degrees[0] = top
    rest = total - int(degrees.sum())
    while rest != 0:  # floor leaves 0 <= rest < n; the top degree may move by one rank's worth
        step = 1 if rest > 0 else -1
        room = np.flatnonzero((degrees[1:] + step <= top) & (degrees[1:] + step >= low)) + 1
        pick = rng.choice(room, min(abs(rest), len(room)), replace=False)
        degrees[pick] += step
        rest -= step * len(pick)
    return degrees


def bipartite(users: np.ndarray, items: np.ndarray, low: int, rng) -> tuple[np.ndarray, ...]:
    """Distinct (user, item) pairs: user u gets exactly ``users[u]`` items, drawn without
    replacement with probability proportional to the target item degrees ``items``; then
    every item with fewer than ``low`` users gets more (from random users without it), and as
    many pairs of well-filled users and items are dropped, so the total stays exact and
    every user and item keeps at least ``low``. Returns (user, item) arrays sorted by user."""
    n_items, total = len(items), int(users.sum())
    p = items / items.sum()
    heavy = np.flatnonzero(users > n_items // 20)
    parts_u, parts_i = [], []
    for u in heavy:  # Efraimidis-Spirakis: the largest log(r)/w are a weighted sample
        keys = np.log(rng.random(n_items)) / p
        parts_i.append(np.argpartition(-keys, users[u] - 1)[: users[u]])
        parts_u.append(np.full(users[u], u))
    light = np.setdiff1d(np.arange(len(users)), heavy)
    need = users[light].astype(np.int64)
    have_u, have_i = np.empty(0, np.int64), np.empty(0, np.int64)
    while need.sum():  # oversample with replacement, keep distinct pairs, top up the short
        draw = np.ceil(need * 1.25).astype(np.int64) + 2 * (need > 0)
        u = np.repeat(light, draw)
        i = rng.choice(n_items, int(draw.sum()), p=p)
        key = np.concatenate([have_u * n_items + have_i, u * n_items + i])
        first = np.zeros(len(key), bool)
        first[np.unique(key, return_index=True)[1]] = True
        first[: len(have_u)] = True  # kept pairs stay
        u = np.concatenate([have_u, u])[first]
        i = np.concatenate([have_i, i])[first]
        order = np.lexsort((np.arange(len(u)) >= len(have_u), u))  # kept first per user
        u, i = u[order], i[order]
        start = np.searchsorted(u, u, side="left")
        rank = np.arange(len(u)) - start
        keep = rank < users[u]
        have_u, have_i = u[keep], i[keep]
        need = users[light] - np.bincount(have_u, minlength=len(users))[light]
    user = np.concatenate([have_u, *parts_u])
    item = np.concatenate([have_i, *parts_i])
    # items below `low`: add pairs from random users that lack them
    counts = np.bincount(item, minlength=n_items)
    short = np.flatnonzero(counts < low)
    added_u, added_i = [], []
    pairs = np.sort(user * n_items + item)
    for it in short:
        lack = low - counts[it]
        cand = rng.choice(len(users), 4 * lack + 8, replace=False)
        cand = cand[cand != np.argmax(users)]  # the heaviest user keeps exactly its degree
        cand = cand[pairs[np.searchsorted(pairs, cand * n_items + it) % len(pairs)]
                    != cand * n_items + it][:lack]  # fmt: skip
        added_u.append(cand)
        added_i.append(np.full(len(cand), it))
    if added_u:
        extra_u, extra_i = np.concatenate(added_u), np.concatenate(added_i)
        # as many pairs out again, from users and items well above `low` (never the top user)
        deg_u = np.bincount(user, minlength=len(users))
        deg_i = np.bincount(item, minlength=n_items)
        top = np.argmax(users)
        mask = np.ones(len(user), bool)
        left = len(extra_u)
        while left:  # one pair per user and per item a round, so none falls below `low`
            ok = np.flatnonzero(mask & (deg_u[user] > low) & (deg_i[item] > low) & (user != top))
            ok = ok[rng.permutation(len(ok))]
            ok = ok[np.unique(user[ok], return_index=True)[1]]
            ok = ok[np.unique(item[ok], return_index=True)[1]][:left]
            if not len(ok):
                raise ValueError("cannot keep the total: too few pairs above the minimum")
            mask[ok] = False
            np.subtract.at(deg_u, user[ok], 1)
            np.subtract.at(deg_i, item[ok], 1)
            left -= len(ok)
        user = np.concatenate([user[mask], extra_u])
        item = np.concatenate([item[mask], extra_i])
    assert len(user) == total
    order = np.argsort(user, kind="stable")
    return user[order], item[order]


def write_shaped(
    folder: Path,
    dataset: str,
    *,
    users: int,
    items: int,
    interactions: int,
    max_user: int,
    max_item: int,
    test_users: int,
    min_user: int = 5,
    seed: int = 0,
) -> Path:
    """The raw file of ``dataset`` in its own format whose preprocessing (duplicates: latest
    kept; ratings >= 3; 5-core) leaves exactly ``users`` x ``items`` with ``interactions``
    pairs, the heaviest user having ``max_user`` items (the lightest ``min_user``) and the
    most popular item about ``max_item`` users (power laws in between, every item >= 5).

    ``ml-10m``/``ml-20m`` (and any other name): RecBole's atomic ``{dataset}.inter`` (user,
    item, rating, timestamp), sorted by user, plus 10 % rows rated below 3 and 2 % older
    duplicates of kept pairs, which preprocessing drops. Timestamps: most users rate within
    one short session at a random time; about ``test_users`` long-standing users rate from
    the first half of the period to its end (under the global temporal split they are the
    ones with >= 5 train and >= 1 test interactions); the heaviest user rates early, so that
    all its items are train history. ``qk-video``: Tenrec's ``QK-video.csv`` columns, the
    kept pairs with ``share`` 1 and three times as many other rows with ``share`` 0; no
    timestamps (the split is a seeded shuffle)."""
    rng = np.random.default_rng(seed)
    user_deg = power_degrees(users, interactions, max_user, min_user, rng)
    item_deg = power_degrees(items, interactions, max_item, 5, rng)
    u, i = bipartite(user_deg, item_deg, 5, rng)
    user_ids = rng.permutation(users) + 1  # rank -> external id
    item_ids = rng.permutation(items) + 1
    folder.mkdir(parents=True, exist_ok=True)
    n = len(u)
    if dataset == "qk-video":
        others = 3 * n
        frame = pd.DataFrame(
            {
                "user_id": np.concatenate([user_ids[u], rng.integers(1, users + 1, others)]),
                "item_id": np.concatenate([item_ids[i], rng.integers(1, items + 1, others)]),
            }
        )
        rows = len(frame)
        frame["click"] = 1
        frame["follow"] = rng.integers(0, 2, rows) * (rng.random(rows) < 0.01)
        frame["like"] = rng.integers(0, 2, rows) * (rng.random(rows) < 0.05)
        frame["share"] = np.r_[np.ones(n, np.int64), np.zeros(others, np.int64)]
        frame["video_category"] = rng.integers(0, 30, rows)
        frame["watching_times"] = rng.integers(1, 5, rows)
        frame["gender"] = rng.integers(0, 3, rows)
        frame["age"] = rng.integers(0, 8, rows)
        frame = frame.iloc[rng.permutation(rows)][list(QK_COLUMNS)]
        path = folder / "QK-video.csv"
        frame.to_csv(path, index=False)
        return path
    first, last = ML_SPAN
    span = last - first
    start = rng.uniform(0.0, 0.998, users)  # a session of 0.2 % of the period
    length = np.full(users, 0.002)
    top = int(np.argmax(user_deg))
    candidates = np.flatnonzero(user_deg >= 12)
    candidates = candidates[candidates != top]
    steady = rng.choice(candidates, min(len(candidates), int(1.15 * test_users)), replace=False)
    start[steady] = rng.uniform(0.0, 0.45, len(steady))
    length[steady] = rng.uniform(0.9, 1.0, len(steady)) - start[steady]
    start[top], length[top] = rng.uniform(0.05, 0.3), 0.002
    stamp = first + span * (start[u] + length[u] * rng.random(n))
    kept = pd.DataFrame(
        {
            "u": user_ids[u],
            "i": item_ids[i],
            "r": rng.integers(6, 11, n) / 2.0,
            "t": stamp.astype(np.int64),
        }
    )
    low = n // 10  # rated below 3, before the user's session: a clash loses to the kept pair
    lu = rng.integers(0, users, low)
    below = pd.DataFrame(
        {
            "u": user_ids[lu],
            "i": item_ids[rng.integers(0, items, low)],
            "r": rng.integers(1, 6, low) / 2.0,
            "t": (first + span * start[lu]).astype(np.int64) - 1,
        }
    )
    dup = rng.choice(n, n // 50, replace=False)  # older duplicates of kept pairs
    older = kept.iloc[dup].assign(t=lambda f: f["t"] - 1, r=rng.integers(1, 11, len(dup)) / 2.0)
    frame = pd.concat([kept, below, older], ignore_index=True)
    frame = frame.sort_values(["u", "t"], kind="stable")
    path = folder / f"{dataset}.inter"
    with open(path, "w") as handle:
        handle.write("user_id:token\titem_id:token\trating:float\ttimestamp:float\n")
        for begin in range(0, len(frame), 2_000_000):
            frame.iloc[begin : begin + 2_000_000].to_csv(
                handle, sep="\t", header=False, index=False
            )
    return path


def generate(path: Path, ratings: int, seed: int = 0) -> None:
    """ml-20m.inter with ``ratings`` rows: power-law users and items, ratings 0.5-5,
    timestamps over 20 years; written in chunks (the generator never holds the file)."""
    rng = np.random.default_rng(seed)
    user_p = 1.0 / (np.arange(USERS) + 50.0) ** 0.8
    user_p /= user_p.sum()
    item_p = 1.0 / (np.arange(ITEMS) + 10.0) ** 1.0
    item_p /= item_p.sum()
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = 2_000_000
    with open(path, "w") as handle:
        handle.write("user_id:token\titem_id:token\trating:float\ttimestamp:float\n")
        for start in range(0, ratings, chunk):
            n = min(chunk, ratings - start)
            frame = pd.DataFrame(
                {
                    "u": rng.choice(USERS, n, p=user_p) + 1,
                    "i": rng.choice(ITEMS, n, p=item_p) + 1,
                    "r": rng.integers(1, 11, n) / 2.0,
                    "t": rng.integers(789_652_009, 1_427_784_002, n),
                }
            )
            frame.to_csv(handle, sep="\t", header=False, index=False)


STEP = r"""
import json, resource, sys, time
import pandas as pd
from userfair.workflow import preprocess as data, rawfiles, tables
from userfair.files.io import read_inter, write_inter
step, folder, out = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
if step == "preprocess":
    frame = data.preprocess_file("ml-20m", folder, min_rating=3, core=5)  # the rule's call
    data.as_written(frame).to_parquet(f"{out}/preprocessed.parquet", index=False)
    extra = {"kept": len(frame)}
elif step == "copy":  # one copy of the raw ratings in memory, as the reader holds them
    raw = rawfiles.read_interactions("ml-20m", folder)
    extra = {"raw_rows": len(raw), "copy_mb": raw.memory_usage(deep=True).sum() / 2**20}
elif step == "split":
    frame = pd.read_parquet(f"{out}/preprocessed.parquet")
    splits = data.make_splits(frame, temporal=True, seed=2024, valid_share=0.2,
                              test_share=0.2, min_train=5)
    for name in data.SPLITS:
        write_inter(data.as_written(splits[name]), f"{out}/ml-20m.{name}.inter")
    extra = {name: len(part) for name, part in splits.items()}
else:
    preprocessed = pd.read_parquet(f"{out}/preprocessed.parquet")
    splits = {n: read_inter(f"{out}/ml-20m.{n}.inter") for n in data.SPLITS}
    stats = data.dataset_stats(preprocessed, splits)
    row = tables.table1({"ml-20m": {**stats, **data.split_counts(splits)}})
    extra = {"stats": stats, "table1": row.reset_index().to_dict("records")[0]}
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"step": step, "seconds": seconds, "peak_gib": peak, **extra}, default=str))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=20_000_000)
    parser.add_argument("--out", default="results/benchmarks/ml20m")
    args = parser.parse_args()
    out = Path(args.out)
    folder = out / "raw"
    inter = folder / "ml-20m.inter"
    if not inter.is_file():
        start = time.perf_counter()
        generate(inter, args.ratings)
        print(f"generated {args.ratings:,} ratings in {time.perf_counter() - start:.0f} s "
              f"({inter.stat().st_size / 2**30:.2f} GiB)")  # fmt: skip
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()}")
    for step in ("copy", "preprocess", "split", "stats"):
        result = subprocess.run(
            [sys.executable, "-c", STEP, step, str(folder), str(out)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(result.stdout.strip())
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
