"""User similarity of the evaluated users (SPEC §5 and the UF similarity of §6).

Every function returns a dense (m, m) float64 symmetric matrix whose diagonal is 0 (a user
is no pair with itself; measures ignore the diagonal). Cosine and Jaccard are min-max
normalised over the unordered pairs of distinct users, 0 everywhere when all pairs are equal.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from userfair._backend import binary_csr, blocks
from userfair.io import InputError, atomic_path

#: Default rows per block of the pairwise products.
BLOCK_SIZE = 2048


def _nonzero_pairs(rows, columns, degrees, formula, start, stop):
    """Flat indices u * m + v (u in start:stop, v != u) of the pairs sharing an item, and
    ``formula(intersection, deg_u, deg_v)`` of each."""
    inter = (rows[start:stop] @ columns).tocoo()
    u, v = inter.row.astype(np.int64) + start, inter.col.astype(np.int64)
    off_diagonal = u != v
    u, v = u[off_diagonal], v[off_diagonal]
    with np.errstate(divide="ignore", invalid="ignore"):
        values = formula(inter.data[off_diagonal], degrees[u], degrees[v])
    return u * columns.shape[1] + v, np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)


def _pairwise(rows: sp.spmatrix, formula, block_size: int) -> np.ndarray:
    """The (m, m) matrix of ``formula(intersections, deg_u, deg_v)``, min-max normalised.

    ``formula`` must give 0 for an empty intersection (cosine and Jaccard do), so only the
    nonzero intersections are computed: a first pass over the row blocks finds min and max,
    a second recomputes each block and scatters its normalised values (memory: the result
    plus one sparse block).
    """
    rows = binary_csr(rows)
    degrees = np.asarray(rows.sum(axis=1)).ravel()
    columns = rows.T.tocsr()
    m = rows.shape[0]
    lo, hi, implicit_zero = np.inf, -np.inf, False
    for start, stop in blocks(m, block_size):
        _, values = _nonzero_pairs(rows, columns, degrees, formula, start, stop)
        if len(values):
            lo, hi = min(lo, values.min()), max(hi, values.max())
        # pairs of this block without a common item have similarity 0
        implicit_zero |= len(values) < (stop - start) * (m - 1)
    if implicit_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    out = np.zeros((m, m), dtype=np.float64)
    if m < 2 or hi == lo:
        return out
    flat = out.reshape(-1)
    for start, stop in blocks(m, block_size):
        index, values = _nonzero_pairs(rows, columns, degrees, formula, start, stop)
        flat[index] = (values - lo) / (hi - lo)
    # an implicit zero normalises to (0 - lo) / (hi - lo) = 0, as lo = 0 whenever one exists
    return out


def min_max(sim: np.ndarray, block_size: int = BLOCK_SIZE, inplace: bool = False) -> np.ndarray:
    """``(s - min) / (max - min)`` over the off-diagonal entries (the pairs), diagonal 0.

    Every entry is 0 when all pairs are equal or there is no pair (m < 2).
    """
    out = sim if inplace else np.array(sim, dtype=np.float64, copy=True)
    m = out.shape[0]
    diagonal = np.arange(m)
    if m < 2:
        out[:] = 0.0
        return out
    lo, hi = np.inf, -np.inf
    for start, stop in blocks(m, block_size):
        block, rows = out[start:stop], diagonal[start:stop]
        block[rows - start, rows] = np.inf
        lo = min(lo, block.min())
        block[rows - start, rows] = -np.inf
        hi = max(hi, block.max())
    if hi == lo:
        out[:] = 0.0
        return out
    for start, stop in blocks(m, block_size):
        block = out[start:stop]
        block -= lo
        block /= hi - lo
    out[diagonal, diagonal] = 0.0
    return out


def cosine(rows: sp.spmatrix, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """|H_u & H_v| / sqrt(|H_u| |H_v|) of the binarised ``rows`` (0 for an empty row),
    min-max normalised."""
    return _pairwise(rows, lambda inter, du, dv: inter / np.sqrt(du * dv), block_size)


def jaccard(rows: sp.spmatrix, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """|H_u & H_v| / |H_u | H_v| of the binarised ``rows`` (0 for two empty rows),
    min-max normalised."""
    return _pairwise(rows, lambda inter, du, dv: inter / (du + dv - inter), block_size)


def genre_distributions(rows: sp.spmatrix, genres: sp.spmatrix) -> np.ndarray:
    """(m, g) genre distribution of each user: summed genre indicators of the user's items,
    normalised to sum 1; uniform for a user whose items carry no genre."""
    counts = np.asarray((binary_csr(rows) @ binary_csr(genres)).todense(), dtype=np.float64)
    totals = counts.sum(axis=1, keepdims=True)
    uniform = np.full_like(counts, 1.0 / max(counts.shape[1], 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, counts / totals, uniform)


def _entropy(p: np.ndarray) -> np.ndarray:
    """Base-2 entropy along the last axis, with 0 log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log2(p), 0.0)
    return -terms.sum(axis=-1)


def genre_similarity(
    rows: sp.spmatrix, genres: sp.spmatrix, block_size: int = BLOCK_SIZE
) -> np.ndarray:
    """1 - JS(g_u, g_v), the Jensen-Shannon divergence with base-2 logarithms (in [0, 1]),
    of the users' genre distributions; not normalised (``uf_similarity`` does that)."""
    if genres is None:
        raise ValueError("genre_similarity needs item genres (item_features)")
    dist = genre_distributions(rows, genres)
    m, g = dist.shape
    own = _entropy(dist)
    out = np.empty((m, m), dtype=np.float64)
    # JS = H((p + q) / 2) - (H(p) + H(q)) / 2; blocks of (b, m, g) kept to ~16M numbers.
    rows_per_block = max(1, min(block_size, (1 << 24) // max(m * g, 1)))
    for start, stop in blocks(m, rows_per_block):
        mixture = (dist[start:stop, None, :] + dist[None, :, :]) / 2.0
        js = _entropy(mixture) - (own[start:stop, None] + own[None, :]) / 2.0
        out[start:stop] = 1.0 - np.clip(js, 0.0, 1.0)
    np.fill_diagonal(out, 0.0)
    return out


def uf_similarity(
    jaccard_sim: np.ndarray, genre_sim: np.ndarray | None, gamma: float
) -> np.ndarray:
    """sim_UF = gamma * jaccard_sim + (1 - gamma) * genre_sim, min-max normalised.

    ``jaccard_sim`` is the (already normalised) Jaccard matrix; ``genre_sim`` is
    1 - JS and may be None only when gamma == 1.
    """
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if gamma == 1.0:
        return min_max(jaccard_sim)
    if genre_sim is None:
        raise ValueError(f"gamma={gamma} < 1 needs the genre similarity (item genres)")
    if genre_sim.shape != jaccard_sim.shape:
        raise ValueError(f"genre_sim {genre_sim.shape} != jaccard_sim {jaccard_sim.shape}")
    mixed = gamma * jaccard_sim
    mixed += (1.0 - gamma) * genre_sim
    return min_max(mixed, inplace=True)


def save(path: str | os.PathLike, users: np.ndarray, sim: np.ndarray, seconds: float) -> None:
    """Write a similarity file: ``users`` (external ids), ``sim`` (m x m), ``seconds``."""
    users = np.asarray(users).astype(str)
    if sim.shape != (len(users), len(users)):
        raise ValueError(f"sim has shape {sim.shape}, expected {(len(users),) * 2}")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, users=users, sim=sim, seconds=np.float64(seconds))


def load(
    path: str | os.PathLike, expected_users: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """(users, sim, seconds) of a file written by :func:`save`.

    With ``expected_users`` (e.g. ``Inputs.users``), a file whose users differ from them
    (another split, another order) is an InputError.
    """
    if not os.path.isfile(path):
        raise InputError(f"{path}: file not found")
    with np.load(path, allow_pickle=False) as data:
        for field in ("users", "sim", "seconds"):
            if field not in data.files:
                raise InputError(f"{path}: missing field '{field}'")
        users, sim, seconds = data["users"].astype(str), data["sim"], float(data["seconds"])
    if sim.shape != (len(users), len(users)):
        raise InputError(f"{path}: field 'sim' has shape {sim.shape}, expected {(len(users),) * 2}")
    if expected_users is not None and not np.array_equal(
        users, np.asarray(expected_users).astype(str)
    ):
        raise InputError(
            f"{path}: field 'users' does not match the evaluated users of the split "
            f"({len(users)} stored, {len(expected_users)} expected, in canonical order)"
        )
    return users, sim, seconds
