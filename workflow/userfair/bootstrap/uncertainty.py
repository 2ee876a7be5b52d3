"""Bootstrap resamples of the 18 measures (docs/method.md#uncertainty): the resampling
weights and every measure recomputed on every resample; the inference on them (intervals,
paired tests, Holm, tau intervals) is ``userfair.bootstrap.inference``.

A resample draws m evaluated users with replacement; it is given by its multiplicity
vector w (w_u = how often user u was drawn, N = sum w). Every measure is recomputed on the
resampled population, where a user drawn w_u times counts as w_u distinct users and a pair
made of a user and its own copy is left out; the similarities keep the dataset-level
min-max normalisation. Nothing resampled is materialised: with W the (B, m) multiplicity
matrix, every pair sum sum_{u != v} w_u w_v M[u, v] of all B resamples is one matrix
product, (W @ M) * W summed per row.

Typical use (one dataset, several models, paired by the same weights)::

    weights = resample_weights(len(inputs.users), 1000, seed)
    frame = bootstrap(inputs, weights, similarities=stored)      # (1000, 18) per model
    inference.intervals(frame, 0.95)                               # {measure: (low, high)}
    inference.compare(frame_a, frame_b, point_a, point_b)          # B - A, interval, p
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.bootstrap import _bootstrap_kernels
from userfair.engine import _backend, generic_routes, uf_engine
from userfair.files.inputs import Inputs
from userfair.formulas import _kernels, effectiveness, envy_reductions, fairness, spread
from userfair.formulas import groups as user_groups
from userfair.formulas.effectiveness import hits, validate_lists
from userfair.formulas.spread import Draws
from userfair.measures import (
    EFF,
    FAIR_GROUP,
    NAMES,
    conventions,
    envy_measures,
    fused,
    generic,
    statistics,
    unserved,
)
from userfair.similarity import pairwise
from userfair.similarity.pairwise import BLOCK_SIZE

#: Entries of one (rows, m) block of a pair matrix in the matrix products (32 MiB float64).
PAIR_BLOCK_ENTRIES = 1 << 22


def resample_weights(m: int, resamples: int, seed: int = 0) -> np.ndarray:
    """(resamples, m) int64 multiplicities: row b counts the m draws of row b of
    ``numpy.random.default_rng(seed).integers(0, m, size=(resamples, m))``.

    Rows sum to m. The same (m, resamples, seed) gives the same weights, so every model of
    a dataset (same evaluated users) is resampled identically (paired); the first rows do
    not depend on ``resamples``.
    """
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    draws = np.random.default_rng(seed).integers(0, m, size=(resamples, m))
    flat = (draws + (np.arange(resamples, dtype=np.int64) * m)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * m).reshape(resamples, m).astype(np.int64)


def _check_weights(weights, m: int) -> np.ndarray:
    """``weights`` as a (B, m) int64 array of non-negative integers (1-D: one resample)."""
    array = np.asarray(weights)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != m:
        raise ValueError(f"weights must be (resamples, {m}), got shape {np.shape(weights)}")
    if array.size and (not np.all(np.isfinite(array)) or np.any(array != np.round(array))):
        raise ValueError("weights must be integers (multiplicities)")
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise ValueError("weights must be >= 0")
    return array


def dataset_similarities(
    inputs: Inputs, gamma: float = 1.0, block_size: int = BLOCK_SIZE
) -> dict[str, pairwise.Similarity]:
    """The similarities the measures read, computed once per dataset: ``cos``, ``jacc``
    (and ``genre`` when gamma < 1). Pass them to ``evaluate`` and to every ``bootstrap``
    of the dataset's models (the similarity files give the same objects)."""
    rows = inputs.train_of_evaluated()
    out = {
        kind: pairwise.compute(kind, rows, inputs.users, block_size=block_size)
        for kind in ("cos", "jacc")
    }
    if gamma < 1.0 and inputs.genres is not None:  # else evaluate says genres are needed
        out["genre"] = pairwise.compute("genre", rows, inputs.users, inputs.genres, block_size)
    return out


def bootstrap(
    inputs: Inputs,
    weights,
    similarities: Mapping[str, pairwise.Similarity] | None = None,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    envy_utility: str = "precision",
    block_size: int = BLOCK_SIZE,
    device: str = "auto",
    groups: user_groups.Groups | None = None,
) -> pd.DataFrame:
    """The 18 measures (``userfair.measures.NAMES``) of every resample: one row per row of
    ``weights`` ((B, m) multiplicities of the evaluated users, e.g. ``resample_weights``),
    index ``resample`` (0..B-1).

    Each row equals ``evaluate`` on the population where user u appears w_u times
    (docs/method.md#uncertainty): means, SD and Gini weighted; pair measures over the
    pairs of distinct copies of distinct users (P_w = (N^2 - sum w^2) / 2 unordered pairs);
    PUF on the dataset's normalised similarities; UF on the raw sim_UF with the threshold
    of the resampled pairs. All-ones weights give ``evaluate``'s values. ``frame.attrs``
    holds ``conventions`` (as ``evaluate``'s) and the ``seconds`` of each step.

    ``similarities``: as in ``evaluate`` (``cos``, ``jacc``, ``genre`` for gamma < 1);
    missing ones are computed here. ``device``: the pair matrix products on numpy
    (``cpu``) or torch (``cuda``, ``torch-cpu``); the per-resample selections (max envy,
    UF's thresholded sums) are compiled CPU loops on every device.

    ``groups`` (a :class:`userfair.formulas.groups.Groups` of ``inputs.users``): the columns of
    ``userfair.formulas.groups.bootstrap`` follow, in the same resamples (each group's weighted mean
    P and NDCG, and ``UserMAD-P``, ``UserMAD-NDCG`` over the groups drawn).
    """
    if gamma < 1.0 and inputs.genres is None and (similarities or {}).get("genre") is None:
        raise ValueError(
            f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
            "(--item-features on the command line)"
        )
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
    m = len(inputs.users)
    weights = _check_weights(weights, m)
    target = _backend.resolve(device)
    sims = _similarities(inputs, similarities, gamma, block_size)
    resamples = weights.shape[0]
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name):
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    w = weights.astype(np.float64)
    total = w.sum(axis=1)  # N
    ordered = total**2 - (w**2).sum(axis=1)  # ordered pairs of distinct users' copies
    out: dict[str, np.ndarray] = {}

    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in EFF:
            out[name] = np.where(total > 0, w @ per_user[name] / total, np.nan)
    draws = Draws(weights, w, total)
    for measure in statistics(("P", "NDCG"), "bootstrap"):  # SD, Gini: their declarations
        out[measure.name] = spread.of(measure).weighted(per_user[measure.effectiveness], draws)
    lap("effectiveness, SD, Gini")

    has_pairs = ordered > 0
    envy = _envy(inputs.topk, inputs.relevant, k, envy_utility, block_size, weights, epsilon)
    chosen = envy_measures("bootstrap")  # ME, MME, PEU: their declarations' reductions
    out.update(envy_reductions.values(chosen, envy_reductions.Totals(*envy, total, ordered)))
    lap(", ".join(m.name for m in chosen))

    sim_uf = pairwise.uf_similarity(
        sims["jacc"].raw(), sims["genre"].raw() if gamma < 1.0 else None, gamma
    )
    shift = float(sim_uf.sum() / (m * (m - 1))) if m > 1 else 0.0  # full-data mean sim_UF
    puf_names = ("PUF-P-Cos", "PUF-P-Jacc", "PUF-NDCG-Cos", "PUF-NDCG-Jacc")
    sums = pair_sums(w, _pair_rows(per_user, sims, sim_uf, shift), 6, m, block_size, target)
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, row in zip(puf_names, sums[:4]):
            out[name] = np.where(has_pairs, row / ordered, np.nan)
        # Threshold mean + SD of sim_UF over the resampled pairs, from the sums of
        # (s - shift) and (s - shift)^2: shifted by the full-data mean, the variance
        # E[(s - shift)^2] - (mean - shift)^2 loses no precision.
        offset = sums[4] / ordered
        variance = np.maximum(sums[5] / ordered - offset**2, 0.0)
        thresholds = np.where(ordered >= 4, shift + offset + np.sqrt(variance), np.nan)
    lap("PUF and UF thresholds (matrix products)")
    out["UF"] = uf_engine.resampled(
        inputs.topk, inputs.train, sim_uf, thresholds, weights, k, block_size
    )
    lap("UF (candidate pairs, sums)")

    frame = pd.DataFrame({key: out[key] for key in fused(NAMES)}, columns=list(fused(NAMES)))
    frame.index = pd.RangeIndex(resamples, name="resample")
    if groups is not None:
        unserved("bootstrap", FAIR_GROUP, "no interval")
        frame = frame.join(user_groups.bootstrap(per_user, groups, weights))
        lap("group measures")
    if generic():  # the plugins (docs/plugins.md) and built-in pair measures with a term
        values = generic_routes.bootstrap_generic(inputs, weights, k, block_size=block_size)
        frame = frame.assign(**values)
        lap("generic measures (plugins, pair terms)")
    frame.attrs["seconds"] = seconds  # wall seconds of each step, for the benchmark
    frame.attrs["conventions"] = conventions(envy_utility, epsilon, gamma)
    return frame


def _similarities(inputs, given, gamma, block_size) -> dict[str, pairwise.Similarity]:
    """The given similarities, checked, completed with the missing ones."""
    m = len(inputs.users)
    sims = dict(given or {})
    rows = None
    for kind in ("cos", "jacc") + (("genre",) if gamma < 1.0 else ()):
        if sims.get(kind) is None:
            rows = inputs.train_of_evaluated() if rows is None else rows
            genres = inputs.genres if kind == "genre" else None
            sims[kind] = pairwise.compute(kind, rows, inputs.users, genres, block_size)
        elif sims[kind].sim.shape != (m, m):
            raise ValueError(
                f"similarities[{kind!r}] must be ({m}, {m}), got {sims[kind].sim.shape}"
            )
    return sims


def envy_candidates(
    topk: np.ndarray,
    relevant: sp.spmatrix,
    k: int = 10,
    utility: str = "precision",
    block_size: int = BLOCK_SIZE,
) -> sp.csr_matrix:
    """(m, m) CSR of the positive envies envy(u, v) (docs/method.md#envy), each row's
    entries sorted by envy, descending (so the first entry whose user is present in a
    resample is the user's max envy there). Zero envies, the diagonal included, are not
    stored."""
    relevant = _backend.binary_csr(relevant)
    topk = validate_lists(topk, k, relevant.shape)
    denominator = fairness.envy_denominators(relevant, k, utility)
    m = topk.shape[0]
    items, local = fairness.recommended_items(topk)
    relevant_rec = relevant[:, items]
    own = hits(local, relevant_rec, k).sum(axis=1) / denominator
    lists_t = fairness.lists_matrix(local, len(items)).T.tocsr()
    rows, columns, values = [], [], []
    for start, stop in _backend.blocks(m, block_size):
        counts = (relevant_rec[start:stop] @ lists_t).tocsr()
        row = np.repeat(np.arange(start, stop), np.diff(counts.indptr))
        gain = counts.data / denominator[row] - own[row]  # as fairness.envy computes it
        keep = (gain > 0) & (counts.indices != row)
        rows.append(row[keep])
        columns.append(counts.indices[keep].astype(np.int64))
        values.append(gain[keep])
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    column = np.concatenate(columns) if columns else np.zeros(0, np.int64)
    value = np.concatenate(values) if values else np.zeros(0)
    order = np.lexsort((-value, row))
    indptr = np.r_[0, np.cumsum(np.bincount(row, minlength=m))].astype(np.int64)
    return sp.csr_matrix((value[order], column[order], indptr), shape=(m, m))


def _envy(topk, relevant, k, utility, block_size, weights, epsilon):
    """Per resample: sum of w_u w_v envy(u, v) (a sparse matrix product, E W^T), sum of
    w_u max-envy_u, and the weight of the users whose max envy exceeds ``epsilon``."""

    candidates = envy_candidates(topk, relevant, k, utility, block_size)
    w_t = np.ascontiguousarray(weights.T, dtype=np.float64)  # (m, B)
    total = np.einsum("ub,ub->b", candidates @ w_t, w_t)
    _kernels.use_job_cores()
    max_sum, above = _bootstrap_kernels.max_envy_resamples(
        candidates.indptr.astype(np.int64),
        candidates.indices.astype(np.int64),
        candidates.data,
        weights.astype(np.int32),
        float(epsilon),
    )
    return total, max_sum, above


def _pair_rows(per_user, sims, sim_uf, shift):
    """A function filling ``out[c]`` ((stop - start, m - start)) with the rows start:stop,
    columns start:m of the six symmetric pair matrices whose weighted sums the bootstrap
    needs: sim * |S_u - S_v| for the four PUF variants, then (sim_UF - shift) and its
    square (diagonal 0: no pair of a user with itself)."""
    cos, jacc = sims["cos"].sim, sims["jacc"].sim
    precision, ndcg = per_user["P"], per_user["NDCG"]

    def rows(start, stop, out):
        b, n = stop - start, cos.shape[0] - start
        gap = np.empty((b, n))
        for s, (first, second) in zip((precision, ndcg), ((0, 1), (2, 3))):
            np.subtract(s[start:stop, None], s[None, start:], out=gap)
            np.abs(gap, out=gap)
            np.multiply(cos[start:stop, start:], gap, out=out[first])
            np.multiply(jacc[start:stop, start:], gap, out=out[second])
        centred = out[4]
        np.subtract(sim_uf[start:stop, start:], shift, out=centred)
        centred[np.arange(b), np.arange(b)] = 0.0
        np.multiply(centred, centred, out=out[5])

    return rows


def pair_sums(w, rows_of, count, m, block_size, target) -> np.ndarray:
    """(count, B): sum over u, v of w_u w_v M_c[u, v] for each of the ``count`` symmetric
    matrices M_c (zero diagonal), = 2 sum over u < v. Per row block I: the block's upper
    part M_c[I, v > u] (columns from the block's first row on, the lower triangle of its
    diagonal square zeroed), all c stacked into one matrix product with W[:, start:]^T,
    times W[:, I]^T, summed over the block's users."""
    resamples = w.shape[0]
    rows = max(1, min(block_size, PAIR_BLOCK_ENTRIES // max(count * m, 1)))
    flat = np.empty(count * min(rows, m) * m)
    w_t = np.ascontiguousarray(w.T)  # (m, B)
    if target is None:
        sums = np.zeros((count, resamples))
    else:
        import torch

        w_device = _backend.to_torch(w_t, target)
        sums = torch.zeros((count, resamples), dtype=torch.float64, device=target)
    for start, stop in _backend.blocks(m, rows):
        b, n = stop - start, m - start
        block = flat[: count * b * n].reshape(count, b, n)  # contiguous
        rows_of(start, stop, block)
        lower = np.tril_indices(b)
        block[:, lower[0], lower[1]] = 0.0  # keep the pairs v > u only
        block = block.reshape(count * b, n)
        if target is None:
            product = (block @ w_t[start:]).reshape(count, b, resamples)
            sums += np.einsum("cub,ub->cb", product, w_t[start:stop])
        else:
            product = _backend.to_torch(block, target) @ w_device[start:]
            product = product.reshape(count, b, resamples)
            sums += (product * w_device[start:stop][None]).sum(dim=1)
    sums = sums if target is None else sums.cpu().numpy()
    return 2.0 * sums
