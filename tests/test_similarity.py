"""User similarities and the UF similarity: hand-worked, loop reference, blocking, raw
and normalised forms, files."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.files.inputs import load_inputs
from userfair.files.io import InputError
from userfair.similarity import pairwise

import reference as ref
from measures_data import python_views, random_split, write_item_file


def pairs_of(matrix):
    m = matrix.shape[0]
    return {(u, v): matrix[u, v] for u in range(m) for v in range(u + 1, m)}


def assert_pairs_close(matrix, expected: dict):
    np.testing.assert_allclose(matrix, matrix.T, rtol=0, atol=0)
    for pair, value in expected.items():
        assert math.isclose(matrix[pair], value, rel_tol=1e-9, abs_tol=1e-12), pair


ROWS = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 1, 0]], dtype=float))


def test_hand_worked_cosine_and_jaccard():
    # raw cos: (0,1) 2/sqrt(8), (0,2) 0, (1,2) 1/2 -> min 0, max 2/sqrt(8)
    cos = pairwise.cosine(ROWS)
    assert cos[0, 1] == pytest.approx(1.0)
    assert cos[0, 2] == 0.0
    assert cos[1, 2] == pytest.approx(0.5 / (2 / math.sqrt(8)))
    # raw jacc: (0,1) 1/2, (0,2) 0, (1,2) 1/4
    jacc = pairwise.jaccard(ROWS)
    assert jacc[0, 1] == pytest.approx(1.0)
    assert jacc[1, 2] == pytest.approx(0.5)
    assert np.diagonal(cos).tolist() == [0.0, 0.0, 0.0]


def test_counts_are_binarised():
    weighted = ROWS.multiply(np.array([[3.0], [2.0], [5.0]])).tocsr()
    np.testing.assert_array_equal(pairwise.cosine(weighted), pairwise.cosine(ROWS))


def test_all_pairs_equal_and_single_pair_give_zero():
    identical = sp.csr_matrix(np.ones((4, 3)))
    assert not pairwise.jaccard(identical).any()
    assert not pairwise.cosine(ROWS[:2]).any()  # m = 2: one pair, min == max
    assert pairwise.cosine(ROWS[:1]).shape == (1, 1)


def test_empty_rows_have_zero_raw_similarity():
    rows = sp.csr_matrix(np.array([[1, 0], [0, 0], [1, 1]], dtype=float))
    cos = pairwise.cosine(rows)
    assert cos[0, 1] == 0.0 and cos[1, 2] == 0.0 and cos[0, 2] == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_matches_loop_reference_for_every_block_size(seed):
    train, test, topk, _ = random_split(seed)
    inputs = load_inputs(train, test, topk)
    _, _, train_sets, _ = python_views(inputs, train, test, topk)
    rows = inputs.train_of_evaluated()
    cos_expected, jacc_expected = ref.cosine(train_sets), ref.jaccard(train_sets)
    unblocked = pairwise.cosine(rows, block_size=10_000)
    for block_size in (1, 3, 7, 10_000):
        cos = pairwise.cosine(rows, block_size=block_size)
        assert_pairs_close(cos, cos_expected)
        np.testing.assert_array_equal(cos, unblocked)
        assert_pairs_close(pairwise.jaccard(rows, block_size=block_size), jacc_expected)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("gamma", [0.0, 0.25, 0.5, 1.0])
def test_genre_and_uf_similarity_match_loop_reference(tmp_path, seed, gamma):
    train, test, topk, item_genres = random_split(seed)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item")
    _, _, train_sets, _ = python_views(inputs, train, test, topk)
    genres = sorted({g for gs in item_genres.values() for g in gs})
    rows = inputs.train_of_evaluated()
    genre_sim = pairwise.genre_js_similarity(rows, inputs.genres, block_size=4)
    genre_expected = ref.genre_js_similarity(train_sets, item_genres, genres)
    assert_pairs_close(genre_sim, genre_expected)
    assert ((genre_sim >= 0) & (genre_sim <= 1)).all()
    jacc_raw = pairwise.jaccard(rows, normalise=False)
    assert_pairs_close(jacc_raw, ref.jaccard_raw(train_sets))
    mixed = pairwise.uf_similarity(jacc_raw, genre_sim, gamma)
    expected = ref.uf_similarity(ref.jaccard_raw(train_sets), genre_expected, gamma)
    assert_pairs_close(mixed, expected)


def test_genre_similarity_hand_worked():
    genres = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1]], dtype=float))
    rows = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float))
    sim = pairwise.genre_js_similarity(rows, genres)
    assert sim[0, 1] == pytest.approx(1.0)  # (1/2, 1/2) both
    # (1/2, 1/2) against (1, 0): JS = H(3/4, 1/4) - (1 + 0) / 2
    mixture_entropy = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert sim[0, 2] == pytest.approx(1 - (mixture_entropy - 0.5), rel=1e-12)
    assert sim[1, 2] == pytest.approx(sim[0, 2], rel=1e-12)


def test_user_without_genres_has_the_uniform_distribution():
    genres = sp.csr_matrix(np.array([[1, 0], [0, 1], [0, 0]], dtype=float))
    rows = sp.csr_matrix(np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float))
    sim = pairwise.genre_js_similarity(rows, genres)
    assert sim[0, 1] == pytest.approx(1.0)  # (1/2, 1/2) and uniform
    assert sim[1, 2] == pytest.approx(sim[0, 2])


def test_uf_similarity_is_the_raw_mix_without_normalisation():
    # raw jacc: (0,1) 1/2, (0,2) 0, (1,2) 1/4; genre similarity 0.2 everywhere
    jacc = pairwise.jaccard(ROWS, normalise=False)
    genre = np.full((3, 3), 0.2)
    np.fill_diagonal(genre, 0.0)
    mixed = pairwise.uf_similarity(jacc, genre, 0.5)
    assert mixed[0, 1] == pytest.approx(0.5 * 0.5 + 0.5 * 0.2)
    assert mixed[0, 2] == pytest.approx(0.1)  # not 0, as min-max would make it
    assert mixed[1, 2] == pytest.approx(0.5 * 0.25 + 0.1)
    assert np.diagonal(mixed).tolist() == [0.0, 0.0, 0.0]


def test_uf_similarity_needs_genres_below_gamma_one():
    jacc = pairwise.jaccard(ROWS, normalise=False)
    assert pairwise.uf_similarity(jacc, None, 1.0) is jacc
    with pytest.raises(ValueError, match="genre"):
        pairwise.uf_similarity(jacc, None, 0.5)
    with pytest.raises(ValueError, match="gamma"):
        pairwise.uf_similarity(jacc, jacc, 1.5)


def test_raw_form_and_its_range():
    raw = pairwise.jaccard(ROWS, normalise=False)
    assert raw[0, 1] == 0.5 and raw[0, 2] == 0.0 and raw[1, 2] == 0.25
    assert pairwise.pair_range(raw) == (0.0, 0.5)
    assert np.diagonal(raw).tolist() == [0.0, 0.0, 0.0]  # pair_range leaves it untouched
    np.testing.assert_array_equal(pairwise.min_max(raw), pairwise.jaccard(ROWS))
    computed = pairwise.compute("jacc", ROWS, np.array(["a", "b", "c"]))
    assert (computed.lo, computed.hi) == (0.0, 0.5) and computed.seconds > 0
    np.testing.assert_array_equal(computed.sim, pairwise.jaccard(ROWS))
    np.testing.assert_allclose(computed.raw(), raw, rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match="unknown similarity"):
        pairwise.compute("pearson", ROWS, np.array(["a", "b", "c"]))


def test_raw_of_a_constant_similarity_is_its_value():
    # every pair has raw cosine 1: normalised all 0, the raw value comes back from the range
    stored = pairwise.compute("cos", sp.csr_matrix(np.ones((3, 2))), np.array(["a", "b", "c"]))
    assert not stored.sim.any() and stored.lo == stored.hi == pytest.approx(1.0)
    assert stored.raw()[0, 1] == pytest.approx(1.0) and stored.raw()[1, 1] == 0.0


def test_save_and_load_round_trip(tmp_path):
    users = np.array(["a", "b", "c"])
    stored = pairwise.Similarity(users, pairwise.cosine(ROWS), 1.25, 0.0, 2 / math.sqrt(8))
    pairwise.save(tmp_path / "cos.npz", stored)
    loaded = pairwise.load(tmp_path / "cos.npz")
    assert loaded.users.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(loaded.sim, stored.sim)
    assert (loaded.seconds, loaded.lo, loaded.hi) == (1.25, 0.0, 2 / math.sqrt(8))
    assert [p.name for p in tmp_path.iterdir()] == ["cos.npz"]  # no temporary left
    pairwise.load(tmp_path / "cos.npz", expected_users=users)
    with pytest.raises(InputError, match=r"cos\.npz.*'users'"):
        pairwise.load(tmp_path / "cos.npz", expected_users=np.array(["a", "c", "b"]))


def test_load_dataset_takes_the_genre_file_only_when_given(tmp_path):
    users = np.array(["a", "b", "c"])
    for kind in ("cos", "jacc", "genre"):
        pairwise.save(
            tmp_path / f"{kind}.npz",
            pairwise.compute(kind if kind != "genre" else "cos", ROWS, users),
        )
    two = pairwise.load_dataset(tmp_path / "cos.npz", tmp_path / "jacc.npz", [], users)
    assert sorted(two) == ["cos", "jacc"]
    for genre in ([tmp_path / "genre.npz"], str(tmp_path / "genre.npz")):
        three = pairwise.load_dataset(tmp_path / "cos.npz", tmp_path / "jacc.npz", genre, users)
        assert sorted(three) == ["cos", "genre", "jacc"]
    np.testing.assert_array_equal(two["jacc"].sim, pairwise.load(tmp_path / "jacc.npz").sim)
    with pytest.raises(InputError, match=r"cos\.npz: field 'users'"):  # the first file named
        pairwise.load_dataset(tmp_path / "cos.npz", tmp_path / "jacc.npz", [], users[::-1])


def test_load_names_the_file_and_field(tmp_path):
    np.savez(tmp_path / "bad.npz", users=np.array(["a"]), sim=np.zeros((1, 1)))
    with pytest.raises(InputError, match=r"bad\.npz.*'seconds'"):
        pairwise.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "old.npz", users=np.array(["a"]), sim=np.zeros((1, 1)), seconds=1.0)
    with pytest.raises(InputError, match=r"old\.npz.*'raw_min'.*older version"):
        pairwise.load(tmp_path / "old.npz")
    with pytest.raises(InputError, match="not found"):
        pairwise.load(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="shape"):
        pairwise.save(
            tmp_path / "x.npz", pairwise.Similarity(np.array(["a", "b"]), np.zeros((3, 3)))
        )
