"""Effectiveness per user (docs/method.md#effectiveness): hand-worked values and the loop
reference."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.files.inputs import load_inputs
from userfair.formulas import effectiveness
from userfair.measures import EFF

import reference as ref
from measures_data import python_views, random_split


def test_hand_worked_user():
    # k = 4, list [0, 1, 2, 3], relevant {1, 3, 7}: hits at ranks 2 and 4.
    relevant = sp.csr_matrix(np.array([[0, 1, 0, 1, 0, 0, 0, 1]], dtype=float))
    scores = effectiveness.per_user(np.array([[0, 1, 2, 3]]), relevant, k=4)
    assert scores["HR"][0] == 1.0
    assert scores["MRR"][0] == 0.5
    assert scores["P"][0] == 0.5
    assert scores["R"][0] == pytest.approx(2 / 3)
    assert scores["MAP"][0] == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert scores["NDCG"][0] == pytest.approx(dcg / idcg)


def test_fewer_relevant_than_k_and_no_hit():
    # user 0: one relevant item at rank 1 -> perfect MAP and NDCG; user 1: no hit.
    relevant = sp.csr_matrix(np.array([[1, 0, 0, 0], [0, 0, 0, 1]], dtype=float))
    scores = effectiveness.per_user(np.array([[0, 1], [0, 1]]), relevant, k=2)
    assert scores["MAP"].tolist() == [1.0, 0.0]
    assert scores["NDCG"].tolist() == [1.0, 0.0]
    assert scores["MRR"].tolist() == [1.0, 0.0]
    assert scores["P"].tolist() == [0.5, 0.0]


def test_only_first_k_columns_count():
    relevant = sp.csr_matrix(np.array([[0, 0, 1]], dtype=float))
    scores = effectiveness.per_user(np.array([[0, 1, 2]]), relevant, k=2)
    assert scores["HR"][0] == 0.0


def test_bad_lists_are_rejected():
    relevant = sp.csr_matrix((2, 5))
    with pytest.raises(ValueError, match="fewer than k"):
        effectiveness.per_user(np.zeros((2, 3), dtype=int), relevant, k=4)
    with pytest.raises(ValueError, match="item indices"):
        effectiveness.per_user(np.full((2, 4), 5), relevant, k=4)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 5, 10])
def test_matches_loop_reference(seed, k):
    train, test, topk, _ = random_split(seed, k=10)
    inputs = load_inputs(train, test, topk, k=k)
    lists, relevant, _, _ = python_views(inputs, train, test, topk, k=k)
    expected = ref.effectiveness(lists, relevant, k=k)
    got = effectiveness.per_user(inputs.topk, inputs.relevant, k=k)
    for name in EFF:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-9, atol=1e-12)


def test_every_declared_effectiveness_has_its_formula():
    # the registry's binary-relevance effectiveness and the formulas are the same names
    assert tuple(effectiveness.PER_USER) == EFF


# An effectiveness measure added as a built-in, the way docs/architecture.md says: its
# per-user formula under its name in PER_USER and one declaration appended to
# userfair.measures.effectiveness.MEASURES (by an import hook, as in test_spread.py).
ONE_DECLARATION = r"""
import importlib.abc, importlib.machinery, json, sys
import numpy as np

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "userfair.measures.effectiveness":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.MEASURES += (module._eff("F1", "harmonic mean of P and R at k"),)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Hook())
from userfair.formulas import effectiveness
p, r = effectiveness.PER_USER["P"], effectiveness.PER_USER["R"]
effectiveness.PER_USER["F1"] = lambda h: np.where(
    p(h) + r(h) > 0, 2 * p(h) * r(h) / (p(h) + r(h)), 0.0)
from userfair import measures
from userfair.bootstrap import uncertainty
from userfair.engine.warmup import tiny_inputs
from userfair.evaluate import evaluate

inputs = tiny_inputs(m=25, n=30, k=3)
out = {"names": list(measures.NAMES)}
for route in ("dense", "stream"):
    out[route] = evaluate(inputs, k=3, route=route)["F1"]
weights = uncertainty.resample_weights(25, 4, seed=1)
out["bootstrap"] = uncertainty.bootstrap(inputs, weights, k=3)["F1"].tolist()
out["weights"] = weights.tolist()
per_user = effectiveness.per_user(inputs.topk, inputs.relevant, 3)
out["P"], out["R"] = per_user["P"].tolist(), per_user["R"].tolist()
print(json.dumps(out))
"""


def test_an_effectiveness_added_by_one_declaration_reaches_every_route():
    proc = subprocess.run(
        [sys.executable, "-c", ONE_DECLARATION], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["names"][: len(EFF) + 1] == [*EFF, "F1"]
    f1 = [2 * p * r / (p + r) if p + r else 0.0 for p, r in zip(out["P"], out["R"])]
    for route in ("dense", "stream"):
        assert out[route] == pytest.approx(sum(f1) / len(f1), rel=1e-12), route
    for row, value in zip(out["weights"], out["bootstrap"]):
        assert value == pytest.approx(np.dot(row, f1) / sum(row), rel=1e-12)
