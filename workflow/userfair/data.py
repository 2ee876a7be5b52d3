"""Reading raw datasets, preprocessing and splitting them (docs/method.md#data), and Table 1.

Frames of interactions have the columns ``user_id`` and ``item_id`` (external ids as
strings or categoricals) and, where the dataset has them, ``rating`` and ``timestamp``.
Every step keeps the rows in the order of the raw file, which the temporal split relies on
to break ties between equal timestamps.
"""

from __future__ import annotations

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


IDS = ("user_id", "item_id")


def _read_delimited(
    opener,
    label: str,
    fields: dict[str, str],
    numeric: tuple[str, ...],
    *,
    delimiter: str,
    quoted: bool,
) -> pd.DataFrame:
    """The columns ``fields`` (raw name -> our name) of a delimited text file, in file
    order, streamed with pyarrow: the id columns dictionary-encoded (so a 20-million-row
    file never holds their text; categoricals with sorted categories, as pandas makes
    them), the columns ``numeric`` (our names) as float64 where every value is a number
    (else as text, for the caller to name the bad value), the rest as text. ``opener()``
    gives a fresh path or binary handle. Empty cells stay empty strings."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    ids = pa.dictionary(pa.int32(), pa.string())

    def read(floats: bool) -> dict[str, pd.Series]:
        types = {
            raw: ids if ours in IDS else
            pa.float64() if floats and ours in numeric else pa.string()
            for raw, ours in fields.items()
        }  # fmt: skip
        with opener() as source:
            reader = pacsv.open_csv(
                source,
                read_options=pacsv.ReadOptions(block_size=1 << 24),
                parse_options=pacsv.ParseOptions(
                    delimiter=delimiter, quote_char='"' if quoted else False
                ),
                convert_options=pacsv.ConvertOptions(
                    include_columns=list(fields),
                    column_types=types,
                    null_values=[],
                    strings_can_be_null=False,
                ),
            )
            batches, rows = [], 0
            for batch in reader:
                rows += batch.num_rows
                batches.append(batch)
                if rows % 10_000_000 < batch.num_rows:
                    log.info("read %d rows of %s", rows, label)
            table = pa.Table.from_batches(batches, schema=reader.schema)
        del batches
        table = table.unify_dictionaries()
        columns = {}
        for name in table.column_names:  # one column at a time, freed once converted
            columns[name] = table.column(name).to_pandas()
            table = table.drop_columns([name])
        del table
        pa.default_memory_pool().release_unused()  # give the parser's buffers back
        return columns

    try:  # numbers as numbers: a text column of 20M ratings would cost gigabytes
        read_columns = read(True)
    except pa.ArrowInvalid:  # a bad number: as text, so that _to_number names its row
        try:
            read_columns = read(False)
        except pa.ArrowInvalid as error:  # a short row, invalid UTF-8, ...
            raise InputError(
                f"{label}: cannot be read as a {delimiter!r}-separated table: {error}"
            ) from None
    columns = {ours: read_columns[raw] for raw, ours in fields.items()}
    for name in IDS:
        if name in columns:
            columns[name] = _sorted_categories(columns[name])
    return pd.DataFrame(columns, copy=False)


def _sorted_categories(column: pd.Series) -> pd.Series:
    """``column`` as a categorical whose categories are sorted (pandas' own order); a
    categorical is recoded through its (small) categories, its codes copied once."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(str).astype("category")
    categories = column.cat.categories
    if categories.is_monotonic_increasing:
        return column
    order = categories.argsort()
    recode = np.empty(len(order), dtype=column.cat.codes.dtype)
    recode[order] = np.arange(len(order))
    codes = column.cat.codes.to_numpy()
    codes = (
        np.where(codes >= 0, recode[codes], codes) if codes.min(initial=0) < 0 else recode[codes]
    )
    return pd.Series(
        pd.Categorical.from_codes(codes, categories[order]), index=column.index, name=column.name
    )


def _read_atomic(
    source: RawSource, member: str, fields: dict[str, str], numeric: tuple[str, ...]
) -> pd.DataFrame:
    """Read the atomic-file columns ``fields`` (raw name -> our name) of ``member``; the
    columns ``numeric`` (our names) as float64 (see ``_read_delimited``)."""
    header, label = _atomic_header(source, member), source.label(member)
    cells = {header[name]: ours for name, ours in fields.items()}
    frame = _read_delimited(
        lambda: source.open(member), label, cells, numeric,
        delimiter="\t", quoted=False,
    )  # fmt: skip
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
    return values.astype("float64", copy=False)


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
    frame.index = pd.RangeIndex(len(frame))  # in place: no copy of 20M rows
    return frame


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
        if self.dataset.format == "parquet":
            import pyarrow.parquet as pq

            frame = pq.read_table(self.path, columns=list(fields)).to_pandas()
            frame = frame[list(fields)]
            frame.columns = list(fields.values())
            for name in IDS:
                frame[name] = _sorted_categories(frame[name])
            return frame
        return _read_delimited(
            lambda: open(self.path, "rb"), self.label, fields, numeric,
            delimiter=self.separator, quoted=True,
        )  # fmt: skip


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


def keep_ratings_at_least(frame: pd.DataFrame, min_rating: float) -> pd.DataFrame:
    """Step 2 (rated datasets): ratings >= ``min_rating`` become interactions; the rest go."""
    keep = (frame["rating"] >= min_rating).to_numpy()
    return frame.loc[keep, [name for name in frame.columns if name != "rating"]]


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


def preprocess(frame: pd.DataFrame, *, min_rating: float, core: int) -> pd.DataFrame:
    """Steps 1-3 of docs/method.md#data in order; the result has user_id, item_id[, timestamp]."""
    return _ratings_and_core(drop_duplicates_keep_latest(frame), min_rating, core)


def preprocess_file(
    dataset: str | Dataset, path: str | os.PathLike, *, min_rating: float, core: int
) -> pd.DataFrame:
    """``preprocess(read_interactions(dataset, path))``, with the raw frame freed as soon as
    step 1 has copied out the rows it keeps (the rule's route: a caller that holds the raw
    frame holds one more copy of the ratings through steps 2-3)."""
    return _ratings_and_core(
        drop_duplicates_keep_latest(read_interactions(dataset, path)), min_rating, core
    )


def _ratings_and_core(frame: pd.DataFrame, min_rating: float, core: int) -> pd.DataFrame:
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


def _as_text(column: pd.Series) -> np.ndarray:
    """An id column as an object array of strings; a categorical's rows share its
    categories' string objects (8 bytes a row, not a new string each)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if len(codes) == 0 or codes.min() >= 0:
            return column.cat.categories.astype(str).to_numpy(dtype=object)[codes]
    return column.astype(str).to_numpy()


def as_written(part: pd.DataFrame) -> pd.DataFrame:
    """Interactions as written to files: string ids, integral timestamps as integers."""
    out = pd.DataFrame({"user_id": _as_text(part["user_id"]), "item_id": _as_text(part["item_id"])})
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
