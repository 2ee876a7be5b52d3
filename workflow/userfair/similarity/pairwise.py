"""User similarity of the evaluated users (docs/method.md#user-similarity) and UF's mix.

Every function returns a dense (m, m) float64 symmetric matrix whose diagonal is 0 (a user
is no pair with itself; measures ignore the diagonal). Cosine and Jaccard are raw or min-max
normalised over the unordered pairs of distinct users (0 everywhere when all pairs are
equal): PUF reads the normalised values, UF the raw ones.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from userfair.engine import warmup
from userfair.engine._backend import binary_csr, blocks
from userfair.files.io import FileError, InputError, atomic_path, read_npz

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


def _pairwise(rows: sp.spmatrix, formula, block_size: int, normalise: bool) -> np.ndarray:
    """The (m, m) matrix of ``formula(intersections, deg_u, deg_v)`` over the pairs,
    diagonal 0; min-max normalised in place when ``normalise``.

    ``formula`` must give 0 for an empty intersection (cosine and Jaccard do), so only the
    nonzero intersections are computed, one sparse row block at a time (memory: the result
    plus one sparse block).
    """
    rows = binary_csr(rows)
    degrees = np.asarray(rows.sum(axis=1)).ravel()
    columns = rows.T.tocsr()
    m = rows.shape[0]
    out = np.zeros((m, m), dtype=np.float64)
    flat = out.reshape(-1)
    for start, stop in blocks(m, block_size):
        index, values = _nonzero_pairs(rows, columns, degrees, formula, start, stop)
        flat[index] = values
    return min_max(out, block_size, inplace=True) if normalise else out


def pair_range(sim: np.ndarray, block_size: int = BLOCK_SIZE) -> tuple[float, float]:
    """(min, max) of ``sim`` over the pairs (the off-diagonal entries); (0, 0) for m < 2."""
    m = sim.shape[0]
    if m < 2:
        return 0.0, 0.0
    lo, hi = np.inf, -np.inf
    diagonal = np.arange(m)
    for start, stop in blocks(m, block_size):
        block = sim[start:stop]
        rows = diagonal[start:stop]
        saved = block[rows - start, rows].copy()
        block[rows - start, rows] = np.inf
        lo = min(lo, block.min())
        block[rows - start, rows] = -np.inf
        hi = max(hi, block.max())
        block[rows - start, rows] = saved
    return float(lo), float(hi)


def min_max(sim: np.ndarray, block_size: int = BLOCK_SIZE, inplace: bool = False) -> np.ndarray:
    """``(s - min) / (max - min)`` over the off-diagonal entries (the pairs), diagonal 0.

    Every entry is 0 when all pairs are equal or there is no pair (m < 2).
    """
    out = sim if inplace else np.array(sim, dtype=np.float64, copy=True)
    m = out.shape[0]
    lo, hi = pair_range(out, block_size)
    if m < 2 or hi == lo:
        out[:] = 0.0
        return out
    for start, stop in blocks(m, block_size):
        block = out[start:stop]
        block -= lo
        block /= hi - lo
    np.fill_diagonal(out, 0.0)
    return out


def cosine(rows: sp.spmatrix, block_size: int = BLOCK_SIZE, normalise: bool = True) -> np.ndarray:
    """|H_u & H_v| / sqrt(|H_u| |H_v|) of the binarised ``rows`` (0 for an empty row),
    min-max normalised over the pairs unless ``normalise`` is False."""
    return _pairwise(rows, lambda inter, du, dv: inter / np.sqrt(du * dv), block_size, normalise)


def jaccard(rows: sp.spmatrix, block_size: int = BLOCK_SIZE, normalise: bool = True) -> np.ndarray:
    """|H_u & H_v| / |H_u | H_v| of the binarised ``rows`` (0 for two empty rows),
    min-max normalised over the pairs unless ``normalise`` is False."""
    return _pairwise(rows, lambda inter, du, dv: inter / (du + dv - inter), block_size, normalise)


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


def genre_js_similarity(
    rows: sp.spmatrix, genres: sp.spmatrix, block_size: int = BLOCK_SIZE
) -> np.ndarray:
    """1 - JS(g_u, g_v), the Jensen-Shannon divergence with base-2 logarithms (in [0, 1]),
    of the users' genre distributions; not normalised (UF mixes it in as it is)."""
    if genres is None:
        raise ValueError("genre_js_similarity needs item genres (item_features)")
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
    jaccard_raw: np.ndarray, genre_sim: np.ndarray | None, gamma: float
) -> np.ndarray:
    """sim_UF = gamma * jaccard_raw + (1 - gamma) * genre_sim, on the raw values.

    ``jaccard_raw`` is the raw (not normalised) Jaccard; ``genre_sim`` is 1 - JS and may be
    None only when gamma == 1, where ``jaccard_raw`` itself is returned (no copy). No min-max
    normalisation: UF's threshold and weights are taken on these values
    (docs/method.md#uf).
    """
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if gamma == 1.0:
        return jaccard_raw
    if genre_sim is None:
        raise ValueError(f"gamma={gamma} < 1 needs the genre similarity (item genres)")
    if genre_sim.shape != jaccard_raw.shape:
        raise ValueError(f"genre_sim {genre_sim.shape} != jaccard_raw {jaccard_raw.shape}")
    mixed = gamma * jaccard_raw
    mixed += (1.0 - gamma) * genre_sim
    return mixed


#: The user similarities, by the name of their file (results/D/similarity/KIND.npz).
KINDS = ("cos", "jacc", "genre")


@dataclass(frozen=True)
class Similarity:
    """One user similarity of the evaluated users, as stored and as the measures read it.

    ``sim`` is (m, m), symmetric, diagonal 0: for ``cos`` and ``jacc`` min-max normalised
    over the pairs (what PUF reads), for ``genre`` (1 - JS) as it is. ``lo`` and ``hi`` are
    the raw minimum and maximum over the pairs that ``sim`` was normalised with (0 and 1 for
    ``genre``), so :meth:`raw` gives the raw values back (what UF reads).
    """

    users: np.ndarray  # (m,) external ids of the evaluated users, canonical order
    sim: np.ndarray
    seconds: float = 0.0
    lo: float = 0.0
    hi: float = 1.0

    def raw(self, inplace: bool = False) -> np.ndarray:
        """``lo + sim * (hi - lo)`` on the pairs, diagonal 0; ``sim`` itself (do not
        modify it) when that map is the identity. ``inplace`` overwrites ``sim`` (no copy;
        the object no longer holds the normalised values afterwards)."""
        if self.lo == 0.0 and self.hi == 1.0:
            return self.sim
        out = self.sim if inplace else self.sim.copy()
        out *= self.hi - self.lo
        out += self.lo
        np.fill_diagonal(out, 0.0)
        return out


def compute(
    kind: str,
    rows: sp.spmatrix,
    users: np.ndarray,
    genres: sp.spmatrix | None = None,
    block_size: int = BLOCK_SIZE,
) -> Similarity:
    """The similarity ``kind`` (one of :data:`KINDS`) of the evaluated users' train
    ``rows``, timed (``seconds``: raw values, range and normalisation together, after an
    untimed first run on tiny inputs in this process: ``userfair.engine.warmup``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown similarity {kind!r}; expected one of {KINDS}")
    tiny = warmup.tiny_inputs
    warmup.once(
        ("similarity", kind), lambda: compute(kind, tiny().train, tiny().users, tiny().genres)
    )
    start = time.perf_counter()
    if kind == "genre":
        sim, lo, hi = genre_js_similarity(rows, genres, block_size), 0.0, 1.0
    else:
        raw = (cosine if kind == "cos" else jaccard)(rows, block_size, normalise=False)
        lo, hi = pair_range(raw, block_size)
        sim = min_max(raw, block_size, inplace=True)
    seconds = time.perf_counter() - start
    return Similarity(np.asarray(users).astype(str), sim, seconds, lo, hi)


def save(path: str | os.PathLike, similarity: Similarity) -> None:
    """Write a similarity file: ``users`` (external ids), ``sim`` (m x m), ``seconds``,
    ``raw_min`` and ``raw_max``."""
    users = np.asarray(similarity.users).astype(str)
    sim = similarity.sim
    if sim.shape != (len(users), len(users)):
        raise ValueError(f"sim has shape {sim.shape}, expected {(len(users),) * 2}")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(
                handle,
                users=users,
                sim=sim,
                seconds=np.float64(similarity.seconds),
                raw_min=np.float64(similarity.lo),
                raw_max=np.float64(similarity.hi),
            )


FIELDS = ("users", "sim", "seconds", "raw_min", "raw_max")


def load(path: str | os.PathLike, expected_users: np.ndarray | None = None) -> Similarity:
    """The :class:`Similarity` of a file written by :func:`save`.

    With ``expected_users`` (e.g. ``Inputs.users``), a file whose users differ from them
    (another split, another order) is an InputError.
    """
    if not os.path.isfile(path):
        raise InputError(f"{path}: file not found")
    data = read_npz(path)  # a damaged file: one line naming it and the rule that writes it
    for field in FIELDS:
        if field not in data:
            raise FileError(
                path,
                f"{path}: missing field '{field}' (a file of an older version)",
                "delete it and write it again",
            )
    users, sim = data["users"].astype(str), data["sim"]
    seconds, lo, hi = (float(data[f]) for f in ("seconds", "raw_min", "raw_max"))
    if sim.shape != (len(users), len(users)):
        raise InputError(f"{path}: field 'sim' has shape {sim.shape}, expected {(len(users),) * 2}")
    if expected_users is not None and not np.array_equal(
        users, np.asarray(expected_users).astype(str)
    ):
        raise InputError(
            f"{path}: field 'users' does not match the evaluated users of the split "
            f"({len(users)} stored, {len(expected_users)} expected, in canonical order)"
        )
    return Similarity(users, sim, seconds, lo, hi)


def load_dataset(
    cos: str | os.PathLike,
    jacc: str | os.PathLike,
    genre=(),
    expected_users: np.ndarray | None = None,
) -> dict[str, Similarity]:
    """A dataset's similarity files as ``evaluate``/``bootstrap`` take them: ``{"cos",
    "jacc"[, "genre"]}`` (the genre similarity is given, as a path or a one-path list,
    only when gamma < 1 needs it), each checked against ``expected_users``."""
    paths = {"cos": cos, "jacc": jacc}
    paths.update(
        {"genre": path for path in ([genre] if isinstance(genre, (str, os.PathLike)) else genre)}
    )
    return {kind: load(path, expected_users) for kind, path in paths.items()}
