"""The columns of the per-user decomposition (docs/method.md#who) that both of its routes
fill the same way: the names (:data:`SHARES`, :data:`SIGNED`, :data:`ATTRIBUTES`,
:data:`COLUMNS`), the shares that follow from the per-user scores alone (Gini's and SD's),
the user attributes, and the check of the options. The statistics' columns come from their
declarations (``userfair.measures.statistics``: each one's ``statistic.shares``), the envy
measures' from theirs (``userfair.measures.envy_measures``: each one's reduction). The
pair shares are the dense route's (:mod:`userfair.decomposition.decompose`) and the
streamed route's
(:mod:`userfair.decomposition.decompose_stream`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.files.inputs import Inputs
from userfair.formulas import envy_reductions, fairness, spread
from userfair.measures import FAIR_PUF, envy_measures, fused, statistics

#: The built-in statistics of P and NDCG the decomposition serves (SD, Gini), in table order.
STATISTICS = statistics(("P", "NDCG"), "decompose")
#: The built-in envy measures the decomposition serves (ME, MME, PEU), in table order.
ENVY = envy_measures("decompose")
#: The per-user columns whose sum over the users is the measure of the same name, in order.
SHARES = fused(FAIR_PUF) + ("UF",) + tuple(m.name for m in ENVY) + tuple(m.name for m in STATISTICS)
#: The signed parts: each column, too, sums over the users to the measure before the colon.
SIGNED = (
    tuple(f"{name}:{part}" for name in fused(FAIR_PUF) for part in ("disadvantaged", "advantaged"))
    + tuple(f"{m.name}:{part}" for m in STATISTICS for part in spread.of(m).parts)
    + tuple(f"{m.name}{suffix}" for m in ENVY for suffix in envy_reductions.of(m).suffixes)
)
#: The user attributes (docs/method.md#who-attributes).
ATTRIBUTES = ("train_items", "popularity", "mean_similarity")
#: Every column of :func:`decompose`'s frame, before the caller's user features.
COLUMNS = ("user_id", "P", "NDCG") + SHARES + SIGNED + ATTRIBUTES


def attributes(inputs: Inputs, cosine: np.ndarray | None = None) -> pd.DataFrame:
    """``train_items`` (the user's number of train items), ``popularity`` (the mean, over the
    user's train items, of the number of train users of the item; NaN without train items)
    and ``mean_similarity`` (the mean min-max normalised cosine, the one PUF reads, to the
    other evaluated users; NaN for m < 2; only with ``cosine``), in canonical order."""
    train = sp.csr_matrix(inputs.train, dtype=np.float64)
    train.data[:] = 1.0
    rows = train[inputs.train_rows]
    activity = np.diff(rows.indptr).astype(np.int64)
    item_users = np.asarray(train.sum(axis=0)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        popularity = np.where(activity > 0, (rows @ item_users) / activity, math.nan)
    m = len(inputs.users)
    mean_similarity = np.full(m, math.nan)
    if cosine is not None and m >= 2:
        mean_similarity = np.asarray(cosine.sum(axis=1)).ravel() / (m - 1)  # diagonal is 0
    return pd.DataFrame(
        {"train_items": activity, "popularity": popularity, "mean_similarity": mean_similarity}
    )


def score_columns(columns: dict, scores: dict, chosen=STATISTICS) -> None:
    """The columns of the ``chosen`` statistics (SD's, Gini's and its signed parts), from
    the per-user scores alone: each declaration's ``statistic.shares``."""
    for measure in chosen:
        for suffix, column in spread.of(measure).shares(scores[measure.effectiveness]).items():
            columns[measure.name + suffix] = column


def check_options(gamma: float, envy_utility: str) -> None:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
