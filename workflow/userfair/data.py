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
)
NO_GENRE = "(no genres listed)"


# --- raw files ------------------------------------------------------------------------------


class RawSource:
    """A folder of RecBole atomic files, a zip archive holding them, or one .inter file."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.is_dir():
            self.names = sorted(p.name for p in self.path.iterdir() if p.is_file())
            self.archive = None
        elif self.path.is_file() and self.path.suffix in (".inter", ".item"):
            # a single atomic file: its folder, restricted to it
            self.names = [self.path.name]
            self.path, self.archive = self.path.parent, None
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
    """Read the atomic-file columns ``fields`` (raw name -> our name) of ``member``; the
    columns ``numeric`` (our names) as float64."""
    label = source.label(member)
    header = _atomic_header(source, member)
    cells = [header[name] for name in fields]

    def read(numbers_as):
        dtypes = {
            cell: ("category" if name in ("user_id", "item_id") else
                   numbers_as if name in numeric else str)
            for cell, name in zip(cells, fields.values())
        }  # fmt: skip
        with source.open(member) as handle:
            return pd.read_csv(
                handle,
                sep="\t",
                usecols=cells,
                dtype=dtypes,
                quoting=csv.QUOTE_NONE,
                keep_default_na=False,
                encoding_errors="replace",
            )

    try:  # numbers as numbers: a text column of 20M ratings would cost gigabytes
        frame = read("float64")
    except ValueError:  # a bad value: read as text, so that _to_number names its row
        frame = read(str)
    frame = frame[cells]
    frame.columns = list(fields.values())
    raw_names = {ours: raw for raw, ours in fields.items()}
    for name in numeric:
        frame[name] = _to_number(frame[name], label, raw_names[name])
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


def read_interactions(dataset: str | Dataset, path: str | os.PathLike) -> pd.DataFrame:
    """The raw interactions of ``dataset`` (a catalogue name or a declared :class:`Dataset`)
    from ``path`` (a folder, zip or ``.inter`` file of RecBole atomic files, or a csv/tsv/
    parquet table), in file order with a 0-based RangeIndex: ``user_id``, ``item_id`` and,
    where the dataset has them, ``rating`` and ``timestamp``. A feedback column keeps only
    the rows where it equals the declared value."""
    dataset = dataset if isinstance(dataset, Dataset) else catalogue.get(dataset)
    table = _Table(dataset, path)
    fields = {
        table.column(dataset.user_column, "user"): "user_id",
        table.column(dataset.item_columns, "item"): "item_id",
    }
    for column, ours, key in (
        (dataset.rating_column, "rating", "rating"),
        (dataset.timestamp_column, "timestamp", "timestamp"),
        (dataset.feedback_column, "feedback", "feedback.column"),
    ):
        if column:
            fields[table.column(column, key)] = ours
    numeric = tuple(ours for ours in fields.values() if ours in ("rating", "timestamp"))
    frame = _keep_feedback(table.read(fields, numeric), dataset, table.label)
    for name, column in (
        ("rating", dataset.rating_column),
        ("timestamp", dataset.timestamp_column),
    ):
        if name in frame:
            frame[name] = _to_number(frame[name], table.label, column)
    log.info("read %d interactions from %s", len(frame), table.label)
    return frame.reset_index(drop=True)


def _path_key(dataset: Dataset) -> str:
    """The config key that names the dataset's raw file, for error messages."""
    if dataset.source == "custom":
        return f"custom_datasets.{dataset.name}.path"
    return f"dataset_options.{dataset.name}.path"


class _Table:
    """The raw interactions file of a dataset, whatever its format: its header, and its
    columns read as text in file order."""

    def __init__(self, dataset: Dataset, path: str | os.PathLike):
        self.dataset, self.path = dataset, Path(path)
        if not self.path.exists():
            if dataset.source == "tenrec":
                raise InputError(f"{path}: not found. " + catalogue.tenrec_help(path))
            raise InputError(
                f"{path}: not found (the raw files of {dataset.name}; config {_path_key(dataset)})"
            )
        self.separator = None
        if dataset.format == "recbole":
            self.source = RawSource(path)
            self.member = self.source.member(dataset.name, ".inter")
            self.label = self.source.label(self.member)
            self.header = _atomic_header(self.source, self.member)
            return
        self.label = str(self.path)
        if not self.path.is_file():
            raise InputError(f"{path}: expected a {dataset.format} file, found a folder")
        if dataset.format == "parquet":
            import pyarrow.parquet as pq

            names = pq.read_schema(self.path).names
        else:
            self.separator = dataset.separator or ("\t" if dataset.format == "tsv" else ",")
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                first = handle.readline().rstrip("\r\n")
            names = [cell.strip().strip('"') for cell in first.split(self.separator)]
        self.header = {name: name for name in names}

    def column(self, names: str | tuple[str, ...], key: str) -> str:
        """The first of ``names`` in the header; an InputError naming the file, the column
        and, for a declared dataset, its config key (and a likely wrong separator)."""
        names = (names,) if isinstance(names, str) else tuple(names)
        try:
            return _require(self.header, names, self.label)
        except InputError as error:
            if self.dataset.source != "custom":
                raise
            message = f"{error} (config custom_datasets.{self.dataset.name}.columns.{key})"
            if key.startswith("feedback"):
                message = message.replace(".columns.feedback.column", ".feedback.column")
            if self.separator is not None and len(self.header) == 1:
                message += (
                    f"; the header is one field when split on {self.separator!r}: is "
                    f"custom_datasets.{self.dataset.name}.separator right?"
                )
            raise InputError(message) from None

    def read(self, fields: dict[str, str], numeric: tuple[str, ...] = ()) -> pd.DataFrame:
        """The columns ``fields`` (raw name -> our name) in file order: ids as categoricals,
        the columns ``numeric`` (our names) as float64 where every value is a number (else
        as text, for the caller to report the bad value), the rest as text."""
        log.info("reading columns %s of %s", ", ".join(fields), self.label)
        if self.dataset.format == "recbole":
            return _read_atomic(self.source, self.member, fields, numeric)
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.dataset.format == "parquet":
            frame = pq.read_table(self.path, columns=list(fields)).to_pandas()
        else:
            floats = {raw for raw, ours in fields.items() if ours in numeric}
            try:
                frame = self._read_text(fields, floats)
            except pa.ArrowInvalid:  # a bad number: as text, for the caller to name it
                frame = self._read_text(fields, set())
        frame = frame[list(fields)]
        frame.columns = list(fields.values())
        for name in frame.columns:
            if name in ("user_id", "item_id"):
                frame[name] = frame[name].astype(str).astype("category")
        return frame

    def _read_text(self, fields: dict[str, str], floats: set[str]) -> pd.DataFrame:
        """A csv/tsv table's columns ``fields`` streamed with pyarrow; ``floats`` (raw
        names) as float64, the others as strings."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        reader = pacsv.open_csv(
            self.path,
            parse_options=pacsv.ParseOptions(delimiter=self.separator),
            convert_options=pacsv.ConvertOptions(
                include_columns=list(fields),
                column_types={
                    name: pa.float64() if name in floats else pa.string() for name in fields
                },
            ),
        )
        batches, rows = [], 0
        for batch in reader:
            rows += batch.num_rows
            batches.append(batch)
            if rows % 10_000_000 < batch.num_rows:
                log.info("read %d rows of %s", rows, self.label)
        return pa.Table.from_batches(batches, schema=reader.schema).to_pandas()


def _keep_feedback(frame: pd.DataFrame, dataset: Dataset, label: str) -> pd.DataFrame:
    """The rows whose feedback column equals ``dataset.feedback_equals`` (numerically when
    that is a number), without the column; ``frame`` itself when there is none."""
    if "feedback" not in frame:
        return frame
    wanted = dataset.feedback_equals
    values = frame["feedback"].astype(str).str.strip()
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        keep = _to_number(values, label, dataset.feedback_column) == float(wanted)
    else:
        keep = values == str(wanted)
    log.info(
        "%s: %d of %d rows have %s == %s",
        label,
        int(keep.sum()),
        len(frame),
        dataset.feedback_column,
        wanted,
    )
    return frame[keep.to_numpy()].drop(columns="feedback")


def read_item_genres(dataset: str | Dataset, path: str | os.PathLike) -> pd.DataFrame:
    """(item_id, genre) of ``dataset``: genres space-separated, as in its .item file. A
    declared dataset's genres come from its genre column in the interactions file (the
    first row of each item), split on its ``genre_separator``; spaces inside a genre name
    become '_'."""
    dataset = dataset if isinstance(dataset, Dataset) else catalogue.get(dataset)
    if not dataset.has_genres:
        raise InputError(f"dataset '{dataset.name}' has no item genres")
    if dataset.source == "custom":
        table = _Table(dataset, path)
        fields = {
            table.column(dataset.item_columns, "item"): "item_id",
            table.column(dataset.genre_columns, "genres"): "genre",
        }
        frame = table.read(fields).drop_duplicates("item_id", keep="first")
        genres = frame["genre"].astype(str).str.split(dataset.genre_separator, regex=False)
        joined = genres.map(
            lambda parts: " ".join(
                p.strip().replace(" ", "_") for p in parts if p.strip() and p.strip() != NO_GENRE
            )
        )
        return pd.DataFrame(
            {"item_id": frame["item_id"].astype(str).to_numpy(), "genre": joined.to_numpy()}
        )
    source = RawSource(path)
    member = source.member(dataset.name, ".item")
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


def dataset_stats(
    preprocessed: pd.DataFrame, splits: dict[str, pd.DataFrame], protocol: str = "global"
) -> dict:
    """stats.json: counts and sparsity (%) after the k-core (step 3); test users and split
    sizes after the final drop (step 5); the split ``protocol`` (global or per-user)."""
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
    "protocol": "split protocol",
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
    text = ("sparsity (%)", "split protocol")
    return frame.astype({c: "int64" for c in frame.columns if c not in text})
