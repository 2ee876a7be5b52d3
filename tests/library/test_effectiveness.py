"""Effectiveness per user (docs/method.md#effectiveness): hand-worked values and the loop
reference."""

import math

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
