"""Steps of the figures stage (workflow/rules/figures.smk): each figure from its tables,
PDF and PNG, drawn with the config's ``plots:`` style. Every figure rule runs
scripts/figure.py, whose one step, :func:`draw`, draws the figures the drawing modules
declare for it (userfair.workflow.figure_registry), a figure per dataset too (fig_groups)."""

from __future__ import annotations

import importlib
import logging

from userfair.files.io import atomic_path
from userfair.workflow import figure_registry, figure_style
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)

#: The modules that declare the figures :func:`draw` draws (figure_registry.drawing_modules,
#: imported: their declarations are in figure_registry.FIGURES); a new drawing module joins
#: by declaring a figure.
DRAWING_MODULES = tuple(map(importlib.import_module, figure_registry.drawing_modules()))


def _written(*paths: Path) -> None:
    log.info("%s written", ", ".join(map(str, paths)))


def draw(
    rule: str, inputs: dict, outputs: dict, params: dict, wildcards: dict | None = None
) -> None:
    """Every figure rule that runs scripts/figure.py: each figure the drawing modules
    declare for ``rule`` (userfair.workflow.figure_registry.figure): its tables read from
    the rule's named ``inputs`` as declared, drawn with the ``style`` param, the params and
    the job's ``wildcards`` it names, saved as its ``[PART_]pdf`` and ``[PART_]png``
    outputs, and its reading (given the same params and wildcards) written to the
    ``[PART_]reading`` output when the rule has one."""
    look = figure_style.Style(**params["style"])
    for declared in figure_registry.of(rule):
        tables = [read(inputs[name]) for name, read in declared.reads.items()]
        taken = {name: params[name] for name in declared.params}
        taken |= {name: (wildcards or {})[name] for name in declared.wildcards}
        pdf, png = outputs[declared.output("pdf")], outputs[declared.output("png")]
        figure_style.save(declared.draw(*tables, look, **taken), pdf, png, look)
        reading = outputs.get(declared.output("reading"))
        if declared.reading is not None and reading is not None:
            _write_text(reading, declared.reading(*tables, **taken))
        _written(pdf, png)


def _write_text(path: Path | None, text: str) -> None:
    """``text`` -> ``path`` (a figure's reading), atomically; nothing without a path."""
    if path is not None:
        with atomic_path(path) as tmp:
            tmp.write_text(text)
