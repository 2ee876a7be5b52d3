"""How each envy measure follows from the envy of the ordered pairs of users
(docs/method.md#envy), every formula a route needs of one such measure, in one place.

envy(u, v) = max(phi_u(L_v) - phi_u(L_u), 0) fills an (m, m) matrix that no route keeps.
Every route reduces each user's row as it goes, to the same three weighted totals
(:class:`Totals`): the sum of the rows, the sum of the rows' maxima and the number of
rows whose maximum exceeds epsilon; the per-user decomposition keeps them per user, with
their envied side (:class:`Rows`). An envy measure is one :class:`Reduction` of those: its
value from the totals (:meth:`Reduction.value`, a float, or one per bootstrap resample)
and its per-user shares, which sum over the users to the value (:meth:`Reduction.shares`).

The reductions travel in :data:`REDUCTIONS` under the name an envy declaration gives
(``userfair.measures.envy``, ``reduction="max"``); the routes (dense, streamed and
scattered, sampled, bootstrap, decomposition, RecBole, the experiments) take them with
:func:`of` and name no envy measure themselves. A new envy measure over these per-user
quantities is its entry here and its declaration (docs/architecture.md, "Adding a
built-in measure").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from userfair.measures.base import formulas_of

#: The per-user quantities of the envy rows every route keeps (:class:`Totals`' fields).
QUANTITIES = ("envy", "max_envy", "envious")


@dataclass(frozen=True)
class Totals:
    """The envy rows of one set of lists, reduced: each a float or a (B,) array (one per
    bootstrap resample; a user drawn w_u times counts w_u times as u and as v).

    ``envy``: the sum over ordered pairs of distinct copies of envy(u, v); ``max_envy``:
    sum_u w_u max_v envy(u, v); ``envious``: sum_u w_u [max_v envy(u, v) > epsilon];
    ``users``: N = sum_u w_u; ``ordered``: the ordered pairs of distinct copies,
    N^2 - sum_u w_u^2 (m (m - 1) unweighted)."""

    envy: float | np.ndarray
    max_envy: float | np.ndarray
    envious: float | np.ndarray
    users: float | np.ndarray
    ordered: float | np.ndarray

    @classmethod
    def of_users(cls, envy, max_envy, envious, m: int) -> Totals:
        """The totals of m users, each counted once."""
        return cls(envy, max_envy, envious, float(m), float(m * (m - 1)))


@dataclass(frozen=True)
class Rows:
    """The envy rows of one set of lists, per user (float64, (m,)): ``envies`` sum_v
    envy(u, v), ``envied`` sum_v envy(v, u), ``max_envy`` max_v envy(u, v),
    ``max_envied`` the maxima that name u as the envied user (split equally among tied
    users; nobody when the maximum is 0); ``epsilon`` PEU's threshold."""

    envies: np.ndarray
    envied: np.ndarray
    max_envy: np.ndarray
    max_envied: np.ndarray
    epsilon: float

    @property
    def m(self) -> int:
        return len(self.envies)


@dataclass(frozen=True)
class Reduction:
    """An envy measure: ``numerator`` and ``denominator`` pick its fields of
    :class:`Totals` (the value is their ratio, NaN where there are no two distinct users);
    ``shares(rows)`` its per-user columns: the user's share under ``""`` and each signed
    part of ``parts`` under ``":part"``, each summing over the users to the value."""

    numerator: str
    denominator: str
    shares_of: Callable[[Rows], dict[str, np.ndarray]]
    parts: tuple[str, ...] = ()

    def value(self, totals: Totals):
        """The measure from ``totals``: a float, or one per resample for arrays."""
        top, bottom = getattr(totals, self.numerator), getattr(totals, self.denominator)
        if np.ndim(top) == 0 and np.ndim(totals.ordered) == 0:
            return float(top / bottom) if totals.ordered > 0 else float("nan")
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(totals.ordered > 0, top / bottom, np.nan)

    def shares(self, rows: Rows) -> dict[str, np.ndarray]:
        """The per-user columns (NaN for fewer than 2 users)."""
        if rows.m < 2:
            return {suffix: np.full(rows.m, np.nan) for suffix in ("",) + self.suffixes}
        return self.shares_of(rows)

    @property
    def suffixes(self) -> tuple[str, ...]:
        return tuple(f":{part}" for part in self.parts)


def _mean_shares(rows: Rows) -> dict[str, np.ndarray]:
    """ME:envies_u = sum_v envy(u, v) / (m (m-1)), ME:envied_v = sum_u envy(u, v) / (m (m-1)),
    ME_u their mean: each pair's envy is carried half by the envier, half by the envied."""
    ordered = rows.m * (rows.m - 1)
    return {
        "": (rows.envies + rows.envied) / (2.0 * ordered),
        ":envies": rows.envies / ordered,
        ":envied": rows.envied / ordered,
    }


def _max_shares(rows: Rows) -> dict[str, np.ndarray]:
    """MME:envies_u = max_v envy(u, v) / m, MME:envied gives that maximum to the envied
    user attaining it; MME_u their mean."""
    m = rows.m
    return {
        "": (rows.max_envy + rows.max_envied) / (2.0 * m),
        ":envies": rows.max_envy / m,
        ":envied": rows.max_envied / m,
    }


def _over_shares(rows: Rows) -> dict[str, np.ndarray]:
    """PEU_u = [max_v envy(u, v) > epsilon] / m: the envier carries it."""
    return {"": (rows.max_envy > rows.epsilon) / rows.m}


#: The reductions of every built-in envy measure, by the name its declaration gives:
#: ``mean`` the mean envy over ordered pairs (ME), ``max`` the mean over users of their
#: maximum envy (MME), ``over`` the share of users whose maximum exceeds epsilon (PEU).
REDUCTIONS: dict[str, Reduction] = {
    "mean": Reduction("envy", "ordered", _mean_shares, ("envies", "envied")),
    "max": Reduction("max_envy", "users", _max_shares, ("envies", "envied")),
    "over": Reduction("envious", "users", _over_shares),
}


def of(measure) -> Reduction:
    """The reduction of the declared envy measure ``measure`` (``measure.reduction``)."""
    where = "userfair.formulas.envy_reductions.REDUCTIONS"
    return formulas_of(measure, "envy", "reduction", REDUCTIONS, where)


def values(chosen, totals: Totals) -> dict:
    """``{name: value}`` of each envy measure of ``chosen`` (declarations) from ``totals``."""
    return {measure.name: of(measure).value(totals) for measure in chosen}


def shares(chosen, rows: Rows) -> dict[str, np.ndarray]:
    """Every per-user column (``NAME`` and ``NAME:part``) of each of ``chosen``."""
    return {
        measure.name + suffix: column
        for measure in chosen
        for suffix, column in of(measure).shares(rows).items()
    }
