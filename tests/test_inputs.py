"""userfair.files.inputs indexes a split and lists by hashing the ids once and searching only the
distinct values; checked here against the definition (sorted ids, every row searched)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from userfair.files.inputs import load_inputs

K = 3


def _frames(seed: int, as_int: bool):
    rng = np.random.default_rng(seed)
    users = [str(u) for u in rng.choice(10_000, 60, replace=False)]  # '7' < '70' < '8'
    items = [f"i{j}" for j in rng.choice(1_000, 80, replace=False)]

    def part(n, pool_users):
        frame = pd.DataFrame(
            {"user_id": rng.choice(pool_users, n), "item_id": rng.choice(items[:70], n)}
        )
        return frame.astype({"user_id": int}) if as_int else frame

    train = part(900, users)
    test = part(150, users[:40])
    valid = pd.DataFrame({"user_id": users[:5], "item_id": items[70:75]})  # items seen only here
    evaluated = sorted(set(test["user_id"].astype(str)))
    rows = []
    for user in evaluated:
        for rank, item in enumerate(rng.choice(items[:75], K, replace=False), start=1):
            rows.append((int(user) if as_int else user, item, rank))
    rng.shuffle(rows)
    topk = pd.DataFrame(rows, columns=["user_id", "item_id", "rank"])
    return train, valid, test, topk


@pytest.mark.parametrize("as_int", [False, True])
def test_indexing_equals_the_definition(as_int):
    train, valid, test, topk = _frames(5, as_int)
    got = load_inputs(train, test, topk, k=K, valid=valid)

    text = {name: frame.astype({"user_id": str}) for name, frame in
            (("train", train), ("valid", valid), ("test", test), ("topk", topk))}  # fmt: skip
    users = np.unique(text["test"]["user_id"].to_numpy())
    items = np.unique(
        np.concatenate([text[n]["item_id"].to_numpy() for n in ("train", "test", "valid")])
    )
    train_users = np.unique(np.concatenate([text["train"]["user_id"].to_numpy(), users]))
    np.testing.assert_array_equal(got.users, users)
    np.testing.assert_array_equal(got.items, items)
    np.testing.assert_array_equal(got.train_rows, np.searchsorted(train_users, users))
    expected_train = np.zeros((len(train_users), len(items)))
    for user, item in text["train"][["user_id", "item_id"]].itertuples(index=False):
        expected_train[np.searchsorted(train_users, user), np.searchsorted(items, item)] = 1
    np.testing.assert_array_equal(got.train.toarray(), expected_train)
    expected_relevant = np.zeros((len(users), len(items)))
    for user, item in text["test"][["user_id", "item_id"]].itertuples(index=False):
        expected_relevant[np.searchsorted(users, user), np.searchsorted(items, item)] = 1
    np.testing.assert_array_equal(got.relevant.toarray(), expected_relevant)
    for row, user in enumerate(users):
        mine = text["topk"][text["topk"]["user_id"] == user].sort_values("rank")
        assert [items[j] for j in got.topk[row]] == mine["item_id"].tolist()
