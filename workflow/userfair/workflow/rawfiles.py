"""Reading the raw files of a dataset: the interactions and item genres of the built-in
datasets (ML-100k, ML-10M, ML-20M, Last.fm: RecBole atomic files in a folder or zip;
QK-video: a csv) and of declared custom datasets (csv, tsv, parquet or atomic files), with
errors that name the file, the column and the config key.

Frames of interactions have the columns ``user_id`` and ``item_id`` (external ids as
categoricals with sorted categories) and, where the dataset has them, ``rating`` and
``timestamp``, in the order of the raw file (``userfair.workflow.preprocess``'s temporal split
relies on it
to break ties between equal timestamps).
"""

from __future__ import annotations

import io
import logging
import os
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from userfair.files.io import InputError, parse_atomic_header
from userfair.workflow import catalogue
from userfair.workflow.catalogue import Dataset

log = logging.getLogger(__name__)

NO_GENRE = "(no genres listed)"


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
    """The header of an atomic file inside ``source``
    (``userfair.files.io.parse_atomic_header``)."""
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
    values = pd.to_numeric(column, errors="coerce").astype("float64", copy=False)
    finite = np.isfinite(values.to_numpy())
    if not finite.all():
        row = int(np.argmin(finite))
        held = column.iloc[row]
        if not (isinstance(held, str) and np.isnan(values.iloc[row])):  # inf, -inf, nan
            raise InputError(
                f"{label}: column '{field}' must hold finite numbers; data row {row + 1} "
                f"holds {held!r}: remove the row or give it a finite {field}"
            )
        raise InputError(
            f"{label}: column '{field}' must be numeric; data row {row + 1} holds {held!r}"
        )
    return values


def read_interactions(
    dataset: str | Dataset, path: str | os.PathLike, counts: bool = False
) -> pd.DataFrame:
    """The raw interactions of ``dataset`` (a catalogue name or a declared :class:`Dataset`)
    from ``path`` (a folder, zip or ``.inter`` file of RecBole atomic files, or a csv/tsv/
    parquet table), in file order with a 0-based RangeIndex: ``user_id``, ``item_id`` and,
    where the dataset has them, ``rating`` and ``timestamp``; with ``counts`` also
    ``count`` where it has a count column (Last.fm's play counts). A feedback column keeps
    only the rows where it equals the declared value."""
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
        (dataset.count_column if counts else None, "count", "count"),
    ):
        if column:
            fields[table.column(column, key)] = ours
    numeric = tuple(o for o in fields.values() if o in ("rating", "timestamp", "count"))
    frame = table.read(fields, numeric)
    if frame.empty:
        raise InputError(
            f"{table.label}: no interactions (a header and no data rows; the raw interactions "
            f"of {dataset.name}, config {_path_key(dataset)})"
        )
    frame = _keep_feedback(frame, dataset, table.label)
    for name, column in (
        ("rating", dataset.rating_column),
        ("timestamp", dataset.timestamp_column),
        ("count", dataset.count_column),
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
        if self.path.stat().st_size == 0:
            raise InputError(
                f"{path}: the file is empty (the raw interactions of {dataset.name}; config "
                f"{_path_key(dataset)}): expected a header line, then one interaction a line"
            )
        if dataset.format == "parquet":
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
