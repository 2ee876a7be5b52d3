"""UserKNN against a hand computation on a tiny matrix."""

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.engine._backend import binary_csr
from userfair.workflow.userknn import neighbour_weights, scores

# 4 users x 5 items. |H| = 3, 2, 2, 1.
X = np.array(
    [
        [1, 1, 1, 0, 0],
        [1, 1, 0, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 0, 0, 1],
    ],
    dtype=float,
)


def hand_cosine():
    """cos(u, v) = |H_u & H_v| / sqrt(|H_u| |H_v|), written out pair by pair."""
    c01 = 2 / np.sqrt(3 * 2)
    c02 = 1 / np.sqrt(3 * 2)
    c12 = 0.0
    return np.array(
        [
            [0, c01, c02, 0],
            [c01, 0, c12, 0],
            [c02, c12, 0, 0],
            [0, 0, 0, 0],
        ]
    )


def test_all_neighbours_equal_cosine():
    weights = neighbour_weights(sp.csr_matrix(X), k=3)
    np.testing.assert_allclose(weights.toarray(), hand_cosine(), rtol=0, atol=1e-12)


def test_top1_keeps_the_most_similar_neighbour_only():
    weights = neighbour_weights(sp.csr_matrix(X), k=1).toarray()
    c = hand_cosine()
    expected = np.zeros_like(c)
    expected[0, 1] = c[0, 1]  # user 0: user 1 (2/sqrt 6) beats user 2 (1/sqrt 6)
    expected[1, 0] = c[1, 0]
    expected[2, 0] = c[2, 0]  # user 2's only positive neighbour
    np.testing.assert_allclose(weights, expected, atol=1e-12)  # user 3 has none


def test_shrink_is_added_to_the_denominator():
    weights = neighbour_weights(sp.csr_matrix(X), k=3, shrink=2.0).toarray()
    assert weights[0, 1] == pytest.approx(2 / (np.sqrt(6) + 2))
    assert weights[0, 2] == pytest.approx(1 / (np.sqrt(6) + 2))


def test_scores_are_similarity_weighted_sums_of_neighbour_rows():
    weights = neighbour_weights(sp.csr_matrix(X), k=1)
    got = scores(weights, binary_csr(sp.csr_matrix(X)), np.array([0, 2, 3]))
    c = hand_cosine()
    np.testing.assert_allclose(got[0], c[0, 1] * X[1], atol=1e-12)
    np.testing.assert_allclose(got[1], c[2, 0] * X[0], atol=1e-12)
    np.testing.assert_allclose(got[2], np.zeros(5), atol=0)


def test_binarise_counts_repeated_and_weighted_interactions_once():
    rows, cols = [0, 0, 1], [2, 2, 0]
    raw = sp.coo_matrix(([1.0, 1.0, 4.0], (rows, cols)), shape=(2, 3))
    np.testing.assert_array_equal(binary_csr(raw).toarray(), [[0, 0, 1], [1, 0, 0]])


def test_blocks_give_the_same_weights(monkeypatch):
    rng = np.random.default_rng(0)
    x = sp.csr_matrix((rng.random((30, 12)) < 0.3).astype(float))
    whole = neighbour_weights(x, k=4, shrink=1.0).toarray()
    monkeypatch.setattr("userfair.workflow.userknn.BLOCK_CELLS", 30 * 7)  # blocks of 7 users
    np.testing.assert_allclose(neighbour_weights(x, k=4, shrink=1.0).toarray(), whole)


@pytest.mark.parametrize("k, shrink", [(0, 0.0), (5, -1.0)])
def test_bad_parameters_are_rejected(k, shrink):
    with pytest.raises(ValueError, match="UserKNN"):
        neighbour_weights(sp.csr_matrix(X), k=k, shrink=shrink)


def test_model_predict_and_full_sort_agree_with_the_hand_scores():
    """The RecBole model's pointwise and full-sort scores are the hand-computed ones."""
    import torch

    from userfair.workflow.userknn import UserKNN

    model = UserKNN.__new__(UserKNN)
    torch.nn.Module.__init__(model)
    model.USER_ID, model.ITEM_ID, model.device = "user_id", "item_id", "cpu"
    model.interactions = binary_csr(sp.csr_matrix(X))
    model.weights = neighbour_weights(model.interactions, k=1)
    c = hand_cosine()
    pairs = {"user_id": torch.tensor([0, 0, 2, 3]), "item_id": torch.tensor([0, 3, 1, 4])}
    np.testing.assert_allclose(
        model.predict(pairs).numpy(), [c[0, 1] * 1, 0.0, c[2, 0] * 1, 0.0], rtol=1e-6
    )
    full = model.full_sort_predict({"user_id": torch.tensor([1, 2])}).numpy().reshape(2, 5)
    np.testing.assert_allclose(full, [c[1, 0] * X[0], c[2, 0] * X[0]], rtol=1e-6)
