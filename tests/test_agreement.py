"""Kendall tau-b agreement between model orderings (Fig. 1)."""

import numpy as np
import pandas as pd
import pytest

from userfair.formulas import agreement
from userfair.measures import NAMES as MEASURES
from userfair.workflow.tables import scores_frame


def test_identical_orderings_give_one():
    assert agreement.kendall_tau_b([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)


def test_reversed_orderings_give_minus_one():
    assert agreement.kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_tau_b_with_ties_matches_definition():
    # concordant - discordant over sqrt((n0 - ties_a)(n0 - ties_b)): a has one tied pair.
    a, b = [1, 1, 2, 3], [1, 2, 3, 4]
    assert agreement.kendall_tau_b(a, b) == pytest.approx(5 / np.sqrt(5 * 6))


def test_constant_or_too_few_scores_give_nan():
    assert np.isnan(agreement.kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert np.isnan(agreement.kendall_tau_b([1, np.nan, np.nan], [1, 2, 3]))


def test_nan_models_are_left_out():
    assert agreement.kendall_tau_b([1, np.nan, 2, 3], [1, 5, 2, 3]) == pytest.approx(1.0)


def test_direction_flip_for_lower_is_better():
    # A model with the highest P and the lowest SD-P is best under both: orderings agree.
    scores = pd.DataFrame(
        {
            "P": [0.1, 0.2, 0.3],
            "SD-P": [0.3, 0.2, 0.1],
            "NDCG": [0.3, 0.2, 0.1],
            "Gini-P": [0.1, 0.2, 0.3],
        },
        index=["A", "B", "C"],
    )
    matrix = agreement.agreement_matrix(scores, ["P", "SD-P", "NDCG", "Gini-P"])
    assert matrix.loc["P", "SD-P"] == pytest.approx(1.0)
    assert matrix.loc["P", "NDCG"] == pytest.approx(-1.0)
    assert matrix.loc["P", "Gini-P"] == pytest.approx(-1.0)
    assert matrix.loc["SD-P", "Gini-P"] == pytest.approx(-1.0)
    np.testing.assert_allclose(np.diag(matrix), 1.0)
    np.testing.assert_allclose(matrix, matrix.T)


def test_unknown_measure_is_an_error():
    with pytest.raises(ValueError, match="lack the measures"):
        agreement.agreement_matrix(pd.DataFrame({"P": [1, 2]}), ["P", "NDCG"])


def test_agreement_long_per_dataset_and_equivalence_flag():
    rng = np.random.default_rng(0)
    records = {}
    for dataset in ("d1", "d2"):
        for model in ("A", "B", "C", "D"):
            records[(dataset, model)] = {m: float(rng.random()) for m in MEASURES}
    long = agreement.agreement_long(scores_frame(records))
    assert set(long["dataset"]) == {"d1", "d2"}
    assert len(long) == 2 * len(MEASURES) ** 2
    diagonal = long[long["measure_a"] == long["measure_b"]]
    assert diagonal["tau"].eq(1.0).all() and diagonal["equivalent"].all()
    assert (long["equivalent"] == (long["tau"].abs() >= 0.9)).all()
