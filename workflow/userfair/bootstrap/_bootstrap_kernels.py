"""Compiled loops (numba) of the bootstrap (``userfair.bootstrap.uncertainty``): the two steps that
are not matrix products, because each resample selects different entries.

- MME, PEU: each user's max envy over the *other users present* in a resample, found as
  the first present user among its envy candidates sorted by envy, descending;
- UF: the sum over the pairs above a resample's own threshold, a prefix of the candidate
  pairs sorted by similarity, descending.

Both run the resamples in parallel (one resample per step; per-resample sums in a fixed
order, so the values do not depend on the threads).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, parallel=True)
def max_envy_resamples(
    indptr: np.ndarray,
    columns: np.ndarray,
    values: np.ndarray,
    weights: np.ndarray,
    epsilon: float,
):
    """Per resample b (rows of ``weights``, (B, m) multiplicities):

    - ``max_sum[b]`` = sum over u of w_u * (max envy of u over the users v != u with w_v > 0);
    - ``above[b]``  = sum over u of w_u * [that max envy > epsilon].

    Row u of the CSR (``indptr``, ``columns``, ``values``) holds u's positive envies, sorted
    by value descending, never u itself: the first present column is u's max envy (0 when
    none is present, since envy >= 0); most users find it within a few entries.
    """
    resamples, m = weights.shape
    max_sum = np.zeros(resamples)
    above = np.zeros(resamples)
    for b in numba.prange(resamples):
        w = weights[b]
        row_max_sum, row_above = 0.0, 0.0
        for u in range(m):
            wu = w[u]
            if wu == 0:
                continue
            for p in range(indptr[u], indptr[u + 1]):
                if w[columns[p]] > 0:
                    row_max_sum += np.float64(wu) * values[p]
                    if values[p] > epsilon:
                        row_above += wu
                    break
        max_sum[b] = row_max_sum
        above[b] = row_above
    return max_sum, above


@numba.njit(cache=True, parallel=True)
def threshold_prefix_sums(
    first: np.ndarray,
    second: np.ndarray,
    similarity: np.ndarray,
    values: np.ndarray,
    weights: np.ndarray,
    thresholds: np.ndarray,
) -> np.ndarray:
    """Per resample b: sum over the candidate pairs j with ``similarity[j] >= thresholds[b]``
    of w_b[first[j]] * w_b[second[j]] * values[j]. The pairs are sorted by ``similarity``
    descending, so the pairs above a threshold are a prefix; NaN thresholds give NaN."""
    resamples = weights.shape[0]
    n = similarity.shape[0]
    out = np.zeros(resamples)
    for b in numba.prange(resamples):
        threshold = thresholds[b]
        if np.isnan(threshold):
            out[b] = np.nan
            continue
        w = weights[b]
        total = 0.0
        for j in range(n):
            if similarity[j] < threshold:
                break
            total += np.float64(w[first[j]]) * w[second[j]] * values[j]
        out[b] = total
    return out
