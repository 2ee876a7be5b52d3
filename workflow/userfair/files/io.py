"""File helpers shared by every stage: atomic writes, RecBole atomic files, JSON, parquet, CSV.

Every writer goes through :func:`atomic_path`, so an interrupted job never leaves a
half-written file under its final name. Every reader of a file passed between rules (JSON,
parquet, npz, pth) goes through :func:`read_json`, :func:`read_parquet`, :func:`read_npz` or
:func:`read_pth`: a truncated or unreadable file stops the job with one line naming the file,
and why (a :class:`FileError` with the ``path``; the workflow adds the rule that writes the
file and the command that rebuilds it: ``userfair.workflow.layout``). No reader runs
code from a file: ``.pth`` files are written and read through :mod:`userfair.files.safe_pth`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from userfair.files import safe_pth


class InputError(ValueError):
    """Bad input: the message names the file and the field and says what was expected."""


class FileError(InputError):
    """A named file that cannot be used: ``path`` the file, ``reason`` the one-line message
    without advice, ``advice`` what to do (the library's; the workflow gives the command that
    rebuilds a file of one of its rules instead: ``userfair.workflow.layout.explain``)."""

    def __init__(self, path, reason: str, advice: str = ""):
        self.path, self.reason, self.advice = str(path), reason, advice
        super().__init__(f"{reason}; {advice}" if advice else reason)


class DamagedFileError(FileError):
    """A file passed between rules is truncated or unreadable."""


class UnsafeFileError(FileError):
    """A ``.pth`` file that would run code if loaded; it was refused without being loaded."""


def damaged(path, kind: str, error: BaseException) -> DamagedFileError:
    """The one-line error of an unreadable ``kind`` file: the file and the reason."""
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return DamagedFileError(
        path, f"{path}: truncated or unreadable {kind} file ({type(error).__name__}: {reason})"
    )


def check_fields(doc, path, fields: dict, kind: str):
    """``doc`` (read from ``path``) when it is a mapping with every field of ``fields``
    (name -> type or tuple of types); else a one-line FileError naming the file and the
    field."""
    problem = None
    if not isinstance(doc, dict):
        problem = f"it holds a {type(doc).__name__}, not a mapping"
    else:
        for field, types in fields.items():
            if field not in doc:
                problem = f"field {field!r} is missing"
            elif not isinstance(doc[field], types):
                problem = f"field {field!r} is a {type(doc[field]).__name__}"
            if problem:
                break
    if problem is None:
        return doc
    raise FileError(path, f"{path}: not a {kind} file ({problem})")


def _existing(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileError(path, f"{path}: file not found")
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(obj, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, allow_nan=True) + "\n")


def read_json(path: str | os.PathLike):
    """The JSON document in ``path``; DamagedFileError when it does not parse."""
    path = _existing(path)
    try:
        return json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as error:
        raise damaged(path, "JSON", error) from error


def read_parquet(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """The table in the parquet file ``path``; DamagedFileError when it cannot be read."""
    path = _existing(path)
    try:
        return pd.read_parquet(path, **kwargs)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise damaged(path, "parquet", error) from error


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of the .npz file ``path`` (read now, so that a damaged member fails
    here); DamagedFileError when it cannot be read."""

    path = _existing(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise damaged(path, "npz", error) from error


def refused(path, reason: str) -> UnsafeFileError:
    """The one-line error of a ``.pth`` file that would run code if loaded: the file, why,
    and what to do."""
    return UnsafeFileError(
        path,
        f"{path}: refused, not loaded: {reason} (a .pth file in Python's pickle form can run "
        "code when loaded; nothing of it was run)",
        "delete it or write it again with userfair.files.io.write_pth",
    )


def write_pth(obj, path: str | os.PathLike, classes=()) -> None:
    """Write ``obj`` (tensors, arrays, plain containers; objects of ``classes``) to
    ``path`` atomically in the format of :mod:`userfair.files.safe_pth`, which loads without
    running code."""
    with atomic_path(path) as tmp:
        safe_pth.dump(obj, tmp, classes)


def read_pth(path: str | os.PathLike, map_location="cpu", classes=()):
    """The object :func:`write_pth` wrote to ``path`` (a checkpoint, the RecBole dataset:
    objects of ``classes`` only), or a file of tensors and plain containers as torch loads it
    with ``weights_only=True``. A file that needs any other Python global to load (a pickle
    of the format before, a crafted file) is refused unloaded (:class:`UnsafeFileError`,
    naming the file); a damaged one gives DamagedFileError."""
    path = _existing(path)
    try:
        return safe_pth.load(path, classes=classes, map_location=map_location)
    except (safe_pth.UnsafeFileError, safe_pth.FormatError) as error:
        raise refused(path, str(error)) from None
    except MemoryError:
        raise
    except Exception as error:  # torch fails in many ways on a damaged file
        raise damaged(path, "pth", error) from error


# RecBole atomic files: tab-separated, header "name:type" per column.
INTER_TYPES = {"user_id": "token", "item_id": "token", "rating": "float", "timestamp": "float"}


def parse_atomic_header(line: str) -> dict[str, str]:
    """Field name -> header cell (``name:type``) of the first line of a RecBole atomic file,
    in column order. The one parser of atomic-file headers (.inter, .item, raw or split)."""
    cells = line.rstrip("\r\n").split("\t")
    return {cell.split(":")[0]: cell for cell in cells}


def read_atomic_header(path: str | os.PathLike) -> dict[str, str]:
    """:func:`parse_atomic_header` of the file at ``path``; InputError when it is missing."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_atomic_header(handle.readline())


def write_inter(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``frame`` (columns user_id, item_id[, rating, timestamp]) as a RecBole .inter file."""
    header = [f"{c}:{INTER_TYPES.get(c, 'float')}" for c in frame.columns]
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, sep="\t", index=False, header=header)


def read_inter(path: str | os.PathLike) -> pd.DataFrame:
    """Read a RecBole atomic .inter file; columns lose their ``:type`` suffix.

    user_id and item_id are kept as strings (external tokens). Raises InputError naming the
    file when user_id or item_id is missing.
    """
    fields = read_atomic_header(path)
    header, names = list(fields.values()), list(fields)
    for required in ("user_id", "item_id"):
        if required not in names:
            raise InputError(
                f"{path}: missing column '{required}' in header {header!r} "
                "(expected a RecBole atomic file: 'user_id:token<TAB>item_id:token...')"
            )
    dtypes = {h: (str if h.split(":")[0] in ("user_id", "item_id") else "float64") for h in header}
    try:
        frame = pd.read_csv(path, sep="\t", dtype=dtypes, keep_default_na=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as error:
        numeric = [n for n in names if n not in ("user_id", "item_id")]
        where = _bad_atomic_line(path, names, numeric)
        if where is None:
            reason = (str(error).strip().splitlines() or [""])[0]
            where = f"cannot be read ({type(error).__name__}: {reason})"
        raise InputError(
            f"{path}: {where} (a RecBole atomic file: UTF-8, tab-separated, one value per "
            "header field)"
        ) from None
    frame.columns = names
    for column in ("user_id", "item_id"):
        empty = (frame[column].isna() | (frame[column] == "")).to_numpy()
        if empty.any():
            numeric = [n for n in names if n not in ("user_id", "item_id")]
            where = _bad_atomic_line(path, names, numeric) or (
                f"line {int(empty.argmax()) + 2}: field {column!r} is empty"
            )
            raise InputError(
                f"{path}: {where} (a RecBole atomic file: UTF-8, tab-separated, one value per "
                "header field)"
            )
    return frame


def _bad_atomic_line(path, names: list[str], numeric: list[str]) -> str | None:
    """The first data line of an atomic file that is not UTF-8, has another number of
    fields than the header, or holds a non-number in a ``numeric`` field, in words."""
    with open(path, "rb") as handle:
        handle.readline()
        for number, raw in enumerate(handle, start=2):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                return f"line {number}: byte {raw[error.start]:#04x} is not UTF-8"
            if not line:
                continue
            values = line.split("\t")
            if len(values) != len(names):
                return f"line {number} has {len(values)} fields, the header {len(names)}"
            for name, value in zip(names, values):
                if name in numeric:
                    try:
                        float(value)
                    except ValueError:
                        return f"line {number}: field {name!r} is {value!r}, not a number"
    return None


def write_dataset_parquet(frame: pd.DataFrame, dataset: str, path: str | os.PathLike) -> None:
    """Write ``frame`` as parquet with a leading ``dataset`` column (an experiment's table)."""
    frame = frame.copy()
    frame.insert(0, "dataset", dataset)
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike, **options) -> None:
    """Write ``frame`` as parquet, atomically (``options`` go to ``DataFrame.to_parquet``)."""
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, **options)


def write_csv(frame: pd.DataFrame, path: str | os.PathLike, *, sep: str = ",") -> None:
    """Write ``frame`` as CSV (or TSV with ``sep="\\t"``) without its index, atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, sep=sep, index=False)


def read_stacked_parquet(paths) -> pd.DataFrame:
    """The frames of several parquet files stacked in the given order (fresh index)."""
    return pd.concat([read_parquet(p) for p in paths], ignore_index=True)
