"""Random splits and top-k lists for the measure tests, and their plain-Python views."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_split(
    seed: int, m: int = 30, extra_users: int = 5, n: int = 60, k: int = 10, genres: int = 4
):
    """(train, test, topk, item_genres) DataFrames/dict with the awkward cases built in:
    users with fewer than k relevant items, items without train interaction (test-only),
    two identical users (same train items, same list), train-only users, skewed lists."""
    rng = np.random.default_rng(seed)
    items = [f"i{j:03d}" for j in range(n)]
    train_items = items[: n - 5]  # the last 5 items appear only in test
    evaluated = [f"u{u:03d}" for u in range(m)]
    users = evaluated + [f"t{u:03d}" for u in range(extra_users)]
    popularity = rng.pareto(1.5, len(train_items)) + 0.1
    popularity /= popularity.sum()
    train_rows, test_rows, topk_rows = [], [], []
    for user in users:
        size = int(rng.integers(1, 15))
        for item in rng.choice(train_items, size=size, replace=False, p=popularity):
            train_rows.append((user, item))
    for user in evaluated:
        size = int(rng.integers(1, 16))  # often fewer than k relevant items
        for item in rng.choice(items, size=size, replace=False):
            test_rows.append((user, item))
        weights = np.ones(n)
        weights[: n // 4] = 6.0  # popular items shared by many lists
        ranked = rng.choice(items, size=k, replace=False, p=weights / weights.sum())
        topk_rows += [(user, item, rank + 1) for rank, item in enumerate(ranked)]
    seen = {item for _, item in train_rows + test_rows}
    for item in sorted(set(items) - seen):  # every item must exist in TRAIN or TEST
        test_rows.append((evaluated[int(rng.integers(m))], item))
    train = pd.DataFrame(train_rows, columns=["user_id", "item_id"])
    test = pd.DataFrame(test_rows, columns=["user_id", "item_id"])
    topk = pd.DataFrame(topk_rows, columns=["user_id", "item_id", "rank"])
    # Identical users: u001 copies u000's train items and list.
    train = pd.concat(
        [
            train[train.user_id != evaluated[1]],
            train[train.user_id == evaluated[0]].assign(user_id=evaluated[1]),
        ]
    )
    topk = pd.concat(
        [
            topk[topk.user_id != evaluated[1]],
            topk[topk.user_id == evaluated[0]].assign(user_id=evaluated[1]),
        ]
    )
    item_genres = {item: {f"g{g}" for g in range(genres) if rng.random() < 0.4} for item in items}
    item_genres[items[0]] = set()  # an item without genre
    return train.reset_index(drop=True), test, topk.reset_index(drop=True), item_genres


def python_views(inputs, train: pd.DataFrame, test: pd.DataFrame, topk: pd.DataFrame, k=10):
    """Lists, relevant sets and train sets of the evaluated users in canonical order, and
    every train user's item set, read from the DataFrames (not from the library's arrays)."""
    users = sorted(test.user_id.unique())
    assert list(inputs.users) == users
    ordered = topk.sort_values(["user_id", "rank"])
    lists = [list(ordered[ordered.user_id == u].item_id)[:k] for u in users]
    relevant = [set(test[test.user_id == u].item_id) for u in users]
    train_sets = [set(train[train.user_id == u].item_id) for u in users]
    all_train = [set(group.item_id) for _, group in train.groupby("user_id")]
    return lists, relevant, train_sets, all_train


def write_item_file(path, item_genres: dict) -> None:
    lines = ["item_id:token\tgenre:token_seq"]
    lines += [f"{item}\t{' '.join(sorted(g))}" for item, g in sorted(item_genres.items())]
    path.write_text("\n".join(lines) + "\n")


def graded_split(seed, **options):
    """``random_split`` with a random grade 1..5 (and some 0) on every interaction."""
    train, test, topk, genres = random_split(seed, **options)
    rng = np.random.default_rng(seed + 100)
    train = train.assign(rating=rng.integers(0, 6, len(train)).astype(float))
    test = test.assign(rating=rng.integers(0, 6, len(test)).astype(float))
    return train, test, topk, genres
