"""The columns of the per-user decomposition (docs/method.md#who) that both of its routes
fill the same way: the names (:data:`SHARES`, :data:`SIGNED`, :data:`ATTRIBUTES`,
:data:`COLUMNS`), the shares that follow from the per-user scores alone (Gini's and SD's),
the user attributes, and the check of the options. The pair shares are the dense route's
(:mod:`userfair.decomposition.decompose`) and the streamed route's
(:mod:`userfair.decomposition.decompose_stream`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.files.inputs import Inputs
from userfair.formulas import fairness
from userfair.measures import FAIR_PUF

#: The per-user columns whose sum over the users is the measure of the same name, in order.
SHARES = FAIR_PUF + ("UF", "ME", "MME", "PEU", "Gini-P", "Gini-NDCG", "SD-P", "SD-NDCG")
#: The signed parts: each column, too, sums over the users to the measure before the colon.
SIGNED = tuple(
    f"{name}:{part}"
    for name in FAIR_PUF + ("Gini-P", "Gini-NDCG")
    for part in ("disadvantaged", "advantaged")
) + ("ME:envies", "ME:envied", "MME:envies", "MME:envied")
#: The user attributes (docs/method.md#who-attributes).
ATTRIBUTES = ("train_items", "popularity", "mean_similarity")
#: Every column of :func:`decompose`'s frame, before the caller's user features.
COLUMNS = ("user_id", "P", "NDCG") + SHARES + SIGNED + ATTRIBUTES


def gini_parts(scores):
    """(share, disadvantaged, advantaged) of Gini = sum_j (2j - m - 1) x_(j) / (m sum x).

    share_u = (2 r_u - m - 1) x_u / (m sum x) with r_u the user's rank in ascending order;
    tied users take the mean of their positions' weights (r_u = their average rank), which
    leaves the sum unchanged because their scores are equal. The signed parts read Gini as
    its pair sum, sum over unordered pairs |x_u - x_v| / (m sum x): disadvantaged_u is the
    sum over the better-served v of x_v - x_u, advantaged_u over the worse-served v of
    x_u - x_v, each divided by m sum x. NaN when every score is 0 (Gini is NaN).
    """
    x = np.asarray(scores, dtype=np.float64)
    m, total = x.size, x.sum()
    if m == 0 or total == 0:
        return (np.full(m, math.nan),) * 3
    from scipy.stats import rankdata  # here: scipy.stats costs a second to import

    ranks = rankdata(x, method="average")
    share = (2.0 * ranks - m - 1) * x / (m * total)
    ordered = np.sort(x)
    prefix = np.r_[0.0, np.cumsum(ordered)]
    below = np.searchsorted(ordered, x, side="left")  # users with a lower score
    above = m - np.searchsorted(ordered, x, side="right")  # users with a higher score
    advantaged = below * x - prefix[below]
    disadvantaged = (prefix[m] - prefix[m - above]) - above * x
    return share, disadvantaged / (m * total), advantaged / (m * total)


def sd_share(scores) -> np.ndarray:
    """SD_u = SD * (x_u - mean)^2 / sum_v (x_v - mean)^2: the user's share of the variance,
    scaled so that the column sums to the SD (the SD is not a sum; its square is). 0 for
    every user when all scores are equal; NaN without users."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    squares = (x - x.mean()) ** 2
    total = squares.sum()
    if total == 0:
        return np.zeros(x.size)
    return float(np.std(x)) * squares / total


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


def score_columns(columns: dict, scores: dict) -> None:
    """Gini's and SD's columns, from the per-user scores alone."""
    for name in ("P", "NDCG"):
        share, worse, better = gini_parts(scores[name])
        columns[f"Gini-{name}"] = share
        columns[f"Gini-{name}:disadvantaged"], columns[f"Gini-{name}:advantaged"] = worse, better
        columns[f"SD-{name}"] = sd_share(scores[name])


def check_options(gamma: float, envy_utility: str) -> None:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
