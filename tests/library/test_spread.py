"""userfair.formulas.spread: every built-in statistic of the per-user scores (SD, Gini over
P, NDCG and gNDCG), read from the registry, against direct loops written from its formula
on random inputs: its value in every resample equals its value of the expanded vector, its
per-user shares and signed parts sum to its value. A statistic declared later is checked
the same way without a line here. Then a statistic added by one declaration reaches every
route that serves statistics, with no route code touched."""

from __future__ import annotations

import json
import math
import subprocess
import sys

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
    with pytest.raises(ValueError, match=r"X-P: no formulas 'X' in .*STATISTICS"):
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


# A statistic added as a built-in, the way docs/architecture.md says: its formulas under
# their name in userfair.formulas.spread.STATISTICS and one declaration appended to
# userfair.measures.spread.MEASURES (here by an import hook, which runs the family module
# and then appends, before the registry reads it). Nothing else.
ONE_DECLARATION = r"""
import importlib.abc, importlib.machinery, json, sys
import numpy as np

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "userfair.measures.spread":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            from userfair.formulas.spread import STATISTICS, Statistic, sd, sd_share, weighted_sd
            STATISTICS["CV"] = Statistic(
                lambda x: sd(x) / np.mean(x),
                lambda x, d: weighted_sd(x, d) / (d.w @ x / d.total),
                lambda x: {"": sd_share(x) / np.mean(x)},
            )
            module.MEASURES += (module.declare(
                "CV-P", "statistic", "lower", "spread", "Fair (existing)", effectiveness="P",
                default=True, bounds=(0.0, float("inf")), statistic="CV",
                routes=module._EXACT - {"experiments"}, text="coefficient of variation of P"),)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Hook())
from userfair import measures
from userfair.bootstrap import uncertainty
from userfair.decomposition.decompose import decompose
from userfair.engine.warmup import tiny_inputs
from userfair.evaluate import evaluate

inputs = tiny_inputs(m=25, n=30, k=3)
out = {"names": list(measures.NAMES)}
for route in ("dense", "stream"):
    out[route] = evaluate(inputs, k=3, route=route)["CV-P"]
weights = uncertainty.resample_weights(25, 4, seed=1)
out["bootstrap"] = uncertainty.bootstrap(inputs, weights, k=3)["CV-P"].tolist()
out["weights"] = weights.tolist()
frame = decompose(inputs, k=3)
out["decompose"] = float(frame["CV-P"].sum())
out["P"] = frame["P"].tolist()
print(json.dumps(out))
"""


def test_a_statistic_added_by_one_declaration_reaches_every_route():
    proc = subprocess.run(
        [sys.executable, "-c", ONE_DECLARATION], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # one of the measures of every measures file now, after the other spread measures
    names = out["names"]
    assert len(names) == len(measures.NAMES) + 1
    assert names[names.index("Gini-NDCG") + 1] == "CV-P"
    p = np.array(out["P"])
    expected = _sd_loop(list(p)) / p.mean()
    for route in ("dense", "stream", "decompose"):
        assert out[route] == pytest.approx(expected, rel=1e-12), route
    for row, value in zip(out["weights"], out["bootstrap"]):
        drawn = list(np.repeat(p, row))
        assert value == pytest.approx(_sd_loop(drawn) / np.mean(drawn), rel=1e-12)
