"""Each evaluated user's share of the opt-in measures (``userfair.opt_in.variants``), as
``userfair.decomposition.decompose`` gives it for the 18 (docs/method.md#who): per user gNDCG, the
shares of SD-gNDCG and Gini-gNDCG (with Gini's signed parts), and of every PUF variant its
share and signed parts ``:disadvantaged`` / ``:advantaged``; each column sums over the
users to the measure of ``userfair.opt_in.variants.evaluate_variants`` with the same arguments.

Dense route: ``userfair.decomposition.decompose.puf_parts`` on the (m, m) normalised similarity.
Streamed
route: one pass for the raw range of the similarity, then one over every ordered pair
(u, v), v != u, adding (s - lo) |S_u - S_v| to the worse-served user's disadvantaged sum or
to the better-served user's advantaged sum, divided by (hi - lo) m (m - 1) / 2 at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from userfair.decomposition import decompose, decompose_columns
from userfair.engine._backend import blocks
from userfair.formulas import _kernels
from userfair.measures import PUF_SCORES, puf_name, statistics
from userfair.opt_in import _variant_kernels as kern
from userfair.opt_in import variants
from userfair.similarity import registry
from userfair.similarity.pairwise import BLOCK_SIZE


def _csr(rows) -> tuple:
    rows = sp.csr_matrix(rows)
    data = np.asarray(rows.data, dtype=np.float64)
    return rows.indptr.astype(np.int64), rows.indices.astype(np.int64), data


def raw_range(block, m: int, block_size: int = BLOCK_SIZE) -> tuple[float, float, bool]:
    """(lo, hi, gaps) of a similarity's raw values over the pairs u < v; ``gaps``: whether
    a sparse block leaves a pair out (its value 0 then joins the range)."""
    none = np.zeros((0, m))
    lo, hi, visited = math.inf, -math.inf, 0
    for start, stop in blocks(m, max(1, min(block_size, variants.BLOCK_ENTRIES // max(m, 1)))):
        rows = block(start, stop)
        if sp.issparse(rows):
            out = kern.sparse_rows(*_csr(rows), start, none)
        else:
            out = kern.dense_rows(np.ascontiguousarray(rows, dtype=np.float64), start, none)
        lo, hi = min(lo, out[:, 0].min()), max(hi, out[:, 1].max())
        visited += int(out[:, 2].sum())
    gaps = visited < m * (m - 1) // 2
    if gaps:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return float(lo), float(hi), gaps


def streamed_parts(block, scores: np.ndarray, block_size: int = BLOCK_SIZE):
    """(share, disadvantaged, advantaged), each (q, m), of PUF with each row of ``scores``
    (q, m), without m x m. NaN for m < 2."""
    q, m = scores.shape
    if m < 2:
        return (np.full((q, m), math.nan),) * 3
    _kernels.use_job_cores()
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    lo, hi, gaps = raw_range(block, m, block_size)
    if hi == lo:
        return (np.zeros((q, m)),) * 3
    if gaps and lo != 0.0:  # the pairs left out would add (0 - lo) |S_u - S_v| each
        raise ValueError("a sparse similarity with negative values cannot be streamed per user")
    sums = np.zeros((m, 2 * q))
    for start, stop in blocks(m, max(1, min(block_size, variants.BLOCK_ENTRIES // m))):
        rows = block(start, stop)
        if sp.issparse(rows):
            sums[start:stop] = kern.sparse_user_rows(*_csr(rows), start, scores, lo)
        else:
            rows = np.ascontiguousarray(rows, dtype=np.float64)
            sums[start:stop] = kern.dense_user_rows(rows, start, scores, lo)
    scale = (hi - lo) * m * (m - 1) / 2.0
    worse, better = sums[:, :q].T / scale, sums[:, q:].T / scale
    return (worse + better) / 2.0, worse, better


def variant_columns(
    inputs,
    k: int = 10,
    names: Sequence[str] = (),
    vectors: np.ndarray | None = None,
    route: str = "dense",
    block_size: int = BLOCK_SIZE,
) -> dict[str, np.ndarray]:
    """The per-user columns of the opt-in measures ``variants.names_of(inputs, names)``:
    ``gNDCG`` (the score), ``SD-gNDCG``, ``Gini-gNDCG`` and its two signed parts, and per
    PUF variant its share and signed parts, in that order; each (m,) float64."""
    if route not in ("dense", "stream"):
        raise ValueError(f"route must be 'dense' or 'stream', got {route!r}")
    wanted = variants.names_of(inputs, names)
    data = registry.SimilarityData.of(inputs, vectors)
    scores = variants.per_user_scores(inputs, k)
    columns: dict[str, np.ndarray] = {}
    if inputs.grades is not None:
        columns["gNDCG"] = scores["gNDCG"]
        decompose_columns.score_columns(columns, scores, statistics(("gNDCG",)))
    m = len(inputs.users)
    for name in variants.chosen(inputs, names):
        label = registry.REGISTRY[name].label
        chosen_scores = [s for s in PUF_SCORES if puf_name(s, label) in wanted]
        if not chosen_scores:
            continue
        block = registry.block_function(name, data)
        if route == "stream":
            stacked = np.stack([scores[s] for s in chosen_scores])
            parts = list(zip(*streamed_parts(block, stacked, block_size)))
        else:
            sim = variants.dense_similarity(block, m, block_size)
            parts = [decompose.puf_parts(scores[s], sim, block_size) for s in chosen_scores]
            del sim
        for score, (share, worse, better) in zip(chosen_scores, parts):
            key = puf_name(score, label)
            columns[key] = share
            columns[f"{key}:disadvantaged"], columns[f"{key}:advantaged"] = worse, better
    return columns
