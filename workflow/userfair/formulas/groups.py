"""Group fairness beside the individual measures (docs/method.md#groups): groups of the
evaluated users (a user-groups file, a user feature of a RecBole ``.user`` file, or
activity), each group's size and mean effectiveness, and ``UserMAD-{P,NDCG}``: the mean
over unordered pairs of groups of the absolute difference of the groups' mean
effectiveness (with two groups, the user-oriented fairness gap of Li et al., WWW 2021).

Typical use::

    groups = groups_of(inputs, "activity:0.05")          # or "feature:gender", a file
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    measures(per_user, groups)                           # {"UserMAD-P": .., "UserMAD-NDCG": ..}
    group_rows(per_user, groups)                         # size and mean P, NDCG per group
    bootstrap(per_user, groups, weights)                 # the same, per resample

A group measure is a statistic of the groups' mean per-user score: its formula sits in
:data:`GROUP_STATISTICS` under the name its declaration gives (``userfair.measures.groups``,
``statistic="MAD"``, ``effectiveness="P"``), and every route (dense, streamed, bootstrap,
RecBole) reads the declarations (``userfair.measures.group_measures``) and calls
:func:`of`; no route names a group measure. The group means are those of every score a
group measure reads (:func:`group_scores`). This module also holds the library's one reader
of RecBole ``.user`` files.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from userfair.files.io import InputError, parse_atomic_header
from userfair.measures import Measure, group_measures
from userfair.measures.base import formulas_of

#: The default fraction of most active users (Li et al.'s 5 %).
ACTIVITY_SHARE = 0.05
#: The two activity groups, in order.
ACTIVE, INACTIVE = "active", "inactive"
#: Suffixes a user-groups file may have, and the separator each means (None: parquet).
GROUP_FILE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": "\t", ".parquet": None}
#: Relative slack of ceil(p m): a product p m within it of an integer counts as that integer.
CEIL_SLACK = 1e-9


# --- the one .user reader ---------------------------------------------------------------


def read_user_features(source, label: str | None = None, text: bool = False) -> pd.DataFrame:
    """A RecBole atomic ``.user`` file (``user_id:token`` and feature columns ``name:type``),
    from a path or an open (binary or text) handle; columns lose their ``:type``.

    Dtype rule: ``user_id`` and every column are read as the file's text, then a column typed
    ``:float`` is converted to float64 (an empty cell: NaN; any other non-number: InputError
    naming the file and column) unless ``text`` is true (every column stays text, as the
    workflow's ``who`` groups them). ``:token``, ``:token_seq`` and ``:float_seq`` stay text.
    Empty cells of text columns stay empty strings. ``label`` names the file in errors
    (default: the path)."""
    label = str(source) if label is None else label
    if isinstance(source, (str, os.PathLike)):
        if not os.path.isfile(source):
            raise InputError(f"{label}: file not found")
    try:
        frame = pd.read_csv(source, sep="\t", dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise InputError(f"{label}: {error}") from error
    fields = parse_atomic_header("\t".join(frame.columns))
    if "user_id" not in fields:
        raise InputError(
            f"{label}: missing column 'user_id' in header {list(fields.values())!r} "
            "(expected a RecBole atomic file: 'user_id:token<TAB>age:float...')"
        )
    frame.columns = list(fields)
    if not text:
        for name, header in fields.items():
            if header.split(":", 1)[-1] == "float" and name != "user_id":
                values = frame[name].str.strip()
                numbers = pd.to_numeric(values.where(values != ""), errors="coerce")
                bad = numbers.isna() & (values != "")
                if bad.any():
                    raise InputError(
                        f"{label}: column {header!r} is typed float but holds "
                        f"{frame.loc[bad, name].iloc[0]!r}; fix the value or type it :token"
                    )
                frame[name] = numbers.astype(np.float64)
    return frame


def read_user_groups(path: str | os.PathLike) -> pd.DataFrame:
    """A user-groups file: columns ``user_id`` and ``group`` (others ignored), as text;
    ``.csv`` (comma), ``.tsv``/``.tab``/``.txt`` (tab) or ``.parquet``."""
    suffix = Path(path).suffix.lower()
    if suffix not in GROUP_FILE_SUFFIXES:
        raise InputError(
            f"{path}: unknown suffix {suffix!r} of a user-groups file; "
            f"expected one of {sorted(GROUP_FILE_SUFFIXES)}"
        )
    if not os.path.isfile(path):
        raise InputError(f"{path}: file not found")
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            sep = GROUP_FILE_SUFFIXES[suffix]
            frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        raise InputError(f"{path}: {error}") from error
    frame.columns = [str(c).split(":", 1)[0] for c in frame.columns]  # 'user_id:token' too
    for column in ("user_id", "group"):
        if column not in frame.columns:
            raise InputError(
                f"{path}: missing column {column!r} in {list(frame.columns)!r} "
                "(expected columns user_id and group)"
            )
    return frame[["user_id", "group"]].astype(str)


# --- groups -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Groups:
    """A grouping of the evaluated users (canonical order, ``Inputs.users``).

    ``names``: the groups with at least one evaluated user, in order; ``labels``: (m,)
    int64, each user's index into ``names``, -1 for a user without a group (left out of the
    group measures); ``dropped``: groups named by the source with no evaluated user."""

    by: str
    names: tuple[str, ...]
    labels: np.ndarray
    dropped: tuple[str, ...] = ()

    @property
    def sizes(self) -> np.ndarray:
        """(G,) int64: the evaluated users of each group."""
        return np.bincount(self.labels[self.labels >= 0], minlength=len(self.names))

    @property
    def unassigned(self) -> int:
        """Evaluated users without a group."""
        return int((self.labels < 0).sum())

    def indicator(self) -> sp.csr_matrix:
        """(m, G) binary CSR: user u belongs to group g."""
        m, kept = len(self.labels), np.flatnonzero(self.labels >= 0)
        ones = np.ones(len(kept))
        return sp.csr_matrix((ones, (kept, self.labels[kept])), shape=(m, len(self.names)))


#: A user feature whose values are all numbers, with more distinct values than this
#: (ML-100k's age: 61 values), is cut into :data:`FEATURE_BANDS` bands (:func:`bands`);
#: one with fewer (gender, occupation, a few codes) gives one group per value.
MAX_FEATURE_GROUPS = 10
#: Bands of a numeric feature: its quintiles over the users of the ``.user`` file.
FEATURE_BANDS = 5


def bands(values: pd.Series, n: int = FEATURE_BANDS) -> pd.Series:
    """``values`` as groups: a numeric feature with more than :data:`MAX_FEATURE_GROUPS`
    distinct values cut at its ``n``-quantiles into bands ``[lo, hi)`` (the last
    ``[lo, hi]``; edges that coincide merge), labelled so they sort by value; any other
    feature as it is."""
    numbers = pd.to_numeric(values, errors="coerce")
    if not numbers.notna().all() or numbers.nunique() <= MAX_FEATURE_GROUPS:
        return values
    x = numbers.to_numpy(dtype=np.float64)
    edges = np.unique(np.quantile(x, np.linspace(0.0, 1.0, n + 1)))
    index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    width = len(f"{edges[-1]:g}")
    names = [
        f"[{edges[i]:>{width}g}, {edges[i + 1]:g}" + ("]" if i == len(edges) - 2 else ")")
        for i in range(len(edges) - 1)
    ]
    return pd.Series([names[i] for i in index], index=values.index)


def _order(values) -> list[str]:
    """Distinct text values sorted numerically when all are numbers, else as text."""
    values = sorted(set(values))
    try:
        return sorted(values, key=float)
    except ValueError:
        return values


def _as_text(values: pd.Series) -> pd.Series:
    """Group values as text: floats without a trailing '.0'; NaN and '' stay ''."""
    if pd.api.types.is_float_dtype(values):
        return values.map(lambda x: "" if pd.isna(x) else f"{x:g}")
    return values.astype(str)


def from_table(users, user_ids, values, by: str, label: str) -> Groups:
    """Groups of the evaluated ``users`` from a table of (user id, group value); a user
    absent or with an empty value has no group; a group value with no evaluated user is
    dropped (reported in ``Groups.dropped``). A user id given twice with different values:
    InputError naming ``label``."""
    table = pd.DataFrame({"user_id": np.asarray(user_ids).astype(str)})
    table["group"] = _as_text(pd.Series(np.asarray(values))).to_numpy()
    table = table[table["group"] != ""].drop_duplicates()
    twice = table["user_id"].duplicated(keep=False)
    if twice.any():
        user = table.loc[twice, "user_id"].iloc[0]
        found = sorted(table.loc[table["user_id"] == user, "group"])
        raise InputError(f"{label}: user {user!r} is in more than one group {found}; keep one")
    group_of = table.set_index("user_id")["group"]
    mine = pd.Series(np.asarray(users).astype(str)).map(group_of)
    present = _order(mine.dropna())
    dropped = tuple(g for g in _order(table["group"]) if g not in set(present))
    codes = {g: i for i, g in enumerate(present)}
    labels = mine.map(codes).fillna(-1).to_numpy(dtype=np.int64)
    return Groups(by=by, names=tuple(present), labels=labels, dropped=dropped)


def active_count(m: int, share: float) -> int:
    """The size of the active group of m users: ceil(share m) (a product within
    ``CEIL_SLACK`` relative of an integer counts as that integer), at least 1 and at most
    m - 1 (both groups non-empty) when m >= 2."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"the activity share must lie in (0, 1), got {share}")
    product = share * m
    count = math.ceil(product - CEIL_SLACK * max(1.0, product))
    return int(min(max(count, 1), max(m - 1, 1)))


def by_activity(train_counts, users, share: float = ACTIVITY_SHARE) -> Groups:
    """``active``: the ``active_count(m, share)`` evaluated users with the most train
    interactions (``train_counts``, (m,), in the order of ``users``), ties broken by user
    id (ascending as text: the smaller id is the more active; in ``Inputs`` that is the
    canonical order, and any other order of the same users gives the same groups);
    ``inactive``: the rest."""
    counts = np.asarray(train_counts)
    m = len(counts)
    if m != len(users):
        raise ValueError(f"train_counts has {m} entries for {len(users)} users")
    labels = np.ones(m, dtype=np.int64)
    if m:
        ids = np.unique(np.asarray(users).astype(str), return_inverse=True)[1]
        order = np.lexsort((ids, -counts.astype(np.float64)))
        labels[order[: active_count(m, share)]] = 0
    names = (ACTIVE, INACTIVE) if m > 1 else ((ACTIVE,) if m else ())
    labels[labels >= len(names)] = -1
    return Groups(by=f"activity:{share:g}", names=names, labels=labels)


def specs_of(groups, features) -> list[str]:
    """The groupings a config asks for: its ``measures.groups`` as given, or (null) activity
    at :data:`ACTIVITY_SHARE` and each user feature of ``who.features``."""
    if groups is not None:
        return list(groups)
    return [f"activity:{ACTIVITY_SHARE}"] + [f"feature:{n}" for n in features or []]


def parse_spec(spec: str) -> tuple[str, str]:
    """``activity[:P]``, ``feature:NAME`` or a user-groups file path -> (kind, argument)."""
    kind, _, argument = str(spec).partition(":")
    if kind == "activity":
        return kind, argument or str(ACTIVITY_SHARE)
    if kind == "feature":
        if not argument:
            raise ValueError(f"--user-groups {spec!r}: name the feature, e.g. feature:gender")
        return kind, argument
    return "file", str(spec)


def groups_of(inputs, spec: str, user_features: pd.DataFrame | None = None, label="") -> Groups:
    """The :class:`Groups` of ``inputs.users`` by ``spec`` (:func:`parse_spec`);
    ``feature:NAME`` reads the column NAME of ``user_features`` (:func:`read_user_features`,
    named ``label`` in errors)."""
    kind, argument = parse_spec(spec)
    if kind == "activity":
        try:
            share = float(argument)
        except ValueError:
            raise ValueError(f"--user-groups {spec!r}: P must be a number in (0, 1)") from None
        counts = np.diff(inputs.train_of_evaluated().indptr)
        return by_activity(counts, inputs.users, share)
    if kind == "feature":
        if user_features is None:
            raise ValueError(f"--user-groups {spec!r} needs the .user file (--user-features)")
        if argument not in user_features.columns or argument == "user_id":
            raise InputError(
                f"{label or 'user features'}: no feature {argument!r} "
                f"(has {[c for c in user_features.columns if c != 'user_id']})"
            )
        frame = user_features
        return from_table(inputs.users, frame["user_id"], bands(frame[argument]), spec, label)
    table = read_user_groups(argument)
    return from_table(inputs.users, table["user_id"], table["group"], f"file:{argument}", argument)


# --- measures ---------------------------------------------------------------------------


def group_means(scores, groups: Groups, weights=None) -> np.ndarray:
    """Mean ``scores`` ((m,)) of each group: (G,); with ``weights`` ((B, m) multiplicities)
    the weighted means of every resample, (B, G); NaN for a group without weight."""
    indicator = groups.indicator()
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != groups.labels.shape:
        raise ValueError(f"scores has shape {scores.shape}, groups {groups.labels.shape} users")
    if weights is None:
        w = np.ones((1, len(scores)))
    else:
        w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    mass = (indicator.T @ w.T).T
    sums = (indicator.T @ (w * scores).T).T
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(mass > 0, sums / mass, np.nan)
    return means[0] if weights is None else means


def mean_absolute_difference(means) -> np.ndarray | float:
    """Mean over unordered pairs of the finite entries of each row of ``means`` of
    |a - b|; NaN with fewer than 2. In closed form on the sorted row: sum over i < j of
    x_(j) - x_(i) = sum_i (2 i - n - 1) x_(i) (i = 1..n)."""
    means = np.asarray(means, dtype=np.float64)
    rows = np.atleast_2d(means)
    ordered = np.sort(rows, axis=1)  # NaN last
    n = np.isfinite(ordered).sum(axis=1)
    position = np.arange(1, rows.shape[1] + 1)[None, :]
    coefficient = np.where(position <= n[:, None], 2 * position - n[:, None] - 1, 0)
    total = (coefficient * np.where(np.isfinite(ordered), ordered, 0.0)).sum(axis=1)
    pairs = n * (n - 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(pairs > 0, total / pairs, np.nan)
    return float(out[0]) if means.ndim == 1 else out


#: The statistics of the groups' mean scores, by the name a group declaration gives
#: (``statistic="MAD"``): each maps the means of every group, (G,) or (B, G) with NaN for a
#: group without weight, to the value (a float, or (B,)); NaN where it is undefined.
GROUP_STATISTICS: dict[str, Callable] = {"MAD": mean_absolute_difference}


def of(measure: Measure) -> Callable:
    """The statistic of the groups' means that the group declaration ``measure`` names."""
    return formulas_of(
        measure, "group", "statistic", GROUP_STATISTICS, "userfair.formulas.groups.GROUP_STATISTICS"
    )


def group_scores(route: str | None = None) -> tuple[str, ...]:
    """The per-user scores the group measures of ``route`` read, in declaration order:
    the group means a record and a bootstrap frame keep."""
    return tuple(dict.fromkeys(m.effectiveness for m in group_measures(route)))


def measures(per_user, groups: Groups, route: str | None = None) -> dict[str, float]:
    """Every group measure ``route`` serves (:func:`userfair.measures.group_measures`):
    its statistic (:func:`of`) of the groups' means of its score (``per_user[S]``: (m,))."""
    means = {s: group_means(per_user[s], groups) for s in group_scores(route)}
    return {m.name: float(of(m)(means[m.effectiveness])) for m in group_measures(route)}


def group_rows(per_user, groups: Groups, scores=None) -> list[dict]:
    """One record per group: ``group``, ``users`` and the mean of every score (default:
    :func:`group_scores`)."""
    scores = group_scores() if scores is None else scores
    means = {s: group_means(per_user[s], groups) for s in scores}
    sizes = groups.sizes
    return [
        {"group": name, "users": int(sizes[g]), **{s: float(means[s][g]) for s in scores}}
        for g, name in enumerate(groups.names)
    ]


def record(per_user, groups: Groups, scores=None) -> dict:
    """The ``groups`` record of a result: how it was grouped, the groups, the dropped
    groups and the users without a group."""
    return {
        "by": groups.by,
        "rows": group_rows(per_user, groups, scores),
        "dropped": list(groups.dropped),
        "unassigned": groups.unassigned,
    }


def mean_column(score: str, group: str) -> str:
    """The bootstrap column of the mean ``score`` of ``group``: ``P[active]``."""
    return f"{score}[{group}]"


def bootstrap(per_user, groups: Groups, weights) -> pd.DataFrame:
    """Every group measure and group mean of every resample (rows of ``weights``, (B, m)
    multiplicities): the weighted group means sum_{u in g} w_u s_u / sum_{u in g} w_u
    (NaN for a group not drawn) and each group measure's statistic of them. Columns: the
    measures, then :func:`mean_column` of every score and group; index ``resample``."""
    weights = np.atleast_2d(np.asarray(weights))
    out: dict[str, np.ndarray] = {}
    means = {s: group_means(per_user[s], groups, weights) for s in group_scores("bootstrap")}
    for measure in group_measures("bootstrap"):
        out[measure.name] = of(measure)(means[measure.effectiveness])
    for s, by_group in means.items():
        for g, name in enumerate(groups.names):
            out[mean_column(s, name)] = by_group[:, g]
    frame = pd.DataFrame(out)
    frame.index = pd.RangeIndex(weights.shape[0], name="resample")
    return frame


def point(per_user, groups: Groups) -> dict[str, float]:
    """The point estimates of :func:`bootstrap`'s columns (the full sample)."""
    out = measures(per_user, groups, "bootstrap")
    for s in group_scores("bootstrap"):
        for name, value in zip(groups.names, group_means(per_user[s], groups)):
            out[mean_column(s, name)] = float(value)
    return out


def record_means(record: dict) -> dict[str, float]:
    """The group means of a :func:`record`, keyed as :func:`bootstrap`'s columns."""
    return {
        mean_column(score, row["group"]): float(value)
        for row in record["rows"]
        for score, value in row.items()
        if score not in ("group", "users")
    }


def user_labels(groups: Groups) -> np.ndarray:
    """(m,) object: each evaluated user's group name, '' for a user without a group."""
    names = np.asarray([*groups.names, ""], dtype=object)
    return names[np.where(groups.labels >= 0, groups.labels, len(groups.names))]


def describe(groups: Groups) -> str:
    """One line: the grouping, its sizes, the dropped groups and the users without one."""
    sizes = ", ".join(f"{n}={s}" for n, s in zip(groups.names, groups.sizes))
    text = f"groups by {groups.by}: {sizes or 'none'}"
    if groups.dropped:
        text += f"; dropped (no evaluated user): {', '.join(groups.dropped)}"
    if groups.unassigned:
        text += f"; {groups.unassigned} evaluated users without a group"
    return text
