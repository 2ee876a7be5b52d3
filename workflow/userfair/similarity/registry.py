"""The one registry of the user similarities PUF can read (docs/method.md#other-user-similarities).

Every similarity is one function registered with :func:`register`: it takes the
:class:`SimilarityData` of the evaluated users and returns a *block function*
``block(start, stop)`` giving the raw similarities of the users ``start:stop`` with every
evaluated user, a (stop - start, m) scipy.sparse matrix (entries not stored are 0) or a
dense array. Both routes read only those blocks: the dense route stacks them into the
(m, m) matrix and min-max normalises it over the unordered pairs
(``userfair.similarity.pairwise.min_max``), the streamed route (``userfair.opt_in.variants``) folds
them into PUF's sums without holding m x m. Adding a similarity is one decorated function here;
its label (``userfair.measures.PUF_SIMILARITIES``) names its measures ``PUF-{S}-{LABEL}``.

=========  ======  ========================================================================
name       label   raw similarity of users u and v
=========  ======  ========================================================================
``cos``    Cos     |H_u & H_v| / sqrt(|H_u| |H_v|) of the binary train rows
``jacc``   Jacc    |H_u & H_v| / |H_u | H_v| of the binary train rows
``rcos``   RCos    cosine of the graded train rows (needs grades)
``vec``    Vec     cosine of the user vectors (needs ``vectors``)
``genre``  Genre   cosine of the genre distributions (needs item genres)
=========  ======  ========================================================================

A zero vector has cosine 0 with everything. ``cos`` and ``jacc`` are the paper's PUF
similarities (``userfair.similarity.pairwise``'s values: Jacc the same numbers, Cos to rounding).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.engine._backend import binary_csr
from userfair.files.io import InputError
from userfair.similarity.pairwise import genre_distributions


@dataclass(frozen=True)
class SimilarityData:
    """What the similarities read, rows in the canonical order of the evaluated users."""

    train: sp.csr_matrix  # (m, n) binary train rows
    grades: sp.csr_matrix | None = None  # (m, n) graded train rows
    genres: sp.csr_matrix | None = None  # (n, g) item-genre indicators
    vectors: np.ndarray | None = None  # (m, d) user vectors

    @classmethod
    def of(cls, inputs, vectors: np.ndarray | None = None) -> SimilarityData:
        """The data of ``userfair.files.inputs.Inputs`` (grades when it has them)."""
        grades = None if inputs.train_grades is None else inputs.graded_train_of_evaluated()
        return cls(inputs.train_of_evaluated(), grades, inputs.genres, vectors)

    @property
    def m(self) -> int:
        return self.train.shape[0]


Block = Callable[[int, int], "sp.csr_matrix | np.ndarray"]


@dataclass(frozen=True)
class Entry:
    name: str  # the registry key, as in config and on the command line
    label: str  # the measure names' SIM
    needs: str | None  # "grades", "vectors", "genres" or None
    blocks: Callable[[SimilarityData], Block]


#: The registry, in table order (``userfair.measures.PUF_SIMILARITIES``).
REGISTRY: dict[str, Entry] = {}


def register(name: str, label: str, needs: str | None = None):
    """Register the decorated ``function(data) -> block`` as similarity ``name``."""

    def add(function):
        REGISTRY[name] = Entry(name, label, needs, function)
        return function

    return add


def entry(name_or_label: str) -> Entry:
    """The registered similarity of that name (``rcos``) or label (``RCos``)."""
    for item in REGISTRY.values():
        if name_or_label in (item.name, item.label):
            return item
    raise ValueError(f"unknown similarity {name_or_label!r}; expected one of {list(REGISTRY)}")


def block_function(name: str, data: SimilarityData) -> Block:
    """The block function of similarity ``name`` on ``data``; ValueError naming what is
    missing (grades, vectors, genres) and how to give it."""
    item = entry(name)
    how = {"grades": "--grade FIELD", "vectors": "--user-vectors FILE", "genres": "--item-features"}
    if item.needs is not None and getattr(data, item.needs) is None:
        raise ValueError(f"similarity {item.name!r} needs {item.needs}: give {how[item.needs]}")
    if data.vectors is not None and data.vectors.shape[0] != data.m:
        raise ValueError(f"vectors have {data.vectors.shape[0]} rows for {data.m} users")
    return item.blocks(data)


def _overlap_blocks(train: sp.csr_matrix, formula) -> Block:
    """Blocks of ``formula(intersection, deg_u, deg_v)`` over the pairs sharing an item."""
    rows = binary_csr(train)
    columns, degrees = rows.T.tocsr(), np.asarray(rows.sum(axis=1)).ravel()

    def block(start: int, stop: int) -> sp.csr_matrix:
        inter = (rows[start:stop] @ columns).tocsr()  # (b, m): the items each pair shares
        u = np.repeat(np.arange(start, stop), np.diff(inter.indptr))
        # a stored intersection is >= 1, so both degrees are: no division by 0
        inter.data = formula(inter.data, degrees[u], degrees[inter.indices])
        return inter

    return block


class CosineBlocks:
    """The block function of the cosine of the rows of ``vectors`` (sparse or dense): the
    unit rows are made once (``unit``: CSR or a C-ordered float64 array) and every block
    is their product. The streamed route reads ``unit`` itself (``userfair.opt_in.variants``): it
    folds the cosine into PUF's sums without building blocks, each pair u < v once."""

    def __init__(self, vectors):
        if sp.issparse(vectors):
            vectors = sp.csr_matrix(vectors, dtype=np.float64)
            vectors.sum_duplicates()
            norms = np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel())
            inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
            self.unit = (sp.diags(inverse) @ vectors).tocsr()
            self.unit.sort_indices()
            self._columns = None
        else:
            vectors = np.asarray(vectors, dtype=np.float64)
            norms = np.linalg.norm(vectors, axis=1)
            self.unit = np.ascontiguousarray(vectors / np.where(norms > 0, norms, 1.0)[:, None])

    @property
    def sparse(self) -> bool:
        return sp.issparse(self.unit)

    @property
    def columns(self) -> sp.csr_matrix:
        """The unit rows transposed (items x users, CSR: users ascending per item)."""
        if self._columns is None:
            self._columns = self.unit.T.tocsr()
            self._columns.sort_indices()
        return self._columns

    def __call__(self, start: int, stop: int):
        if self.sparse:
            return (self.unit[start:stop] @ self.columns).tocsr()
        return self.unit[start:stop] @ self.unit.T


def _cosine_blocks(vectors) -> Block:
    """Blocks of the cosines of the rows of ``vectors`` (sparse or dense)."""
    return CosineBlocks(vectors)


@register("cos", "Cos")
def cosine(data: SimilarityData) -> Block:
    # the product of the unit rows: |H_u & H_v| / sqrt(|H_u| |H_v|) up to rounding, and
    # cheaper than the formula on each intersection
    return _cosine_blocks(binary_csr(data.train))


@register("jacc", "Jacc")
def jaccard(data: SimilarityData) -> Block:
    return _overlap_blocks(data.train, lambda inter, du, dv: inter / (du + dv - inter))


@register("rcos", "RCos", needs="grades")
def graded_cosine(data: SimilarityData) -> Block:
    return _cosine_blocks(data.grades)


@register("vec", "Vec", needs="vectors")
def vector_cosine(data: SimilarityData) -> Block:
    return _cosine_blocks(data.vectors)


@register("genre", "Genre", needs="genres")
def genre_cosine(data: SimilarityData) -> Block:
    return _cosine_blocks(genre_distributions(data.train, data.genres))


def read_user_vectors(path: str | os.PathLike, users: np.ndarray) -> np.ndarray:
    """(m, d) float64 vectors of ``users`` (canonical order) from a parquet or CSV file with
    a ``user_id`` column and numeric columns (every other column is a coordinate).
    InputError naming the file when a column is not numeric, a user repeats or an evaluated
    user has no row; users of the file not evaluated are ignored."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found (the user vectors)")
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
    else:
        frame = pd.read_csv(path, sep=None, engine="python", dtype={"user_id": str})
    if "user_id" not in frame.columns:
        raise InputError(f"{path}: missing column 'user_id' (columns: {list(frame.columns)})")
    frame = frame.assign(user_id=frame["user_id"].astype(str)).set_index("user_id")
    if frame.shape[1] == 0:
        raise InputError(f"{path}: no vector column beside 'user_id'")
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise InputError(f"{path}: column {column!r} is not numeric")
    repeated = frame.index.duplicated()
    if repeated.any():
        raise InputError(f"{path}: user {str(frame.index[repeated][0])!r} has more than one row")
    users = np.asarray(users).astype(str)
    missing = ~pd.Index(users).isin(frame.index)
    if missing.any():
        raise InputError(
            f"{path}: no vector for {int(missing.sum())} evaluated user(s), e.g. "
            f"{str(users[missing][0])!r}: give every test user a row"
        )
    vectors = frame.loc[users].to_numpy(dtype=np.float64)
    if not np.isfinite(vectors).all():
        row = int(np.nonzero(~np.isfinite(vectors).all(axis=1))[0][0])
        raise InputError(f"{path}: the vector of user {str(users[row])!r} is not finite")
    return vectors
