"""The spread of the per-user scores (docs/method.md#fairness), every formula a route needs
of one such statistic, in one place: its value (:func:`sd`, :func:`gini`), its value in
every bootstrap resample at once (:func:`weighted_sd`, :func:`weighted_gini`, over
:class:`Draws`) and its per-user shares, which sum over the users to the value
(:func:`sd_shares`, :func:`gini_shares`, with Gini's signed parts).

A statistic's three formulas travel together as a :class:`Statistic` in
:data:`STATISTICS`, under the name its declaration gives (``userfair.measures.spread``,
``statistic="SD"``); the routes (dense, streamed, bootstrap, decomposition, RecBole, the
opt-in measures) take them with :func:`of` and name no statistic themselves. A new
statistic of the per-user scores is its three formulas here, its entry in
:data:`STATISTICS` and its declaration (docs/architecture.md, "Adding a built-in
measure").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from userfair.measures.base import formulas_of


@dataclass(frozen=True)
class Draws:
    """The bootstrap's resamples of the m evaluated users: ``counts`` (B, m) int64
    multiplicities, ``w`` the same as float64 and ``total`` (B,) float64, N = sum_u w_u."""

    counts: np.ndarray
    w: np.ndarray
    total: np.ndarray

    @classmethod
    def of(cls, counts) -> Draws:
        counts = np.asarray(counts, dtype=np.int64)
        w = counts.astype(np.float64)
        return cls(counts, w, w.sum(axis=1))


@dataclass(frozen=True)
class Statistic:
    """The formulas of a statistic of the per-user scores x (float64, over the evaluated
    users): ``value(x) -> float``; ``weighted(x, draws) -> (B,)``, the value of every
    resample's expanded vector (each x_u repeated w_u times; NaN where it is undefined);
    ``shares(x) -> {suffix: (m,)}``, the user's share under ``""`` and each signed part
    of ``parts`` under ``":part"``, each column summing over the users to the value."""

    value: Callable[[np.ndarray], float]
    weighted: Callable[[np.ndarray, Draws], np.ndarray]
    shares: Callable[[np.ndarray], dict[str, np.ndarray]]
    parts: tuple[str, ...] = ()


def sd(scores) -> float:
    """Population standard deviation (ddof = 0); NaN without users."""
    scores = np.asarray(scores, dtype=np.float64)
    return float(np.std(scores)) if scores.size else math.nan


def gini(scores) -> float:
    """sum_j (2j - m - 1) x_(j) / (m sum_j x_j), x ascending; NaN when every score is 0."""
    x = np.sort(np.asarray(scores, dtype=np.float64))
    m, total = x.size, x.sum()
    if m == 0 or total == 0:
        return math.nan
    weights = 2.0 * np.arange(1, m + 1) - m - 1
    return float((weights * x).sum() / (m * total))


def weighted_sd(x: np.ndarray, draws: Draws) -> np.ndarray:
    """Population SD of the expanded vector (each x_u w_u times), two passes."""
    w, total = draws.w, draws.total
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = w @ x / total
        deviation = x[None, :] - mean[:, None]
        deviation *= deviation
        return np.where(total > 0, np.sqrt((w * deviation).sum(axis=1) / total), np.nan)


def weighted_gini(x: np.ndarray, draws: Draws) -> np.ndarray:
    """Gini of the expanded sorted vector, in closed form per user: the w_u copies of x_u
    take the positions c_u + 1 .. c_u + w_u (c_u: the weight sorted before u), whose
    coefficients 2j - N - 1 sum to w_u (2 c_u + w_u - N)."""
    total = draws.total
    order = np.argsort(x, kind="stable")
    sorted_x, sorted_w = x[order], draws.counts[:, order]
    before = np.cumsum(sorted_w, axis=1) - sorted_w
    coefficients = sorted_w * (2 * before + sorted_w - total.astype(np.int64)[:, None])
    numerator = coefficients.astype(np.float64) @ sorted_x
    mass = sorted_w.astype(np.float64) @ sorted_x
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((total > 0) & (mass != 0), numerator / (total * mass), np.nan)


def gini_parts(scores):
    """(share, disadvantaged, advantaged) of Gini = sum_j (2j - m - 1) x_(j) / (m sum x).

    share_u = (2 r_u - m - 1) x_u / (m sum x) with r_u the user's rank in ascending order;
    tied users take the mean of their positions' weights (r_u = their average rank), which
    leaves the sum unchanged because their scores are equal. The signed parts read Gini as
    its pair sum, sum over unordered pairs |x_u - x_v| / (m sum x): disadvantaged_u is the
    sum over the better-served v of x_v - x_u, advantaged_u over the worse-served v of
    x_u - x_v, each divided by m sum x. NaN when every score is 0 (Gini is NaN).
    """
    x = np.asarray(scores, dtype=np.float64)
    m, total = x.size, x.sum()
    if m == 0 or total == 0:
        return (np.full(m, math.nan),) * 3
    from scipy.stats import rankdata  # here: scipy.stats costs a second to import

    ranks = rankdata(x, method="average")
    share = (2.0 * ranks - m - 1) * x / (m * total)
    ordered = np.sort(x)
    prefix = np.r_[0.0, np.cumsum(ordered)]
    below = np.searchsorted(ordered, x, side="left")  # users with a lower score
    above = m - np.searchsorted(ordered, x, side="right")  # users with a higher score
    advantaged = below * x - prefix[below]
    disadvantaged = (prefix[m] - prefix[m - above]) - above * x
    return share, disadvantaged / (m * total), advantaged / (m * total)


def gini_shares(scores) -> dict[str, np.ndarray]:
    """Gini's share and its two signed parts (:func:`gini_parts`)."""
    share, worse, better = gini_parts(scores)
    return {"": share, ":disadvantaged": worse, ":advantaged": better}


def sd_share(scores) -> np.ndarray:
    """SD_u = SD * (x_u - mean)^2 / sum_v (x_v - mean)^2: the user's share of the variance,
    scaled so that the column sums to the SD (the SD is not a sum; its square is). 0 for
    every user when all scores are equal; NaN without users."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    squares = (x - x.mean()) ** 2
    total = squares.sum()
    if total == 0:
        return np.zeros(x.size)
    return float(np.std(x)) * squares / total


def sd_shares(scores) -> dict[str, np.ndarray]:
    """SD's share (:func:`sd_share`); the SD has no signed parts."""
    return {"": sd_share(scores)}


#: The formulas of every built-in statistic, by the name its declaration gives.
STATISTICS: dict[str, Statistic] = {
    "SD": Statistic(sd, weighted_sd, sd_shares),
    "Gini": Statistic(gini, weighted_gini, gini_shares, ("disadvantaged", "advantaged")),
}


def of(measure) -> Statistic:
    """The formulas of the declared statistic ``measure`` (``measure.statistic``)."""
    where = "userfair.formulas.spread.STATISTICS"
    return formulas_of(measure, "statistic", "statistic", STATISTICS, where)
