"""A claim's verdict from its parts (docs/analyses.md#claims): a part with an interval over
the run's draws decides only when the whole interval lies on one side of its threshold
(else it is undecided); one without reads the point value; a claim holds when all its
parts hold and fails when one part fails for certain."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

HOLDS, FAILS, UNDECIDED, UNTESTABLE = "holds", "does not hold", "undecided", "not testable"
VERDICTS = (HOLDS, FAILS, UNDECIDED, UNTESTABLE)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    evidence: str


# --- deciding one part ------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """The values that satisfy a part: from ``low`` to ``high``, each end in or out."""

    low: float = -math.inf
    high: float = math.inf
    low_in: bool = True
    high_in: bool = True

    def contains(self, x: float) -> bool:
        above = x > self.low or (self.low_in and x == self.low)
        below = x < self.high or (self.high_in and x == self.high)
        return bool(above and below)

    def misses(self, low: float, high: float) -> bool:
        """[low, high] lies wholly outside."""
        return bool(
            high < self.low
            or (high == self.low and not self.low_in)
            or low > self.high
            or (low == self.high and not self.high_in)
        )


def at_most(t: float) -> Region:
    return Region(high=t)


def at_least(t: float) -> Region:
    return Region(low=t)


def below(t: float) -> Region:
    return Region(high=t, high_in=False)


def above(t: float) -> Region:
    return Region(low=t, low_in=False)


def decide(point: float, low: float, high: float, region: Region) -> str:
    """A part's verdict: with an interval (``low``, ``high`` finite) holds when it lies in
    ``region``, does not hold when it lies wholly outside, else undecided; without one,
    the point decides; a NaN point is not testable."""
    if point is None or not np.isfinite(point):
        return UNTESTABLE
    if np.isfinite(low) and np.isfinite(high):
        if region.contains(low) and region.contains(high):
            return HOLDS
        return FAILS if region.misses(low, high) else UNDECIDED
    return HOLDS if region.contains(point) else FAILS


def combine(parts: list[str]) -> str:
    """All parts must hold: one certain failure fails the claim (see the module)."""
    if not parts:
        return UNTESTABLE
    for verdict in (FAILS, UNTESTABLE, UNDECIDED):
        if verdict in parts:
            return verdict
    return HOLDS


def number(x: float) -> str:
    return "NaN" if x is None or not np.isfinite(x) else f"{x:.3g}"


def with_interval(point: float, low: float, high: float) -> str:
    if np.isfinite(low) and np.isfinite(high):
        return f"{number(point)} [{number(low)}, {number(high)}]"
    return number(point)
