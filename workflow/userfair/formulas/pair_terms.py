"""The pair terms of the built-in pair measures (docs/method.md#measure-kinds): a pair
measure is the mean over the unordered pairs of distinct evaluated users u < v of
t(S_u, S_v, sim(u, v)), with S the per-user score it reads and sim its user similarity
min-max normalised over those pairs (as PUF's).

A term here is a scalar function compiled with numba, under the name its declaration gives
(``userfair.measures``: ``declare(..., "pair", ..., term="NAME")``). The generic pair engine
(``userfair.engine.generic_routes``, which also serves the plugins' PairMeasures) then
computes the measure on every route from the term alone: dense row blocks, the streamed
route's compiled row loops, the sampled estimate, the bootstrap, the per-user shares, the
experiments of Figs. 2-4 and the RecBole metrics. Adding a built-in pair measure is its
term here and its declaration (docs/architecture.md, "Adding a built-in measure").

PUF's own four and its variants run on fused kernels of their own instead (one pass for
several measures; the cosine ones by the items); :data:`TERMS` holds PUF's term too, so
that the generic engine can be checked against those kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba


@dataclass(frozen=True)
class PairTerm:
    """``term(s_u, s_v, sim) -> float``, compiled with numba, symmetric in the two users;
    ``zero_at_zero``: the term is 0 wherever sim is 0, so the streamed route visits only
    the pairs whose raw similarity is stored (that share an item) when the smallest raw
    similarity is 0 (checked on random inputs by the tests)."""

    term: Callable[[float, float, float], float]
    zero_at_zero: bool


# Not cached on disk: the kernels take a term as a first-class function argument, which
# numba compiles in each process that uses it (as a plugin's term).
@numba.njit
def weighted_gap(s_u, s_v, sim):
    """PUF's term: the similarity times the absolute difference of the scores."""
    return sim * abs(s_u - s_v)


#: Every built-in pair term, by the name declarations give.
TERMS: dict[str, PairTerm] = {"PUF": PairTerm(weighted_gap, zero_at_zero=True)}
