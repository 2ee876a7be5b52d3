"""Preprocessing and splitting a dataset's interactions (docs/method.md#data), the genres of
the split's items, and the dataset statistics behind Table 1 (stats.json, the split counts).

The raw files are read by ``userfair.workflow.rawfiles``. Frames of interactions have the columns
``user_id`` and ``item_id`` (external ids as strings or categoricals) and, where the dataset
has them, ``rating`` and ``timestamp``. Every step keeps the rows in the order of the raw
file, which the temporal split relies on to break ties between equal timestamps.

Graded relevance (config ``measures.relevance`` with ``graded``; docs/method.md#graded-relevance)
keeps each kept interaction's grade in a ``rating`` column beside it (``grades=True``): the
dataset's rating where it has one; for a dataset with counts (Last.fm's play counts) the
count's quintile among the user's kept interactions (:func:`count_grades`); else 1. Without
it no step reads a count or writes a ``rating`` column, so the binary outputs are the same
bytes as before.
"""

from __future__ import annotations

import logging
import os
from fractions import Fraction

import numpy as np
import pandas as pd

from userfair.files.io import InputError, atomic_path
from userfair.workflow import catalogue, rawfiles
from userfair.workflow.catalogue import Dataset

log = logging.getLogger(__name__)

SPLITS = ("train", "valid", "test")
STATS_KEYS = (
    "users",
    "items",
    "interactions",
    "sparsity",
    "test_users",
    "train",
    "valid",
    "test",
    "protocol",
    "item_visits",
)


# --- preprocessing (steps 1-3) -------------------------------------------------------


def _codes(column: pd.Series) -> tuple[np.ndarray, int]:
    """Integer codes of an id column and their count: a categorical's own codes (no copy),
    else ``pd.factorize``'s."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), len(column.cat.categories)
    codes, uniques = pd.factorize(column)
    return codes, len(uniques)


def drop_duplicates_keep_latest(frame: pd.DataFrame) -> pd.DataFrame:
    """Step 1: one row per (user, item), the most recent one (the last in the file when
    there is no timestamp, or among equal timestamps). Rows stay in file order.

    Done on integer keys (a stable sort by pair, then by timestamp: the last row of each
    pair's run is the one kept), so that only the kept rows are ever copied."""
    users, _ = _codes(frame["user_id"])
    items, n_items = _codes(frame["item_id"])
    pair = users.astype(np.int64) * n_items + items
    del users, items
    if "timestamp" in frame:
        order = np.lexsort((frame["timestamp"].to_numpy(), pair))  # stable: file order last
    else:
        order = np.argsort(pair, kind="stable")
    pair = pair[order]
    last = np.ones(len(pair), dtype=bool)
    last[:-1] = pair[1:] != pair[:-1]
    del pair
    kept = np.zeros(len(frame), dtype=bool)
    kept[order[last]] = True  # back in file order
    del order, last
    log.info("duplicates: %d of %d rows kept", kept.sum(), len(frame))
    return frame[kept]


def keep_ratings_at_least(
    frame: pd.DataFrame, min_rating: float, *, grades: bool = False
) -> pd.DataFrame:
    """Step 2 (rated datasets): ratings >= ``min_rating`` become interactions; the rest go.
    The ``rating`` column goes too, unless ``grades`` (it is then each interaction's grade)."""
    keep = (frame["rating"] >= min_rating).to_numpy()
    return frame.loc[keep, [name for name in frame.columns if grades or name != "rating"]]


def k_core(frame: pd.DataFrame, core: int) -> pd.DataFrame:
    """Step 3: drop users and items with < ``core`` interactions until none is left."""
    users, n_users = _codes(frame["user_id"])
    items, n_items = _codes(frame["item_id"])
    keep = np.ones(len(frame), dtype=bool)
    passes = 0
    while True:
        passes += 1
        user_counts = np.bincount(users[keep], minlength=n_users)
        item_counts = np.bincount(items[keep], minlength=n_items)
        still = keep & (user_counts[users] >= core) & (item_counts[items] >= core)
        if still.sum() == keep.sum():
            break
        keep = still
    log.info("%d-core: %d passes, %d of %d interactions kept", core, passes, keep.sum(), len(frame))
    return frame[keep]


def preprocess(
    frame: pd.DataFrame, *, min_rating: float, core: int, grades: bool = False
) -> pd.DataFrame:
    """Steps 1-3 of docs/method.md#data in order; the result has user_id, item_id[, timestamp]
    and, with ``grades``, ``rating``: each interaction's grade (its rating, else 1.0)."""
    return _ratings_and_core(drop_duplicates_keep_latest(frame), min_rating, core, grades)


def preprocess_file(
    dataset: str | Dataset,
    path: str | os.PathLike,
    *,
    min_rating: float,
    core: int,
    grades: bool = False,
) -> pd.DataFrame:
    """``preprocess(read_interactions(dataset, path))``, with the raw frame freed as soon as
    step 1 has copied out the rows it keeps (the rule's route: a caller that holds the raw
    frame holds one more copy of the ratings through steps 2-3)."""
    entry = dataset if isinstance(dataset, Dataset) else catalogue.get(dataset)
    key = (
        "preprocessing.min_rating"
        if entry.min_rating is None
        else f"custom_datasets.{entry.name}.min_rating"
    )
    return _ratings_and_core(
        drop_duplicates_keep_latest(rawfiles.read_interactions(entry, path, counts=grades)),
        min_rating,
        core,
        grades,
        label=f"{path}",
        key=key,
    )


def _ratings_and_core(
    frame: pd.DataFrame,
    min_rating: float,
    core: int,
    grades: bool = False,
    *,
    label: str | None = None,
    key: str = "preprocessing.min_rating",
) -> pd.DataFrame:
    if "rating" in frame:
        rows, low, high = len(frame), frame["rating"].min(), frame["rating"].max()
        frame = keep_ratings_at_least(frame, min_rating, grades=grades)
        log.info("ratings >= %s: %d of %d rows kept", min_rating, len(frame), rows)
        if frame.empty and rows and label is not None:  # a file: say which key to change
            raise InputError(
                f"{label}: every rating is below min_rating {min_rating} (they range from "
                f"{low:g} to {high:g}); lower config key {key} to the data's scale"
            )
    frame = k_core(frame, core)
    if "count" in frame:  # counts become grades (after the core: among the kept ones)
        counts = frame["count"]
        frame = frame.drop(columns="count")
        if grades and "rating" not in frame:
            frame = frame.assign(rating=count_grades(frame["user_id"], counts))
    if grades and "rating" not in frame:  # no rating column: every interaction has grade 1
        frame = frame.assign(rating=1.0)
    return frame


#: The grades a count becomes: 1..GRADE_LEVELS.
GRADE_LEVELS = 5


def count_grades(users: pd.Series, counts: pd.Series) -> np.ndarray:
    """Grades 1..5 of interaction counts (Last.fm's play counts), within each user: the
    count's quintile among the user's interactions, ``ceil(5 r / n_u)`` with ``r`` the
    count's rank in ascending order (ties share their average rank) and ``n_u`` the user's
    interactions; so each user's top fifth has grade 5 whatever the user's activity, and
    equal counts of a user have equal grades (docs/method.md#graded-relevance)."""
    values = pd.to_numeric(counts, errors="raise").astype("float64")
    if not np.isfinite(values.to_numpy()).all() or (values < 0).any():
        raise ValueError("counts must be finite numbers >= 0")
    groups = values.groupby(users.to_numpy(), sort=False)
    share = groups.rank(method="average", pct=True).to_numpy()  # r / n_u in (0, 1]
    grades = np.ceil(GRADE_LEVELS * share - 1e-9)
    return np.clip(grades, 1, GRADE_LEVELS).astype("float64")


# --- split (steps 4-5) ---------------------------------------------------------------


def split_sizes(n: int, valid_share: float, test_share: float) -> tuple[int, int, int]:
    """(train, valid, test) sizes: valid = floor(valid_share n), test = floor(test_share n)."""
    n_valid = int(Fraction(str(valid_share)) * n)  # exact floor for decimal shares
    n_test = int(Fraction(str(test_share)) * n)
    return n - n_valid - n_test, n_valid, n_test


def split_globally(
    frame: pd.DataFrame, *, temporal: bool, seed: int, valid_share: float, test_share: float
) -> dict[str, pd.DataFrame]:
    """Step 4: all interactions, not per user, into train/valid/test.

    Temporal: a stable sort by timestamp of the frame in file order (ties keep file
    order), oldest to train. Otherwise: a permutation drawn with ``seed``.
    """
    if temporal:
        order = np.argsort(frame["timestamp"].to_numpy(), kind="stable")
    else:
        order = np.random.default_rng(seed).permutation(len(frame))
    n_train, n_valid, _ = split_sizes(len(frame), valid_share, test_share)
    rows = frame.iloc[order]
    return {
        "train": rows.iloc[:n_train],
        "valid": rows.iloc[n_train : n_train + n_valid],
        "test": rows.iloc[n_train + n_valid :],
    }


def ratio_split_counts(n: np.ndarray, ratios: tuple[float, float, float]) -> np.ndarray:
    """(len(n), 3) train/valid/test counts of groups of sizes ``n``, as RecBole 1.2.1's own
    ratio split computes them (``Dataset._calcu_split_ids``): valid and test get
    ``int(ratio n)``, train the rest; then, while train keeps more than one interaction, a
    part whose share ``ratio n`` lies strictly between 0 and 1 gets one interaction from train
    (test first, then valid)."""
    n = np.asarray(n, dtype=np.int64)
    counts = np.zeros((len(n), 3), dtype=np.int64)
    for i, total in enumerate(n):
        cnt = [int(r * total) for r in ratios]
        cnt[0] = total - sum(cnt[1:])
        for j in range(1, len(ratios)):
            if cnt[0] <= 1:
                break
            if 0 < ratios[-j] * total < 1:
                cnt[-j] += 1
                cnt[0] -= 1
        counts[i] = cnt
    return counts


def split_per_user(
    frame: pd.DataFrame, *, temporal: bool, seed: int, valid_share: float, test_share: float
) -> dict[str, pd.DataFrame]:
    """Each user's interactions into train/valid/test in the ratio
    ``1 - valid_share - test_share : valid_share : test_share``, RecBole's ratio split: by
    time when the dataset has timestamps (a stable sort, so equal timestamps keep file
    order), else in an order drawn with ``seed``; the user's earliest go to train."""
    users = pd.factorize(frame["user_id"].astype(str))[0]
    if temporal:
        within = np.argsort(np.argsort(frame["timestamp"].to_numpy(), kind="stable"), kind="stable")
    else:
        within = np.random.default_rng(seed).permutation(len(frame))
    order = np.lexsort((within, users))
    sizes = np.bincount(users)
    ratios = (1.0 - valid_share - test_share, valid_share, test_share)
    distinct, inverse = np.unique(sizes, return_inverse=True)
    counts = ratio_split_counts(distinct, ratios)[inverse]  # (users, 3)
    sorted_users = users[order]
    position = np.arange(len(order)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    n_train = counts[sorted_users, 0]
    n_valid = counts[sorted_users, 1]
    part = np.where(position < n_train, 0, np.where(position < n_train + n_valid, 1, 2))
    rows = frame.iloc[order]
    return {name: rows[part == index] for index, name in enumerate(SPLITS)}


PROTOCOLS = ("global", "per-user")


def drop_users_with_few_train(
    splits: dict[str, pd.DataFrame], min_train: int
) -> dict[str, pd.DataFrame]:
    """Step 5: users with < ``min_train`` train interactions leave all three splits."""
    counts = splits["train"]["user_id"].astype(str).value_counts()
    kept = set(counts.index[counts >= min_train])
    return {name: part[part["user_id"].astype(str).isin(kept)] for name, part in splits.items()}


def make_splits(
    frame: pd.DataFrame,
    *,
    temporal: bool,
    seed: int,
    valid_share: float,
    test_share: float,
    min_train: int,
    label: str = "",
    protocol: str = "global",
) -> dict[str, pd.DataFrame]:
    """Steps 4-5 of the ``global`` protocol (the paper's), or the ``per-user`` ratio split
    (every user with a test interaction is evaluated: no user is dropped afterwards); an
    error naming ``label`` when no user is left with test interactions."""
    if protocol == "global":
        splits = split_globally(
            frame, temporal=temporal, seed=seed, valid_share=valid_share, test_share=test_share
        )
        splits = drop_users_with_few_train(splits, min_train)
    elif protocol == "per-user":
        splits = split_per_user(
            frame, temporal=temporal, seed=seed, valid_share=valid_share, test_share=test_share
        )
    else:
        raise ValueError(f"unknown split protocol {protocol!r}; expected one of {PROTOCOLS}")
    if splits["test"].empty:
        why = (
            f"no user has both >= {min_train} train and >= 1 test interactions"
            if protocol == "global"
            else "no user has enough interactions for a test one"
        )
        raise InputError(
            f"{label or 'split'}: no test users are left (field 'user_id': {why}); "
            "the data is too small or too sparse for this split"
        )
    return {
        name: part[[c for c in ("user_id", "item_id", "rating", "timestamp") if c in part]]
        for name, part in splits.items()
    }


def _as_text(column: pd.Series) -> np.ndarray:
    """An id column as an object array of strings; a categorical's rows share its
    categories' string objects (8 bytes a row, not a new string each)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if len(codes) == 0 or codes.min() >= 0:
            return column.cat.categories.astype(str).to_numpy(dtype=object)[codes]
    return column.astype(str).to_numpy()


def as_written(part: pd.DataFrame) -> pd.DataFrame:
    """Interactions as written to files: string ids, grades (``rating``, where kept) as
    floats, integral timestamps as integers."""
    out = pd.DataFrame({"user_id": _as_text(part["user_id"]), "item_id": _as_text(part["item_id"])})
    if "rating" in part:
        out["rating"] = part["rating"].to_numpy(dtype="float64")
    if "timestamp" in part:
        stamps = part["timestamp"].to_numpy()
        integral = len(stamps) and np.all(np.mod(stamps, 1) == 0)
        out["timestamp"] = stamps.astype("int64") if integral else stamps
    return out


# --- item genres ------------------------------------------------------------------------------


def split_item_genres(genres: pd.DataFrame, splits: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The genres of the items in the split (in the .item file's order; an item that the
    .item file lacks gets no genre)."""
    items = pd.unique(
        np.concatenate([part["item_id"].astype(str).to_numpy() for part in splits.values()])
    )
    genres = genres.drop_duplicates("item_id", keep="first")
    known = genres[genres["item_id"].isin(set(items))]
    missing = sorted(set(items) - set(known["item_id"]))
    if missing:
        log.warning("%d items have no row in the .item file; they get no genre", len(missing))
    return pd.concat([known, pd.DataFrame({"item_id": missing, "genre": ""})], ignore_index=True)


def write_item_genres(genres: pd.DataFrame, path: str | os.PathLike) -> None:
    """A RecBole .item file: ``item_id:token<TAB>genre:token_seq``."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write("item_id:token\tgenre:token_seq\n")
        for item, genre in zip(genres["item_id"], genres["genre"]):
            handle.write(f"{item}\t{genre}\n")


# --- statistics (Table 1) ---------------------------------------------------------------------


def dataset_stats(
    preprocessed: pd.DataFrame, splits: dict[str, pd.DataFrame], protocol: str = "global"
) -> dict:
    """stats.json: counts and sparsity (%) after the k-core (step 3); test users and split
    sizes after the final drop (step 5); the split ``protocol`` (global or per-user); the
    evaluated users' :func:`item_visits` (what the streamed measures' jobs are sized by)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown split protocol {protocol!r}; expected one of {PROTOCOLS}")
    users = int(preprocessed["user_id"].astype(str).nunique())
    items = int(preprocessed["item_id"].astype(str).nunique())
    interactions = len(preprocessed)
    sparsity = 100.0 * (1.0 - interactions / (users * items)) if users and items else float("nan")
    stats = {
        "users": users,
        "items": items,
        "interactions": interactions,
        "sparsity": sparsity,
        "test_users": int(splits["test"]["user_id"].astype(str).nunique()),
    }
    stats.update({name: len(splits[name]) for name in SPLITS})
    stats["protocol"] = protocol
    stats["item_visits"] = item_visits(splits["train"], splits["test"]["user_id"])
    assert tuple(stats) == STATS_KEYS
    return stats


def item_visits(train: pd.DataFrame, evaluated) -> int:
    """The sum over items of deg (deg - 1) / 2, deg the number of ``evaluated`` users (the
    test users) with the item in ``train``: the pairs of evaluated users the streamed pair
    passes visit through the items (what their work grows with,
    docs/cluster.md#scatter-plan)."""
    train = train[train["user_id"].astype(str).isin(set(pd.Series(evaluated).astype(str)))]
    degrees = train.groupby(train["item_id"].astype(str))["user_id"].nunique().to_numpy()
    return int((degrees.astype(np.int64) * (degrees - 1) // 2).sum())


def split_counts(splits: dict[str, pd.DataFrame]) -> dict:
    """Users and items left in the split files after step 5."""
    users = set().union(*(set(p["user_id"].astype(str)) for p in splits.values()))
    items = set().union(*(set(p["item_id"].astype(str)) for p in splits.values()))
    return {"split_users": len(users), "split_items": len(items)}
