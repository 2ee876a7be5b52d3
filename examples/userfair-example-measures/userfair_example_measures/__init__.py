"""Example plugin measures for userfair (docs/plugins.md), one of each kind."""

from __future__ import annotations

import numba
import numpy as np

from userfair.plugins import PairMeasure, UserMeasure


class Atkinson(UserMeasure):
    """The Atkinson index with inequality aversion 1/2 of the per-user P@k:
    1 - (weighted mean of sqrt(x))^2 / (weighted mean of x); 0 when every score is 0
    (nobody is better served than anybody)."""

    name = "Atkinson-P"
    effectiveness = "P"
    better = "lower"
    bounds = (0.0, 1.0)
    text = "Atkinson index (aversion 1/2) of the per-user P"

    def compute(self, scores, weights):
        scores = np.asarray(scores, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        total = weights.sum()
        mean = (weights * scores).sum() / total
        if mean <= 0:
            return 0.0
        root_mean = (weights * np.sqrt(scores)).sum() / total
        return max(0.0, 1.0 - root_mean**2 / mean)


@numba.njit
def squared_term(s_u, s_v, sim):
    """One pair's term, compiled: the streamed route runs it inside its row loops."""
    return sim * sim * abs(s_u - s_v)


class SquaredPUF(PairMeasure):
    """PUF with the squared similarity: the mean over unordered pairs of
    sim(u, v)^2 |P_u - P_v|, sim the min-max normalised cosine. Its term is compiled
    (``term``, docs/plugins.md#a-compiled-term); ``terms`` is the same in numpy, for the
    routes that take arrays of pairs (the load checks that the two agree)."""

    name = "PUF2-P-Cos"
    effectiveness = "P"
    similarity = "Cos"
    better = "lower"
    bounds = (0.0, 1.0)
    text = "PUF with the squared cosine similarity and per-user P"
    term = squared_term

    def terms(self, s_u, s_v, sim):
        return sim**2 * np.abs(s_u - s_v)


#: What the entry point exposes.
MEASURES = [Atkinson, SquaredPUF]
