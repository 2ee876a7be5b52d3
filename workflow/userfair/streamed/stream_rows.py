"""The evaluated users' train rows as the streamed kernels read them (:class:`Rows`:
binary CSR, degrees, genre distributions when gamma < 1), the jobs' numba threads, and the
row ranges that split the pair passes of :mod:`userfair.streamed.streaming` over jobs of
about equal work (:func:`ranges`; the workflow's scatter parts are ranges of them)."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from userfair.engine._backend import binary_csr
from userfair.formulas import _kernels
from userfair.similarity.pairwise import genre_distributions


@dataclass(frozen=True)
class Rows:
    row_ptr: np.ndarray
    row_items: np.ndarray
    col_ptr: np.ndarray
    col_users: np.ndarray
    degrees: np.ndarray  # float64 |H_u|
    dist: np.ndarray  # (m, g) genre distributions, (m, 0) when unused
    own: np.ndarray  # (m,) their base-2 entropies
    items: int  # n, the train matrix's columns

    @property
    def m(self) -> int:
        return self.degrees.shape[0]

    def pair_arguments(self) -> tuple:
        """The first arguments of the compiled pair kernels (``pass_one_rows``,
        ``pass_two_rows``): the train rows as user -> items and item -> users lists and the
        degrees; the row range, gamma and the genre arrays follow."""
        return (self.row_ptr, self.row_items, self.col_ptr, self.col_users, self.degrees)


def prepare_rows(rows: sp.spmatrix, gamma: float, genres: sp.spmatrix | None) -> Rows:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    rows = binary_csr(rows)
    rows.sort_indices()
    columns = rows.tocsc()
    columns.sort_indices()
    m = rows.shape[0]
    if gamma < 1.0:
        if genres is None:
            raise ValueError(f"gamma={gamma} < 1 needs the item genres")
        dist = np.ascontiguousarray(genre_distributions(rows, genres))
        with np.errstate(divide="ignore", invalid="ignore"):
            own = -np.where(dist > 0, dist * np.log2(dist), 0.0).sum(axis=-1)
    else:
        dist, own = np.zeros((m, 0)), np.zeros(m)
    as64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
    return Rows(
        as64(rows.indptr),
        as64(rows.indices),
        as64(columns.indptr),
        as64(columns.indices),
        np.diff(rows.indptr).astype(np.float64),
        dist,
        own,
        rows.shape[1],
    )


def numba_threads() -> int:
    _kernels.use_job_cores()

    return int(numba.get_num_threads())


def row_range(m: int, start: int, stop: int | None) -> tuple[int, int]:
    stop = m if stop is None else stop
    if not 0 <= start <= stop <= m:
        raise ValueError(f"row range {start}:{stop} outside 0:{m}")
    return start, stop


def row_work(rows: sp.spmatrix, gamma: float = 1.0) -> np.ndarray:
    """(m,) estimated work of each row in both passes: the item visits of its pairs with
    later users (sum over its items of the users after it), plus, when gamma < 1, its m - 1 - u
    dense pairs. :func:`ranges` balances on it."""
    columns = binary_csr(rows).tocsc()
    columns.sort_indices()
    m = rows.shape[0]
    lengths = np.diff(columns.indptr)
    position = np.arange(columns.nnz) - np.repeat(columns.indptr[:-1], lengths)
    later = np.repeat(lengths, lengths) - 1 - position  # users after u in the item's column
    work = np.bincount(columns.indices, weights=later, minlength=m) + 1.0
    if gamma < 1.0:
        work += 8.0 * (m - 1 - np.arange(m))
    return work


def ranges(rows: sp.spmatrix, parts: int, gamma: float = 1.0) -> list[tuple[int, int]]:
    """``parts`` consecutive row ranges covering the users with about equal work each (for
    scattering pass one or two over jobs); fewer when there are fewer users."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts}")
    m = rows.shape[0]
    cumulative = np.cumsum(row_work(rows, gamma))
    total = cumulative[-1] if m else 0.0
    cuts = np.searchsorted(cumulative, total * np.arange(1, parts) / parts, side="right")
    bounds = np.unique(np.r_[0, np.clip(cuts, 0, m), m])
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(0, m)]
