"""Reading raw datasets, preprocessing and splitting them (docs/method.md#data), and Table 1.

Frames of interactions have the columns ``user_id`` and ``item_id`` (external ids as
strings or categoricals) and, where the dataset has them, ``rating`` and ``timestamp``.
Every step keeps the rows in the order of the raw file, which the temporal split relies on
to break ties between equal timestamps.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import zipfile
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import IO, Iterator

import numpy as np
import pandas as pd

from . import catalogue
from .catalogue import Dataset
from .io import InputError, atomic_path, parse_atomic_header

log = logging.getLogger(__name__)

SPLITS = ("train", "valid", "test")
STATS_KEYS = ("users", "items", "interactions", "sparsity", "test_users", "train", "valid", "test")
NO_GENRE = "(no genres listed)"


# --- raw files ------------------------------------------------------------------------------


class RawSource:
    """A folder of RecBole atomic files or a zip archive holding them."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.is_dir():
            self.names = sorted(p.name for p in self.path.iterdir() if p.is_file())
            self.archive = None
        elif zipfile.is_zipfile(self.path):
            with zipfile.ZipFile(self.path) as archive:
                self.names = [
                    n for n in archive.namelist() if not n.endswith("/") and "__MACOSX" not in n
                ]
            self.archive = self.path
        elif self.path.exists():
            raise InputError(
                f"{self.path}: expected a folder of RecBole atomic files or a zip "
                "archive of them, found neither (not a zip, or a truncated one)"
            )
        else:
            raise InputError(f"{self.path}: not found")

    def member(self, dataset: str, suffix: str, required: bool = True) -> str | None:
        """The file with ``suffix`` (``.inter``/``.item``): ``<dataset><suffix>`` if present,
        else the only such file; None when absent and not ``required``."""
        candidates = [n for n in self.names if Path(n).name.endswith(suffix)]
        exact = [n for n in candidates if Path(n).name == f"{dataset}{suffix}"]
        if len(exact) == 1:
            return exact[0]
        if len(candidates) == 1:
            return candidates[0]
        if not candidates and not required:
            return None
        found = ", ".join(candidates) or "none"
        raise InputError(f"{self.path}: expected one '{dataset}{suffix}' file, found: {found}")

    def label(self, member: str) -> str:
        return f"{self.path}:{member}" if self.archive else str(self.path / member)

    @contextmanager
    def open(self, member: str) -> Iterator[IO[bytes]]:
        if self.archive is None:
            with open(self.path / member, "rb") as handle:
                yield handle
        else:
            with zipfile.ZipFile(self.archive) as archive, archive.open(member) as handle:
                yield handle


def _atomic_header(source: RawSource, member: str) -> dict[str, str]:
    """The header of an atomic file inside ``source`` (``userfair.io.parse_atomic_header``)."""
    with source.open(member) as handle:
        first = io.TextIOWrapper(handle, encoding="utf-8", errors="replace").readline()
    return parse_atomic_header(first)


def _require(header: dict[str, str], names: tuple[str, ...], label: str) -> str:
    """The first of ``names`` present in ``header``; InputError naming the file otherwise."""
    for name in names:
        if name in header:
            return name
    raise InputError(
        f"{label}: missing column '{' or '.join(names)}' (header: {' '.join(header.values())})"
    )


def _read_atomic(
    source: RawSource, member: str, fields: dict[str, str], numeric: tuple[str, ...]
) -> pd.DataFrame:
    """Read the atomic-file columns ``fields`` (raw name -> our name) of ``member``."""
    label = source.label(member)
    header = _atomic_header(source, member)
    cells = [header[name] for name in fields]
    # numbers are read as text and parsed below, so that a bad value is reported by name
    dtypes = {
        cell: (str if name in numeric else "category") for cell, name in zip(cells, fields.values())
    }
    with source.open(member) as handle:
        frame = pd.read_csv(
            handle,
            sep="\t",
            usecols=cells,
            dtype=dtypes,
            quoting=csv.QUOTE_NONE,
            keep_default_na=False,
            encoding_errors="replace",
        )
    frame = frame[cells]
    frame.columns = list(fields.values())
    for name in numeric:
        frame[name] = _to_number(frame[name], label, name)
    return frame


def _to_number(column: pd.Series, label: str, field: str) -> pd.Series:
    values = pd.to_numeric(column, errors="coerce")
    bad = values.isna()
    if bad.any():
        row = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"{label}: column '{field}' must be numeric; data row {row + 1} "
            f"holds {column.iloc[row]!r}"
        )
    return values.astype("float64")


def read_interactions(name: str, path: str | os.PathLike) -> pd.DataFrame:
    """The raw interactions of dataset ``name`` from ``path`` (a folder, zip or, for
    qk-video, the Tenrec CSV), in file order with a 0-based RangeIndex."""
    dataset = catalogue.get(name)
    if dataset.source == "tenrec":
        return read_tenrec(dataset, path)
    if not Path(path).exists():
        raise InputError(
            f"{path}: not found (the raw files of {name}; config dataset_options.{name}.path)"
        )
    source = RawSource(path)
    member = source.member(name, ".inter")
    label = source.label(member)
    header = _atomic_header(source, member)
    fields = {
        _require(header, (dataset.user_column,), label): "user_id",
        _require(header, dataset.item_columns, label): "item_id",
    }
    numeric = []
    for column, ours in (
        (dataset.rating_column, "rating"),
        (dataset.timestamp_column, "timestamp"),
    ):
        if column:
            fields[_require(header, (column,), label)] = ours
            numeric.append(ours)
    log.info("reading columns %s of %s", ", ".join(fields), label)
    frame = _read_atomic(source, member, fields, tuple(numeric))
    log.info("read %d interactions from %s", len(frame), label)
    return frame.reset_index(drop=True)


def read_tenrec(dataset: Dataset, path: str | os.PathLike) -> pd.DataFrame:
    """QK-video.csv: the rows whose ``share`` column is 1, as (user_id, item_id)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: not found. " + catalogue.tenrec_help(path))
    with open(path, encoding="utf-8", errors="replace") as handle:
        header = handle.readline().rstrip("\r\n").split(",")
    wanted = [dataset.user_column, dataset.item_columns[0], dataset.feedback_column]
    for column in wanted:
        if column not in header:
            raise InputError(f"{path}: missing column '{column}' (header: {','.join(header)})")
    reader = pacsv.open_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            include_columns=wanted,
            column_types={wanted[0]: pa.string(), wanted[1]: pa.string(), wanted[2]: pa.string()},
        ),
    )
    kept, rows = [], 0
    for batch in reader:
        rows += batch.num_rows
        mask = pc.equal(pc.utf8_trim_whitespace(batch.column(2)), "1")
        kept.append(batch.filter(mask).select([0, 1]))
        if rows % 10_000_000 < batch.num_rows:
            log.info("read %d rows of %s", rows, path)
    table = pa.Table.from_batches(
        kept, schema=pa.schema([(wanted[0], pa.string()), (wanted[1], pa.string())])
    )
    frame = table.to_pandas()
    frame.columns = ["user_id", "item_id"]
    frame = frame.astype("category")
    log.info("read %d rows of %s; %d with %s == 1", rows, path, len(frame), wanted[2])
    return frame.reset_index(drop=True)


def read_item_genres(name: str, path: str | os.PathLike) -> pd.DataFrame:
    """(item_id, genre) of dataset ``name``: genres space-separated, as in its .item file."""
    dataset = catalogue.get(name)
    if not dataset.has_genres:
        raise InputError(f"dataset '{name}' has no item genres")
    source = RawSource(path)
    member = source.member(name, ".item")
    label = source.label(member)
    header = _atomic_header(source, member)
    fields = {
        _require(header, ("item_id",), label): "item_id",
        _require(header, dataset.genre_columns, label): "genre",
    }
    frame = _read_atomic(source, member, fields, ())
    genre = frame["genre"].astype(str).str.replace(NO_GENRE, "", regex=False)
    return pd.DataFrame(
        {"item_id": frame["item_id"].astype(str), "genre": genre.str.split().str.join(" ")}
    )


# --- preprocessing (steps 1-3) -------------------------------------------------------


def drop_duplicates_keep_latest(frame: pd.DataFrame) -> pd.DataFrame:
    """Step 1: one row per (user, item), the most recent one (the last in the file when
    there is no timestamp, or among equal timestamps). Rows stay in file order."""
    ordered = frame.sort_values("timestamp", kind="stable") if "timestamp" in frame else frame
    kept = ordered.drop_duplicates(["user_id", "item_id"], keep="last").index
    return frame.loc[np.sort(kept.to_numpy())]


def keep_ratings_at_least(frame: pd.DataFrame, min_rating: float) -> pd.DataFrame:
    """Step 2 (rated datasets): ratings >= ``min_rating`` become interactions; the rest go."""
    return frame[frame["rating"] >= min_rating].drop(columns="rating")


def k_core(frame: pd.DataFrame, core: int) -> pd.DataFrame:
    """Step 3: drop users and items with < ``core`` interactions until none is left."""
    users = pd.factorize(frame["user_id"])[0]
    items = pd.factorize(frame["item_id"])[0]
    keep = np.ones(len(frame), dtype=bool)
    passes = 0
    while True:
        passes += 1
        user_counts = np.bincount(users[keep], minlength=users.max(initial=-1) + 1)
        item_counts = np.bincount(items[keep], minlength=items.max(initial=-1) + 1)
        still = keep & (user_counts[users] >= core) & (item_counts[items] >= core)
        if still.sum() == keep.sum():
            break
        keep = still
    log.info("%d-core: %d passes, %d of %d interactions kept", core, passes, keep.sum(), len(frame))
    return frame[keep]


def preprocess(frame: pd.DataFrame, *, min_rating: float, core: int) -> pd.DataFrame:
    """Steps 1-3 of docs/method.md#data in order; the result has user_id, item_id[, timestamp]."""
    rows = len(frame)
    frame = drop_duplicates_keep_latest(frame)
    log.info("duplicates: %d of %d rows kept", len(frame), rows)
    if "rating" in frame:
        rows = len(frame)
        frame = keep_ratings_at_least(frame, min_rating)
        log.info("ratings >= %s: %d of %d rows kept", min_rating, len(frame), rows)
    return k_core(frame, core)


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
) -> dict[str, pd.DataFrame]:
    """Steps 4-5; an error naming ``label`` when no user is left with test interactions."""
    splits = split_globally(
        frame, temporal=temporal, seed=seed, valid_share=valid_share, test_share=test_share
    )
    splits = drop_users_with_few_train(splits, min_train)
    if splits["test"].empty:
        raise InputError(
            f"{label or 'split'}: no test users are left (field 'user_id': no user "
            f"has both >= {min_train} train and >= 1 test interactions); the data "
            "is too small or too sparse for this split"
        )
    return {
        name: part[[c for c in ("user_id", "item_id", "timestamp") if c in part]]
        for name, part in splits.items()
    }


def as_written(part: pd.DataFrame) -> pd.DataFrame:
    """Interactions as written to files: string ids, integral timestamps as integers."""
    out = pd.DataFrame(
        {
            "user_id": part["user_id"].astype(str).to_numpy(),
            "item_id": part["item_id"].astype(str).to_numpy(),
        }
    )
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


def dataset_stats(preprocessed: pd.DataFrame, splits: dict[str, pd.DataFrame]) -> dict:
    """stats.json: counts and sparsity (%) after the k-core (step 3); test users and split
    sizes after the final drop (step 5)."""
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
    assert tuple(stats) == STATS_KEYS
    return stats


# Column titles of Table 1 (plain words: the CSV keeps them as they are; the LaTeX writer,
# userfair.io.to_booktabs, escapes every title and cell).
TABLE1_COLUMNS = {
    "users": "users",
    "test_users": "test users",
    "items": "items",
    "interactions": "interactions",
    "sparsity": "sparsity (%)",
    "train": "train",
    "valid": "valid",
    "test": "test",
    "split_users": "users in split",
    "split_items": "items in split",
}


def split_counts(splits: dict[str, pd.DataFrame]) -> dict:
    """Users and items left in the split files after step 5."""
    users = set().union(*(set(p["user_id"].astype(str)) for p in splits.values()))
    items = set().union(*(set(p["item_id"].astype(str)) for p in splits.values()))
    return {"split_users": len(users), "split_items": len(items)}


def table1(rows: dict[str, dict]) -> pd.DataFrame:
    """Table 1: one row per dataset from its stats.json plus :func:`split_counts`."""
    frame = pd.DataFrame.from_dict(rows, orient="index")
    missing = [key for key in TABLE1_COLUMNS if key not in frame]
    if missing:
        raise InputError(f"stats: missing field(s) {', '.join(missing)}")
    frame = frame[list(TABLE1_COLUMNS)].rename(columns=TABLE1_COLUMNS)
    frame.index.name = "dataset"
    return frame.astype({c: "int64" for c in frame.columns if c != "sparsity (%)"})
