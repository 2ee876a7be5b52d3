"""Graded relevance (docs/method.md#graded-relevance): gNDCG per user against a loop from
its formula and hand-worked cases; the grades read by ``load_inputs(grade=...)``."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.files.inputs import load_inputs
from userfair.files.io import InputError
from userfair.formulas import effectiveness, graded
from userfair.measures import NAMES, OPT_IN, OPT_IN_GROUPS, higher_is_better, optional_names

import reference as ref
from measures_data import graded_split, python_views, random_split


def test_hand_worked_user():
    # k = 3, list [0, 1, 2]; test grades {1: 3, 2: 1, 4: 5}: DCG = 3/log2(3) + 1/log2(4),
    # ideal [5, 3, 1]: 5 + 3/log2(3) + 1/2.
    grades = sp.csr_matrix(np.array([[0, 3, 1, 0, 5]], dtype=float))
    got = graded.gndcg(np.array([[0, 1, 2]]), grades, k=3)
    assert got[0] == pytest.approx((3 / math.log2(3) + 0.5) / (5 + 3 / math.log2(3) + 0.5))


def test_zero_ideal_scores_zero_and_cut_at_k():
    # user 0: one stored grade 0 (an interaction without gain)
    grades = sp.csr_matrix(([0.0, 4.0, 2.0], ([0, 1, 1], [1, 0, 3])), shape=(2, 4))
    got = graded.gndcg(np.array([[1, 0], [3, 1]]), grades, k=1)
    assert got.tolist() == [0.0, 0.5]  # ideal of user 1 cut at k=1: 4; gain 2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 5, 10])
def test_matches_loop(seed, k):
    train, test, topk, _ = graded_split(seed)
    inputs = load_inputs(train, test, topk, k=k, grade="rating")
    lists, _, _, _ = python_views(inputs, train, test, topk, k=k)
    by_user = [
        dict(zip(group.item_id, group.rating)) for _, group in test.groupby("user_id", sort=True)
    ]
    np.testing.assert_allclose(
        graded.gndcg(inputs.topk, inputs.grades, k), ref.gndcg(lists, by_user, k), rtol=1e-12
    )


@pytest.mark.parametrize("seed", range(3))
def test_all_grades_one_is_ndcg_exactly(seed):
    train, test, topk, _ = random_split(seed)
    inputs = load_inputs(train.assign(rating=1.0), test.assign(rating=1.0), topk, grade="rating")
    ndcg = effectiveness.per_user(inputs.topk, inputs.relevant)["NDCG"]
    assert np.array_equal(graded.gndcg(inputs.topk, inputs.grades), ndcg)


def test_grades_keep_the_binary_pattern():
    train, test, topk, _ = graded_split(0)
    binary = load_inputs(train, test, topk)
    inputs = load_inputs(train, test, topk, grade="rating")
    for a, b in ((inputs.train_grades, binary.train), (inputs.grades, binary.relevant)):
        assert (a.indptr == b.indptr).all() and (a.indices == b.indices).all()
    assert (inputs.train != binary.train).nnz == 0
    row = inputs.graded_train_of_evaluated()
    assert row.shape == inputs.train_of_evaluated().shape
    with pytest.raises(ValueError, match="grade=FIELD"):
        binary.graded_train_of_evaluated()


def test_grade_errors_are_one_line(tmp_path):
    train, test, topk, _ = graded_split(1)
    with pytest.raises(InputError, match="no field 'score'.*--grade"):
        load_inputs(train, test, topk, grade="score")
    broken = test.astype({"rating": object})
    broken.loc[broken.index[3], "rating"] = "high"
    with pytest.raises(InputError, match=r"field 'rating' holds no grade >= 0 \('high'\)"):
        load_inputs(train, broken, topk, grade="rating")
    path = tmp_path / "test.inter"
    lines = ["user_id:token\titem_id:token\trating:float"]
    lines += [f"{u}\t{i}\t{g:g}" for u, i, g in test.itertuples(index=False)]
    lines[2] = lines[2].rsplit("\t", 1)[0] + "\t"  # a missing grade
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"{path}: line 3: field 'rating' is '', not a number"):
        load_inputs(train, path, topk, grade="rating")


def test_opt_in_names():
    assert not set(OPT_IN) & set(NAMES)
    assert sum(OPT_IN_GROUPS.values(), ()) == OPT_IN and len(OPT_IN) == 3 + 11
    assert optional_names(False) == ()
    assert optional_names(True)[:3] == ("gNDCG", "SD-gNDCG", "Gini-gNDCG")
    assert "PUF-gNDCG-Cos" in optional_names(True) and "PUF-P-Cos" not in optional_names(True)
    assert optional_names(False, ["Vec"]) == ("PUF-P-Vec", "PUF-NDCG-Vec")
    assert higher_is_better("gNDCG") and not higher_is_better("PUF-gNDCG-RCos")
    with pytest.raises(ValueError, match="unknown similarity"):
        optional_names(False, ["Dot"])
