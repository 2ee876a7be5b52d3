"""userfair.formulas.spread: every built-in statistic of the per-user scores (SD, Gini over
P, NDCG and gNDCG), read from the registry, against direct loops written from its formula
on random inputs: its value in every resample equals its value of the expanded vector, its
per-user shares and signed parts sum to its value. A statistic declared later is checked
the same way without a line here (and tests/library/test_measure_contract.py adds one by a
single declaration and follows it through every route)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from userfair import measures
from userfair.formulas import spread
from userfair.formulas.spread import Draws

STATISTICS = measures.statistics(measures.PUF_SCORES)


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_the_registry_declares_the_formulas_of_every_statistic():
    names = [m.name for m in STATISTICS]
    assert names == ["SD-P", "SD-NDCG", "Gini-P", "Gini-NDCG", "SD-gNDCG", "Gini-gNDCG"]
    for measure in STATISTICS:
        assert isinstance(spread.of(measure), spread.Statistic), measure.name
    assert set(spread.STATISTICS) == {m.statistic for m in STATISTICS}  # none unused
    with pytest.raises(ValueError, match="declares its formulas"):
        measures.declare("X-P", "statistic", "lower", "spread", "Fair (existing)",
                         effectiveness="P", text="x")  # fmt: skip
    unknown = measures.declare("X-P", "statistic", "lower", "spread", "Fair (existing)",
                               effectiveness="P", text="x", statistic="X")  # fmt: skip
    with pytest.raises(ValueError, match=r"X-P: no statistic 'X' in .*STATISTICS"):
        spread.of(unknown)


def _gini_loop(x):
    """Gini as its pair sum: sum over ordered pairs |x_u - x_v| / (2 m^2 mean)."""
    m = len(x)
    if m == 0 or sum(x) == 0:
        return math.nan
    total = sum(abs(a - b) for a in x for b in x)
    return total / (2 * m * sum(x))


def _sd_loop(x):
    m = len(x)
    if m == 0:
        return math.nan
    mean = sum(x) / m
    return math.sqrt(sum((a - mean) ** 2 for a in x) / m)


LOOPS = {"SD": _sd_loop, "Gini": _gini_loop}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("measure", STATISTICS, ids=lambda m: m.name)
def test_every_statistic_equals_its_loop_in_every_resample(measure, seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    x = rng.random(m).round(int(rng.integers(1, 4)))  # ties, and zeros
    if seed == 3:
        x[:] = 0.0  # Gini undefined
    counts = rng.multinomial(m, np.ones(m) / m, size=5)
    counts[0] = 0
    counts[0, 0] = m  # one user drawn m times
    loop = LOOPS[measure.name.split("-")[0]]
    assert _close(spread.of(measure).value(x), loop(list(x)))
    got = spread.of(measure).weighted(x, Draws.of(counts))
    for row, value in zip(counts, got):
        assert _close(float(value), loop(list(np.repeat(x, row)))), (measure.name, row)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("measure", STATISTICS, ids=lambda m: m.name)
def test_every_statistics_shares_sum_to_its_value(measure, seed):
    x = np.random.default_rng(seed).random(17).round(1)
    value = spread.of(measure).value(x)
    columns = spread.of(measure).shares(x)
    assert list(columns) == [""] + [f":{part}" for part in spread.of(measure).parts]
    for suffix, column in columns.items():
        assert column.shape == x.shape
        assert float(column.sum()) == pytest.approx(value, rel=1e-12), (measure.name, suffix)


def test_hand_worked_resamples():
    # x = (0, 1) drawn (2, 1) times: the expanded vector is (0, 0, 1)
    draws = Draws.of([[2, 1], [0, 2]])
    x = np.array([0.0, 1.0])
    np.testing.assert_allclose(spread.weighted_sd(x, draws), [math.sqrt(2) / 3, 0.0])
    gini = spread.weighted_gini(x, draws)
    assert gini[0] == pytest.approx(2 / 3) and gini[1] == 0.0
    # every draw of the zero user only: Gini is undefined (0 / 0), SD is 0
    zero = Draws.of([[2, 0]])
    assert math.isnan(spread.weighted_gini(x, zero)[0])
    assert spread.weighted_sd(x, zero)[0] == 0.0
