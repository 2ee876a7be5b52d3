"""From a split and a top-k list to the arrays every measure reads.

Evaluated users are the users of TEST, in sorted order of their external ids (the canonical
order shared by the similarity files and the measures). Items are every item of TRAIN and
TEST (and VALID, when given: a model may recommend an item seen only in validation), sorted.
Everything downstream is index arrays and scipy.sparse matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.files.io import InputError, read_inter
from userfair.files.runfiles import read_run

#: Columns of an item-feature file that may hold the genres (the first present one is used).
GENRE_COLUMNS = ("genre", "genres", "class")


@dataclass(frozen=True)
class Inputs:
    users: np.ndarray  # (m,) external ids (str) of evaluated users, sorted
    items: np.ndarray  # (n,) external ids (str) of all items of TRAIN, TEST (and VALID), sorted
    train: sp.csr_matrix  # (u, n) binary train matrix over all users of TRAIN (and TEST)
    train_rows: np.ndarray  # (m,) row of each evaluated user in `train`
    relevant: sp.csr_matrix  # (m, n) binary: test items of each evaluated user
    topk: np.ndarray  # (m, k) int64 item indices in rank order
    genres: sp.csr_matrix | None  # (n, g) binary item-genre indicators, or None
    # Graded relevance (``load_inputs(grade=FIELD)``), else None: the same nonzero pattern
    # as ``train`` and ``relevant``, each interaction's grade as its value.
    train_grades: sp.csr_matrix | None = None  # (u, n) like ``train``
    grades: sp.csr_matrix | None = None  # (m, n) like ``relevant``

    def graded_train_of_evaluated(self) -> sp.csr_matrix:
        """(m, n) graded train rows of the evaluated users, in canonical order."""
        if self.train_grades is None:
            raise ValueError("no grades: load the inputs with grade=FIELD (--grade)")
        return self.train_grades[self.train_rows]

    def train_of_evaluated(self) -> sp.csr_matrix:
        """(m, n) binary train rows of the evaluated users, in canonical order."""
        return self.train[self.train_rows]


def _interactions(source, name: str, grade: str | None = None) -> tuple[pd.DataFrame, str]:
    """(user_id, item_id) strings of a .inter path or a DataFrame, and a label for errors;
    with ``grade``, a third column ``grade`` (float64) from that numeric field."""
    if isinstance(source, pd.DataFrame):
        label = f"{name} (DataFrame)"
        for column in ("user_id", "item_id"):
            if column not in source.columns:
                raise InputError(f"{label}: missing column '{column}'")
        frame = source
    else:
        label = str(source)
        try:
            frame = read_inter(source)
        except InputError:  # read_inter names the file, the line and the field itself
            raise
        except ValueError as error:  # e.g. an empty or textual cell in a float field
            raise InputError(
                f"{label}: {error} in a numeric field: give every interaction a number"
            ) from None
    out = frame[["user_id", "item_id"]].astype(str)
    if grade is not None:
        out["grade"] = _grades(frame, grade, label)
    return out, label


def _grades(frame: pd.DataFrame, field: str, label: str) -> np.ndarray:
    """The finite, non-negative numbers of ``frame[field]``; InputError naming the field
    and the first interaction without one."""
    if field not in frame.columns:
        raise InputError(
            f"{label}: no field {field!r} to read the grades from (fields: "
            f"{[str(c) for c in frame.columns]}); name a numeric field with --grade"
        )
    values = pd.to_numeric(frame[field], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = frame[bad].iloc[0]
        raise InputError(
            f"{label}: field {field!r} holds no grade >= 0 ({row[field]!r}) for user "
            f"{str(row['user_id'])!r}, item {str(row['item_id'])!r}: give every interaction "
            "a numeric grade"
        )
    return values


def _distinct(column) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values as str) of an id column, by hashing (``pd.factorize``): the
    string work of sorting and searching is then done on the distinct values only."""
    codes, distinct = pd.factorize(np.asarray(column))
    return codes, np.asarray(distinct).astype(str)


def _positions(distinct: tuple[np.ndarray, np.ndarray], universe: np.ndarray) -> np.ndarray:
    """The index of each value of an id column, given as its ``_distinct`` pair, in the
    sorted ``universe`` (which holds them all): ``np.searchsorted(universe, column)``,
    searched once per distinct value."""
    codes, values = distinct
    return np.searchsorted(universe, values)[codes]


def _binary_matrix(rows: np.ndarray, cols: np.ndarray, shape) -> sp.csr_matrix:
    """A binary CSR matrix with ones at (rows, cols); repeated pairs count once."""
    matrix = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=shape)
    matrix.data[:] = 1.0
    matrix.sort_indices()
    return matrix


def _graded_matrix(rows: np.ndarray, cols: np.ndarray, grades: np.ndarray, shape):
    """A CSR matrix with the same pattern as ``_binary_matrix(rows, cols)`` and each pair's
    grade as its value (a repeated pair keeps its largest grade; a grade 0 is stored)."""
    order = np.lexsort((grades, cols, rows))
    rows, cols, grades = rows[order], cols[order], grades[order]
    last = np.r_[(rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1]), True]
    matrix = sp.csr_matrix((grades[last], (rows[last], cols[last])), shape=shape)
    matrix.sort_indices()
    return matrix


def _topk_matrix(
    topk: pd.DataFrame, label: str, users: np.ndarray, items: np.ndarray, k: int, sources: str
) -> np.ndarray:
    """(m, k) item indices in rank order; validates coverage, length, repeats, known items."""
    topk = topk[topk["user_id"].isin(users)]
    missing = users[~pd.Index(users).isin(topk["user_id"].unique())]
    if len(missing):
        raise InputError(
            f"{label}: field 'user_id' lacks {len(missing)} TEST user(s), e.g. {str(missing[0])!r}"
        )
    unknown = ~topk["item_id"].isin(items)
    if unknown.any():
        raise InputError(
            f"{label}: field 'item_id' names {int(unknown.sum())} item(s) absent from "
            f"{sources}, e.g. {str(topk['item_id'][unknown].iloc[0])!r}"
            + (
                "; if the lists rank every item (RecBole's do), give the valid split too "
                "(--valid D.valid.inter, or valid= in load_inputs)"
                if "VALID" not in sources
                else ""
            )
        )
    repeated = topk.duplicated(["user_id", "item_id"])
    if repeated.any():
        row = topk[repeated].iloc[0]
        raise InputError(
            f"{label}: field 'item_id' repeats item {str(row['item_id'])!r} in the list of "
            f"user {str(row['user_id'])!r}"
        )
    repeated = topk.duplicated(["user_id", "rank"])
    if repeated.any():
        row = topk[repeated].iloc[0]
        raise InputError(
            f"{label}: field 'rank' repeats rank {row['rank']} for user {str(row['user_id'])!r}"
        )
    topk = topk.sort_values(["user_id", "rank"], kind="stable")
    topk = topk.groupby("user_id", sort=False).head(k)
    lengths = topk.groupby("user_id", sort=True).size().reindex(users)
    short = lengths < k
    if short.any():
        raise InputError(
            f"{label}: field 'item_id' has {int(lengths[short].iloc[0])} item(s) for user "
            f"{str(lengths[short].index[0])!r}, fewer than k={k}"
        )
    user_index = _positions(_distinct(topk["user_id"]), users)
    item_index = _positions(_distinct(topk["item_id"]), items)
    order = np.lexsort((topk["rank"].to_numpy(), user_index))
    return item_index[order].reshape(len(users), k).astype(np.int64)


def _genre_tokens(value) -> list[str]:
    """Tokens of one genre cell: a space-separated string, a list of tokens, or missing."""
    if isinstance(value, str):
        return value.split()
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return []
    return [str(token) for token in value]


def read_genre_matrix(source, items: np.ndarray) -> sp.csr_matrix:
    """(n, g) binary item-genre matrix from a RecBole .item file or a DataFrame.

    The genre column is the first of ``GENRE_COLUMNS`` present: in a file a space-separated
    token_seq, in a DataFrame space-separated strings or lists of tokens. Items of
    ``items`` absent from the source get no genre.
    """
    if isinstance(source, pd.DataFrame):
        label, names = "ITEM_FEATURES (DataFrame)", [str(c) for c in source.columns]
        header = names
    else:
        path = Path(source)
        label = str(path)
        if not path.is_file():
            raise InputError(f"{path}: file not found")
        header = path.open().readline().rstrip("\n").split("\t")
        names = [h.split(":")[0] for h in header]
    if "item_id" not in names:
        raise InputError(f"{label}: missing column 'item_id' in header {header!r}")
    column = next((c for c in GENRE_COLUMNS if c in names), None)
    if column is None:
        raise InputError(
            f"{label}: no genre column; expected one of {list(GENRE_COLUMNS)} in {header!r}"
        )
    if isinstance(source, pd.DataFrame):
        frame = source[["item_id", column]].assign(item_id=source["item_id"].astype(str))
    else:
        frame = pd.read_csv(
            path,
            sep="\t",
            header=0,
            names=names,
            usecols=["item_id", column],
            dtype=str,
            keep_default_na=False,
            quoting=3,
        )
    frame = frame[frame["item_id"].isin(items)]
    tokens = frame[column].map(_genre_tokens)
    pairs = frame.assign(genre=tokens).explode("genre").dropna(subset=["genre"])
    pairs = pairs[pairs["genre"] != ""]
    vocabulary = np.unique(pairs["genre"].to_numpy().astype(str))
    return _binary_matrix(
        np.searchsorted(items, pairs["item_id"].to_numpy()),
        np.searchsorted(vocabulary, pairs["genre"].to_numpy().astype(str)),
        (len(items), len(vocabulary)),
    )


def load_inputs(
    train,
    test,
    topk,
    k: int = 10,
    item_features=None,
    valid=None,
    topk_format: str = "auto",
    grade: str | None = None,
) -> Inputs:
    """Index a split and a top-k list.

    ``train``/``test``: paths of RecBole .inter files or DataFrames with user_id, item_id;
    ``topk``: a path or a DataFrame of the lists in one of the formats of
    :mod:`userfair.files.runfiles` (``topk_format``: auto, native, trec, scores); only the first k
    ranks of each user are used, users not in TEST are ignored;
    ``item_features``: a .item file or a DataFrame with item_id and a genre column, or None;
    ``valid``: the validation split (path or DataFrame), or None. Its items join the item
    universe (a list may hold an item seen only in validation: RecBole ranks all items);
    its interactions are used nowhere else.
    ``grade``: the numeric field of TRAIN and TEST holding each interaction's grade (e.g.
    RecBole's ``rating``), or None (binary relevance only); fills ``train_grades`` and
    ``grades``. InputError when the field is absent or an interaction lacks a number >= 0.
    Raises InputError naming the file and field on a TOPK that misses a TEST user, has
    fewer than k items for a user, repeats an item or names an item absent from
    TRAIN/TEST (and VALID, when given).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    train_frame, train_label = _interactions(train, "TRAIN", grade)
    test_frame, test_label = _interactions(test, "TEST", grade)
    topk_frame, topk_label = read_run(topk, topk_format)
    if train_frame.empty:
        raise InputError(
            f"{train_label}: no interactions; TRAIN holds what the users saw before the test "
            "(the user similarities are computed from it): give the split's train file"
        )
    if test_frame.empty:
        raise InputError(f"{test_label}: no interactions, so no user to evaluate")

    ids = {
        (part, column): _distinct(frame[column])
        for part, frame in (("train", train_frame), ("test", test_frame))
        for column in ("user_id", "item_id")
    }
    users = np.unique(ids["test", "user_id"][1])
    known = [ids["train", "item_id"][1], ids["test", "item_id"][1]]
    if valid is not None:
        known.append(_distinct(_interactions(valid, "VALID")[0]["item_id"])[1])
    items = np.unique(np.concatenate(known))
    # Rows of `train`: every TRAIN user, plus TEST users without train data (empty rows).
    train_users = np.unique(np.concatenate([ids["train", "user_id"][1], users]))
    train_cells = (
        _positions(ids["train", "user_id"], train_users),
        _positions(ids["train", "item_id"], items),
        (len(train_users), len(items)),
    )
    test_cells = (
        _positions(ids["test", "user_id"], users),
        _positions(ids["test", "item_id"], items),
        (len(users), len(items)),
    )
    train_matrix = _binary_matrix(*train_cells)
    relevant = _binary_matrix(*test_cells)
    graded = {}
    if grade is not None:
        graded = {
            "train_grades": _graded_matrix(*train_cells[:2], train_frame["grade"].to_numpy(),
                                           train_cells[2]),
            "grades": _graded_matrix(*test_cells[:2], test_frame["grade"].to_numpy(),
                                     test_cells[2]),
        }  # fmt: skip
    return Inputs(
        users=users,
        items=items,
        train=train_matrix,
        train_rows=np.searchsorted(train_users, users).astype(np.int64),
        relevant=relevant,
        topk=_topk_matrix(
            topk_frame,
            topk_label,
            users,
            items,
            k,
            "TRAIN and TEST" if valid is None else "TRAIN, VALID and TEST",
        ),
        genres=None if item_features is None else read_genre_matrix(item_features, items),
        **graded,
    )


def load_split_inputs(train, test, item_features=None) -> Inputs:
    """The :class:`Inputs` of a split alone, for work that needs no model's lists (the
    similarity files, Figs. 2 and 4): ``topk`` is an empty (m, 0) array, so any measure
    that reads it fails loudly instead of using a placeholder."""
    test_frame = read_inter(test) if not isinstance(test, pd.DataFrame) else test
    users = np.unique(test_frame["user_id"].astype(str).to_numpy())
    first_items = test_frame.astype({"user_id": str, "item_id": str}).drop_duplicates("user_id")
    placeholder = pd.DataFrame(
        {"user_id": first_items["user_id"], "item_id": first_items["item_id"], "rank": 1}
    )
    inputs = load_inputs(train, test_frame, placeholder, k=1, item_features=item_features)
    return replace(inputs, topk=np.empty((len(users), 0), dtype=np.int64))
