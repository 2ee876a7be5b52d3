"""File helpers shared by every stage: atomic writes, RecBole atomic files, JSON, tables.

Every writer goes through :func:`atomic_path`, so an interrupted job never leaves a
half-written file under its final name.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

import pandas as pd


class InputError(ValueError):
    """Bad input: the message names the file and the field and says what was expected."""


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
    return json.loads(Path(path).read_text())


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
    frame = pd.read_csv(path, sep="\t", dtype=dtypes, keep_default_na=False)
    frame.columns = names
    return frame


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
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def write_table(
    frame: pd.DataFrame,
    csv_path,
    tex_path,
    *,
    bold=None,
    caption: str = "",
    label: str = "",
    float_format: str = "{:.4f}",
) -> None:
    """Write ``frame`` as CSV and as a booktabs LaTeX table.

    ``bold`` is an optional boolean frame of the same shape: True cells are set in bold.
    """
    with atomic_path(csv_path) as tmp:
        frame.to_csv(tmp)
    with atomic_path(tex_path) as tmp:
        tmp.write_text(
            to_booktabs(frame, bold=bold, caption=caption, label=label, float_format=float_format)
        )


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_ESCAPES.get(char, char) for char in text)


def _cell(value, float_format: str) -> str:
    if hasattr(value, "item"):  # numpy scalar -> Python scalar
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "--" if value != value else float_format.format(value)
    if isinstance(value, int):
        return f"{value:,}".replace(",", "{,}")
    return latex_escape(str(value))


def to_booktabs(
    frame: pd.DataFrame,
    *,
    bold=None,
    caption: str = "",
    label: str = "",
    float_format: str = "{:.4f}",
) -> str:
    """A LaTeX table (booktabs rules) of ``frame`` with its index as the first column.

    Cells keep their column's type (integers get thousands separators, floats
    ``float_format``, NaN prints as --). Column titles, index labels and text cells are
    LaTeX-escaped (:func:`latex_escape`); ``caption`` and ``label`` are written as given, so
    they may hold LaTeX.
    """
    cols = [str(frame.index.name or "")] + [str(c) for c in frame.columns]
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{caption}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [
        r"\begin{tabular}{l" + "r" * len(frame.columns) + "}",
        r"\toprule",
        " & ".join(_cell(c, float_format) for c in cols) + r" \\",
        r"\midrule",
    ]
    columns = [frame.iloc[:, j].tolist() for j in range(frame.shape[1])]  # keeps each dtype
    for i, index in enumerate(frame.index):
        cells = []
        for j, column in enumerate(columns):
            text = _cell(column[i], float_format)
            if bold is not None and bool(bold.iloc[i, j]):
                text = rf"\textbf{{{text}}}"
            cells.append(text)
        lines.append(" & ".join([_cell(index, float_format)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)
