"""The figures the figure rules draw, each declared beside its drawing.

A drawing module (a module of ``userfair.workflow`` that declares a figure: ``plots``,
``gamma_figures``, ``analysis_figures``, ``replicate_figure``, ``variant_figures``,
``group_figure``; :func:`drawing_modules` finds them) declares each of its figures with
:func:`figure`: the rule that draws it, the rule's inputs it reads (and how), the rule's
params and the job's wildcards it takes, the part of the rule's outputs it fills and its
reading in words, if any. Every rule of such a figure runs ``scripts/figure.py``, whose one
call, ``userfair.workflow.steps.figures.draw(RULE, ...)``, reads the declared tables, draws
them, saves PDF and PNG and writes the reading. The rule's outputs follow one convention
(``userfair.workflow.layout.figure_file``, a folder of figures for a figure per dataset;
fig_variants, older than it, keeps its entry in ``layout.OUTPUTS``): no step and no script
per figure (docs/architecture.md, "Adding a figure").

This module imports no plotting library: the declarations are plain values, and the
drawing modules are found by reading their source (the workflow lists their files as the
figure rules' ``code=`` inputs without importing them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from userfair.files.io import read_stacked_parquet
from userfair.workflow.steps import only, read_optional_csv

# --- how a declared input is read ---------------------------------------------------------


def stacked(paths: Sequence[str]) -> pd.DataFrame:
    """The parquet files of an input (one a dataset), stacked in order."""
    return read_stacked_parquet(list(paths))


def csv(path: str) -> pd.DataFrame:
    """One CSV table."""
    return pd.read_csv(path)


def csv_with(**dtypes) -> Callable[[str], pd.DataFrame]:
    """One CSV table with the columns ``dtypes`` read as their types (a ``group`` column of
    labels as ``str``)."""

    def read(path: str) -> pd.DataFrame:
        return pd.read_csv(path, dtype=dtypes)

    return read


def optional_csv(paths: Sequence[str] | str) -> pd.DataFrame | None:
    """The CSV table of an optional input (``userfair.workflow.steps.read_optional_csv`` of
    its one path): ``None`` when the rule gave no file, an empty frame when the file has no
    column (a stage that had nothing to tabulate)."""
    return read_optional_csv(only(paths))


# --- the declarations ---------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """One figure of a figure rule.

    ``draw(*tables, style, **params)`` returns the matplotlib figure, ``tables`` the rule's
    inputs named in ``reads``, each read by its reader, in that order, ``params`` the
    rule's params named in ``params`` and the job's wildcards named in ``wildcards`` (a
    figure per value of them: fig_groups's ``dataset``; its files then follow
    ``layout.FIGURE_STEMS``). ``part``: the rule's outputs it fills, ``pdf``, ``png`` and
    ``reading`` for a rule of one figure (``""``), else ``PART_pdf``, ``PART_png`` and
    ``PART_reading``. ``reading(*tables, **params)``: the figure's reading in words
    (reStructuredText the report's caption includes), written when the rule has that
    output; it takes the same params and wildcards as ``draw``."""

    rule: str
    draw: Callable
    reads: dict[str, Callable]
    params: tuple[str, ...] = ()
    part: str = ""
    reading: Callable[..., str] | None = None
    wildcards: tuple[str, ...] = ()

    def output(self, kind: str) -> str:
        """The name of this figure's output ``kind`` (pdf, png, reading) in its rule."""
        return f"{self.part}_{kind}" if self.part else kind


#: Every declared figure, by rule, in the order of declaration.
FIGURES: dict[str, list[Figure]] = {}


def figure(
    rule: str,
    *,
    reads: dict[str, Callable],
    params: Sequence[str] = (),
    part: str = "",
    reading: Callable[..., str] | None = None,
    wildcards: Sequence[str] = (),
) -> Callable[[Callable], Callable]:
    """Declare the decorated drawing function as a figure of ``rule`` (see :class:`Figure`);
    the function itself is returned unchanged. Used as a decorator at the top level of a
    module of ``userfair.workflow`` (a line that starts ``@figure(``), which makes that
    module a drawing module (:func:`drawing_modules`)."""
    if not rule.startswith("fig_"):
        raise ValueError(f"figure rule {rule!r}: a figure rule's name starts with fig_")

    def declare(draw: Callable) -> Callable:
        declared = FIGURES.setdefault(rule, [])
        if any(f.part == part for f in declared):
            raise ValueError(f"figure rule {rule}: part {part!r} declared twice")
        declared.append(
            Figure(rule, draw, dict(reads), tuple(params), part, reading, tuple(wildcards))
        )
        return draw

    return declare


def of(rule: str) -> list[Figure]:
    """The figures of ``rule``; a rule with none is named."""
    if rule not in FIGURES:
        raise KeyError(
            f"rule {rule} runs scripts/figure.py but no drawing module declares a figure of "
            f"it (userfair.workflow.figure_registry.figure); declared: {sorted(FIGURES)}"
        )
    return FIGURES[rule]


#: A top-level declaration of a figure in a module's source (:func:`figure` as a decorator).
DECLARES = re.compile(r"^@figure\(", re.M)


def drawing_modules(folder: Path | None = None) -> list[str]:
    """The drawing modules: every module of ``userfair.workflow`` (this module's package,
    not its subpackages; its copy in ``folder``) whose source declares a figure
    (:data:`DECLARES`), by name, in order. Read, not imported: the workflow lists their
    files as the figure rules' ``code=`` inputs without importing matplotlib, and
    ``steps.figures`` imports them, so a new drawing module needs no list of them edited."""
    folder = Path(__file__).parent if folder is None else folder
    return [
        f"{__package__}.{path.stem}"
        for path in sorted(folder.glob("*.py"))
        if DECLARES.search(path.read_text(encoding="utf-8"))
    ]
