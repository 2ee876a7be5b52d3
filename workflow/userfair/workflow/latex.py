"""The workflow's LaTeX tables: a frame as a booktabs table (escaped cells and titles, bold
cells), written beside its CSV (Tables 1-3 and the interval tables)."""

from __future__ import annotations

import pandas as pd

from userfair.files.io import atomic_path


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
