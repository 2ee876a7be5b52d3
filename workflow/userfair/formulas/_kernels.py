"""Compiled loops (numba) for UF, the one measure whose pair work does not reduce to a few
large matrix products: only the similar pairs count, and each needs k^2 item cosines.

Each function is a plain loop over its formula, compiled once per environment
(``cache=True``); ``similar_pairs_distance`` runs its rows on the job's threads
(:func:`job_threads`).
"""

from __future__ import annotations

import os

import numba
import numpy as np


def job_threads() -> int:
    """The threads this process may use: the cores it may run on (its CPU affinity, e.g. a
    SLURM job's share), capped by ``OMP_NUM_THREADS`` when that is set. Snakemake sets
    ``OMP_NUM_THREADS`` (and the BLAS thread variables) to the rule's ``threads`` for every
    script it runs, so a job uses what its rule asked for, not every core of the node."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    limit = os.environ.get("OMP_NUM_THREADS", "").strip()
    if limit.isdigit() and int(limit) > 0:
        cores = min(cores or 1, int(limit))
    return max(1, cores or 1)


def use_job_cores() -> None:
    """Run numba's parallel loops on :func:`job_threads` threads (at most numba's pool)."""
    numba.set_num_threads(min(job_threads(), numba.config.NUMBA_NUM_THREADS))


@numba.njit(cache=True)
def in_order(values: np.ndarray) -> float:
    """values[0] + values[1] + ... in that order. Inside a ``parallel=True`` function numba
    turns ``values.sum()`` into a reduction over the threads, whose grouping follows their
    number; a call of this (serial) function keeps the order fixed."""
    total = 0.0
    for value in values:
        total += value
    return total


@numba.njit(cache=True, parallel=True)
def pair_threshold(sim: np.ndarray) -> float:
    """mean + SD (ddof = 0) of ``sim`` over the unordered pairs u < v (two passes; per-row
    partial sums added in a fixed order, so the value does not depend on the threads)."""
    m = sim.shape[0]
    pairs = m * (m - 1) // 2
    row_sums = np.zeros(m)
    for u in numba.prange(m):
        for v in range(u + 1, m):
            row_sums[u] += sim[u, v]
    mean = in_order(row_sums) / pairs
    for u in numba.prange(m):
        row_sums[u] = 0.0
        for v in range(u + 1, m):
            row_sums[u] += (sim[u, v] - mean) ** 2
    return mean + np.sqrt(in_order(row_sums) / pairs)


@numba.njit(cache=True, parallel=True)
def item_cosines(
    column_ptr: np.ndarray,
    column_users: np.ndarray,
    column_values: np.ndarray,
    row_ptr: np.ndarray,
    row_items: np.ndarray,
    row_values: np.ndarray,
    r: int,
) -> np.ndarray:
    """Dense (r, r) cosines of r items from their unit columns, given both as CSC (item ->
    users) and CSR (user -> items): cos(i, j) = sum over users w of x_i[w] x_j[w]. Each
    thread fills whole rows i, so no two threads write the same entry."""
    cosines = np.zeros((r, r))
    for i in numba.prange(r):
        for p in range(column_ptr[i], column_ptr[i + 1]):
            w, x = column_users[p], column_values[p]
            for q in range(row_ptr[w], row_ptr[w + 1]):
                cosines[i, row_items[q]] += x * row_values[q]
    return cosines


@numba.njit(cache=True)
def _row_distance(
    sim: np.ndarray, threshold: float, lists: np.ndarray, cosines: np.ndarray, k: int, u: int
) -> float:
    """sum over v > u with sim[u, v] >= threshold of sim[u, v] * k^2 d_L(u, v), by the
    cheaper of two exact ways: k^2 look-ups per similar pair, or the row sums
    t = sum_{i in L_u} cos(i, .) formed once and k look-ups per similar pair."""
    m, r = lists.shape[0], cosines.shape[0]
    similar = 0
    for v in range(u + 1, m):
        if sim[u, v] >= threshold:
            similar += 1
    total = 0.0
    if similar == 0:
        return total
    own = lists[u]
    # a sequential add of the row sums costs about 1/8 of a scattered look-up (measured)
    if similar * k * k <= k * r // 8 + similar * k:
        for v in range(u + 1, m):
            weight = sim[u, v]
            if weight >= threshold:
                cosine_sum = 0.0
                for a in range(k):
                    row = cosines[own[a]]
                    for b in range(k):
                        cosine_sum += row[lists[v, b]]
                total += weight * (k * k - cosine_sum)
        return total
    to_items = np.zeros(r)
    for a in range(k):
        row = cosines[own[a]]
        for j in range(r):
            to_items[j] += row[j]
    for v in range(u + 1, m):
        weight = sim[u, v]
        if weight >= threshold:
            cosine_sum = 0.0
            for b in range(k):
                cosine_sum += to_items[lists[v, b]]
            total += weight * (k * k - cosine_sum)
    return total


@numba.njit(cache=True, parallel=True)
def similar_pairs_distance(
    sim: np.ndarray, threshold: float, lists: np.ndarray, cosines: np.ndarray, k: int
) -> float:
    """sum over the pairs u < v with sim >= threshold of sim * k^2 d_L(u, v), where
    k^2 d_L(u, v) = k^2 - sum_{i in L_u, j in L_v} cos(i, j); ``lists`` holds row indices
    of ``cosines``. Row u has m - 1 - u pairs, so each parallel step takes rows u and
    m - 1 - u together: equal work per step."""
    m = lists.shape[0]
    per_step = np.zeros((m + 1) // 2)
    for step in numba.prange((m + 1) // 2):
        total = _row_distance(sim, threshold, lists, cosines, k, step)
        if m - 1 - step != step:
            total += _row_distance(sim, threshold, lists, cosines, k, m - 1 - step)
        per_step[step] = total
    return in_order(per_step)  # fixed order: the same value on any number of threads
