"""The allowed range of every numeric setting that the ``userfair`` command and the
workflow's config share: one definition for both.

The command checks its options with :func:`option` (an argparse ``type``), the workflow's
config check (``userfair.workflow.schema``) checks its config keys of these settings
(``userfair.workflow.config_bounds``) with :func:`check`, and a test checks that
config/config.schema.yaml states the same bounds. Integers are plain integers (``10.0`` and
``true`` are refused); numbers are finite (``nan`` and ``inf`` are refused).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """The range of one setting: an integer or a finite number, with inclusive
    (``minimum``/``maximum``) or exclusive (``above``/``below``) limits."""

    integer: bool
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    what: str = ""

    def error(self, value) -> str | None:
        """Why ``value`` is outside the bound, or None when it is inside."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "an integer" if self.integer else "a number"
            return f"{value!r} is not {kind}"
        if self.integer and not isinstance(value, int):
            return f"{value!r} is not an integer (write it without a decimal point)"
        if not math.isfinite(value):
            return f"{value!r} is not a finite number"
        if self.minimum is not None and value < self.minimum:
            return f"{value!r} is less than the minimum of {_plain(self.minimum)}"
        if self.maximum is not None and value > self.maximum:
            return f"{value!r} is greater than the maximum of {_plain(self.maximum)}"
        if self.above is not None and value <= self.above:
            return f"{value!r} is not greater than {_plain(self.above)}"
        if self.below is not None and value >= self.below:
            return f"{value!r} is not less than {_plain(self.below)}"
        return None

    def describe(self) -> str:
        """The range in words: ``an integer >= 1``, ``a number in [0, 1]``."""
        kind = "an integer" if self.integer else "a number"
        low = (
            ""
            if self.minimum is None and self.above is None
            else (
                f"[{_plain(self.minimum)}" if self.minimum is not None else f"({_plain(self.above)}"
            )
        )
        high = (
            ""
            if self.maximum is None and self.below is None
            else (
                f"{_plain(self.maximum)}]" if self.maximum is not None else f"{_plain(self.below)})"
            )
        )
        if low and high:
            return f"{kind} in {low}, {high}"
        if low:
            return f"{kind} {'>=' if low[0] == '[' else '>'} {low[1:]}"
        if high:
            return f"{kind} {'<=' if high[-1] == ']' else '<'} {high[:-1]}"
        return kind


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


#: Every shared setting's bound, by the name of the ``userfair`` option (without ``--``).
BOUNDS: dict[str, Bound] = {
    "k": Bound(True, minimum=1, what="list length and cut-off"),
    "seed": Bound(True, minimum=0, maximum=2**32 - 1, what="numpy's and torch's seed range"),
    "epsilon": Bound(False, minimum=0, maximum=1, what="PEU threshold on utilities in [0, 1]"),
    "gamma": Bound(False, minimum=0, maximum=1, what="UF similarity mix"),
    "block-size": Bound(True, minimum=1, what="rows per block"),
    "resamples": Bound(True, minimum=0, what="bootstrap resamples"),
    "level": Bound(False, above=0, below=1, what="interval level"),
    "worst": Bound(True, minimum=0, what="worst cases listed"),
    "neighbours": Bound(True, minimum=1, what="most similar users looked at"),
    "sample-users": Bound(False, above=0, maximum=1, what="sampled share of the users"),
}


def check(name: str, value, label: str | None = None) -> None:
    """Raise ValueError, naming ``label`` (default ``--NAME``), when ``value`` is outside
    the bound of setting ``name``."""
    bound = BOUNDS[name]
    why = bound.error(value)
    if why is not None:
        raise ValueError(f"{label or '--' + name}: {why}; give {bound.describe()}")


def option(name: str):
    """An argparse ``type`` for option ``--NAME``: parses the text as an integer or a number
    and checks it against :data:`BOUNDS` (argparse reports the message in one line)."""
    bound = BOUNDS[name]

    def parse(text: str):
        try:
            value = int(text) if bound.integer else float(text)
        except ValueError:
            kind = "an integer" if bound.integer else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        why = bound.error(value)
        if why is not None:
            raise argparse.ArgumentTypeError(f"{why}; give {bound.describe()}")
        return value

    parse.__name__ = name
    return parse
