"""userfair.formulas.envy_reductions: each envy measure from the envy rows' totals and its
per-user shares, on a hand-worked matrix, and its declaration's reduction."""

from __future__ import annotations

import numpy as np
import pytest

from userfair import measures
from userfair.formulas import envy_reductions as er

# envy(u, v) of three users, by hand: row u, column v.
ENVY = np.array([[0.0, 0.2, 0.0], [0.0, 0.0, 0.0], [0.1, 0.3, 0.0]])
EPSILON = 0.05


def _rows():
    # u0 and u2 attain their maxima at v1: MME's envied share goes to v1 alone
    return er.Rows(ENVY.sum(axis=1), ENVY.sum(axis=0), ENVY.max(axis=1),
                   np.array([0.0, 0.5, 0.0]), EPSILON)  # fmt: skip


def _totals():
    rows = _rows()
    return er.Totals.of_users(rows.envies.sum(), rows.max_envy.sum(),
                              int((rows.max_envy > EPSILON).sum()), 3)  # fmt: skip


def test_the_built_ins_from_the_hand_worked_totals():
    values = er.values(measures.envy_measures(), _totals())
    # ME: 0.6 over 6 ordered pairs; MME: (0.2 + 0 + 0.3) / 3; PEU: 2 of 3 users above 0.05
    assert values == pytest.approx({"ME": 0.1, "MME": 0.5 / 3, "PEU": 2 / 3}, rel=1e-15)


def test_the_shares_sum_to_the_value_and_split_as_declared():
    shares = er.shares(measures.envy_measures(), _rows())
    np.testing.assert_allclose(shares["ME"], [0.3 / 12, 0.5 / 12, 0.4 / 12])
    np.testing.assert_allclose(shares["ME:envies"], [0.2 / 6, 0.0, 0.4 / 6])
    np.testing.assert_allclose(shares["ME:envied"], [0.1 / 6, 0.5 / 6, 0.0])
    np.testing.assert_allclose(shares["MME"], [0.2 / 6, 0.5 / 6, 0.3 / 6])
    np.testing.assert_allclose(shares["PEU"], [1 / 3, 0.0, 1 / 3])
    values = er.values(measures.envy_measures(), _totals())
    for name, value in values.items():
        assert shares[name].sum() == pytest.approx(value, rel=1e-12), name
        for suffix in er.of(measures.get(name)).suffixes:
            assert shares[name + suffix].sum() == pytest.approx(value, rel=1e-12), name


def test_resamples_without_two_distinct_users_are_nan():
    # three resamples: one user drawn 3 times (no pair of distinct users), then two valid
    totals = er.Totals(envy=np.array([0.0, 0.6, 1.2]), max_envy=np.array([0.0, 0.5, 1.0]),
                       envious=np.array([0.0, 2.0, 4.0]), users=np.array([3.0, 3.0, 6.0]),
                       ordered=np.array([0.0, 6.0, 24.0]))  # fmt: skip
    value = er.REDUCTIONS["mean"].value(totals)
    assert np.isnan(value[0])
    np.testing.assert_allclose(value[1:], [0.1, 0.05])
    np.testing.assert_allclose(er.REDUCTIONS["over"].value(totals)[1:], [2 / 3, 2 / 3])
    assert np.isnan(er.REDUCTIONS["max"].value(er.Totals.of_users(0.0, 0.0, 0, 1)))
    one = er.Rows(*(np.zeros(1),) * 4, EPSILON)
    assert all(np.isnan(column).all() for column in er.REDUCTIONS["max"].shares(one).values())


def test_every_envy_declaration_names_a_known_reduction():
    for measure in measures.envy_measures():
        assert er.of(measure) is er.REDUCTIONS[measure.reduction]
    with pytest.raises(ValueError, match="no reduction"):
        er.of(measures.get("SD-P"))
