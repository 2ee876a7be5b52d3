"""Fairness measures: hand-worked values, the loop reference on many random inputs (both
envy utilities, raw and normalised similarities), blocked = unblocked, numpy and torch
(CPU) paths."""

import math
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.engine import _backend
from userfair.files.inputs import load_inputs
from userfair.formulas import effectiveness, fairness, spread
from userfair.similarity import pairwise

import reference as ref
from measures_data import python_views, random_split
from test_similarity import pairs_of


def machine_devices() -> list[str]:
    """The devices this machine can run: numpy always, torch on the CPU where torch is
    installed, CUDA where torch sees a GPU."""
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return ["cpu", "torch-cpu"] + (["cuda"] if torch.cuda.is_available() else [])


#: every measure is checked against the direct loops on each of them
DEVICES = machine_devices()


def close(a, b):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def test_sd_and_gini_hand_worked():
    assert spread.sd([1.0, 3.0]) == 1.0  # population SD
    # x = (0, 0, 1): (2*3 - 3 - 1) * 1 / (3 * 1) = 2/3
    assert spread.gini([1.0, 0.0, 0.0]) == pytest.approx(2 / 3)
    assert spread.gini([0.5, 0.5, 0.5]) == 0.0


def test_gini_is_nan_when_all_scores_are_zero():
    assert math.isnan(spread.gini(np.zeros(5)))
    assert math.isnan(spread.gini([]))


ENVY_RELEVANT = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], float))
ENVY_TOPK = np.array([[2, 3], [0, 1], [0, 3]])


@pytest.mark.parametrize("device", DEVICES)
def test_envy_hand_worked_precision(device):
    # k = 2. R_0 = {0, 1}, R_1 = {2}, R_2 = {3}. L_0 = [2, 3], L_1 = [0, 1], L_2 = [0, 3].
    # phi_u(L) = |L & R_u| / 2 (P@2):
    # phi_0: own 0, of L_1 1, of L_2 1/2 -> envies 1, 1/2
    # phi_1: own 0, of L_0 1/2, of L_2 0 -> envies 1/2, 0
    # phi_2: own 1/2, of L_0 1/2, of L_1 0 -> no envy
    result = fairness.envy(ENVY_TOPK, ENVY_RELEVANT, k=2, epsilon=0.5, device=device)
    assert result["ME"] == pytest.approx((1 + 0.5 + 0.5) / 6)
    assert result["MME"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result["PEU"] == pytest.approx(1 / 3)  # max envies 1, 1/2, 0: only 1 > 0.5


@pytest.mark.parametrize("device", DEVICES)
def test_envy_hand_worked_ideal(device):
    # phi_u(L) = |L & R_u| / min(2, |R_u|): denominators 2, 1, 1
    # phi_0: own 0, of L_1 1, of L_2 1/2 -> envies 1, 1/2
    # phi_1: own 0, of L_0 1, of L_2 0 -> envies 1, 0
    # phi_2: own 1 -> no envy
    result = fairness.envy(
        ENVY_TOPK, ENVY_RELEVANT, k=2, epsilon=0.5, device=device, utility="ideal"
    )
    assert result["ME"] == pytest.approx((1 + 0.5 + 1) / 6)
    assert result["MME"] == pytest.approx(2 / 3)
    assert result["PEU"] == pytest.approx(2 / 3)  # max envies 1, 1, 0 > 0.5


def test_envy_rejects_an_unknown_utility():
    with pytest.raises(ValueError, match="envy utility 'recall'"):
        fairness.envy(ENVY_TOPK, ENVY_RELEVANT, k=2, utility="recall")


def test_uf_raw_and_normalised_similarity_differ_by_the_scale():
    # Four users, k = 1; raw Jaccard (0,1) 0.5, (2,3) 0.4, other pairs 0. The similar
    # pairs (>= mean + SD) are the same under min-max (an affine map keeps the order and
    # the threshold), but the weights differ: raw 0.5 * d + 0.4 * d', normalised (over
    # max 0.5) 1 * d + 0.8 * d'.
    train = sp.csr_matrix(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]], float))
    topk = np.array([[2], [1], [0], [1]])
    raw = np.zeros((4, 4))
    raw[0, 1] = raw[1, 0] = 0.5
    raw[2, 3] = raw[3, 2] = 0.4
    # item columns: x_0 = users {0, 1}, x_1 = {1, 2}, x_2 = {2, 3}
    # d(0,1) = 1 - cos(x_2, x_1) = 1 - 1/2; d(2,3) = 1 - cos(x_0, x_1) = 1 - 1/2
    raw_sum = 0.5 * 0.5 + 0.4 * 0.5
    normalised_sum = 1.0 * 0.5 + 0.8 * 0.5
    got_raw = fairness.uf(topk, train, raw, k=1, device="cpu")
    got_normalised = fairness.uf(topk, train, pairwise.min_max(raw), k=1, device="cpu")
    assert got_raw == pytest.approx(math.log(raw_sum) / math.log(6))
    assert got_normalised == pytest.approx(math.log(normalised_sum) / math.log(6))
    # UF_raw = UF_normalised + log(max) / log(pairs) when the minimum is 0
    assert got_raw == pytest.approx(got_normalised + math.log(0.5) / math.log(6))


def test_puf_hand_worked():
    sim = np.array([[0, 1, 0.5], [1, 0, 0], [0.5, 0, 0]])
    scores = np.array([0.0, 1.0, 0.5])
    # pairs: (0,1) 1 * 1, (0,2) 0.5 * 0.5, (1,2) 0 -> mean over 3 pairs
    assert fairness.puf(scores, sim, device="cpu") == pytest.approx(1.25 / 3)


def test_uf_hand_worked():
    # Items 0 and 1 have identical train columns (cos 1), item 2 is disjoint, item 3 has
    # no train interaction (cos 0 to everything, itself included).
    train = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0]], float))
    topk = np.array([[0], [1], [2], [3]])
    sim = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0.9], [0, 0, 0.9, 0]])
    # 6 pairs; sims 1, .9, 0 x4 -> mean 1.9/6, SD ~0.43 -> similar pairs: (0,1) and (2,3)
    # d(0,1) = 1 - 1 = 0; d(2,3) = 1 - 0 = 1 -> sum 0.9
    assert fairness.uf(topk, train, sim, k=1, device="cpu") == pytest.approx(
        math.log(0.9) / math.log(6)
    )


def test_small_populations_give_nan_not_errors():
    relevant = sp.csr_matrix(np.array([[1, 0]], float))
    assert all(math.isnan(v) for v in fairness.envy(np.array([[0]]), relevant, k=1).values())
    assert math.isnan(fairness.puf([0.3], np.zeros((1, 1))))
    train = sp.csr_matrix(np.eye(2))
    # m = 2: a single pair -> log(1) = 0 in the denominator -> NaN
    assert math.isnan(fairness.uf(np.array([[0], [1]]), train, np.ones((2, 2)), k=1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(8))
def test_matches_loop_reference(seed, device):
    train, test, topk, _ = random_split(seed, m=25 + seed)
    inputs = load_inputs(train, test, topk)
    lists, relevant, train_sets, all_train = python_views(inputs, train, test, topk)
    eff = effectiveness.per_user(inputs.topk, inputs.relevant)
    eff_ref = ref.effectiveness(lists, relevant)
    for name in ("P", "NDCG"):
        assert close(spread.sd(eff[name]), ref.sd(eff_ref[name]))
        assert close(spread.gini(eff[name]), ref.gini(eff_ref[name]))
    for epsilon in (0.0, 0.05, 0.3):
        for utility in fairness.ENVY_UTILITIES:
            got = fairness.envy(
                inputs.topk,
                inputs.relevant,
                epsilon=epsilon,
                block_size=4,
                device=device,
                utility=utility,
            )
            expected = ref.envy(lists, relevant, epsilon=epsilon, utility=utility)
            for key in ("ME", "MME", "PEU"):
                assert close(got[key], expected[key]), (key, utility, got[key], expected[key])
    rows = inputs.train_of_evaluated()
    for sim, sim_ref in (
        (pairwise.cosine(rows), ref.cosine(train_sets)),
        (pairwise.jaccard(rows), ref.jaccard(train_sets)),
        (pairwise.jaccard(rows, normalise=False), ref.jaccard_raw(train_sets)),
    ):
        for name in ("P", "NDCG"):
            assert close(
                fairness.puf(eff[name], sim, block_size=5, device=device),
                ref.puf(eff_ref[name], sim_ref),
            )
        assert close(
            fairness.uf(inputs.topk, inputs.train, sim, block_size=6, device=device),
            ref.uf(lists, all_train, pairs_of(sim)),
        )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(4))
def test_uf_with_sparse_item_cosines_matches_the_loops(seed, device, monkeypatch):
    """When the recommended items' cosines are too many to keep dense, UF takes the sparse
    blockwise path instead of the compiled dense one: same value."""
    monkeypatch.setattr(fairness, "UF_DENSE_ITEMS", 0)
    train, test, topk, _ = random_split(seed, m=30 + seed)
    inputs = load_inputs(train, test, topk)
    lists, _, _, all_train = python_views(inputs, train, test, topk)
    sim = pairwise.jaccard(inputs.train_of_evaluated())
    assert close(
        fairness.uf(inputs.topk, inputs.train, sim, block_size=4, device=device),
        ref.uf(lists, all_train, pairs_of(sim)),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_random_similarities_and_identical_lists(device):
    # Every user gets the same list and a random similarity: UF and PUF against the loops.
    rng = np.random.default_rng(7)
    m, n, k = 20, 30, 5
    train = sp.random(40, n, density=0.2, random_state=3, format="csr")
    topk = np.tile(rng.choice(n, size=k, replace=False), (m, 1))
    raw = rng.weibull(2.0, size=(m, m))
    sim = pairwise.min_max(np.triu(raw, 1) + np.triu(raw, 1).T)
    all_train = [set(np.flatnonzero(row)) for row in train.toarray()]
    lists = [list(row) for row in topk]
    assert close(
        fairness.uf(topk, train, sim, k=k, block_size=3, device=device),
        ref.uf(lists, all_train, pairs_of(sim), k=k),
    )
    scores = rng.random(m)
    assert close(
        fairness.puf(scores, sim, block_size=3, device=device), ref.puf(list(scores), pairs_of(sim))
    )


@pytest.mark.parametrize("device", DEVICES)
def test_blocked_equals_unblocked(device):
    train, test, topk, _ = random_split(11, m=40)
    inputs = load_inputs(train, test, topk)
    sim = pairwise.jaccard(inputs.train_of_evaluated())
    scores = effectiveness.per_user(inputs.topk, inputs.relevant)["NDCG"]
    whole = dict(block_size=10_000, device=device)
    envy_whole = fairness.envy(inputs.topk, inputs.relevant, **whole)
    uf_whole = fairness.uf(inputs.topk, inputs.train, sim, **whole)
    puf_whole = fairness.puf(scores, sim, **whole)
    for block_size in (1, 2, 7, 39):
        blocked = dict(block_size=block_size, device=device)
        got = fairness.envy(inputs.topk, inputs.relevant, **blocked)
        assert all(close(got[key], envy_whole[key]) for key in got)
        assert close(fairness.uf(inputs.topk, inputs.train, sim, **blocked), uf_whole)
        assert close(fairness.puf(scores, sim, **blocked), puf_whole)


def test_auto_takes_the_gpu_where_there_is_one_else_numpy(monkeypatch):
    """``auto`` resolves to CUDA exactly when torch sees a GPU, else to numpy (also when
    torch is missing); a name outside DEVICES is rejected."""
    torch = pytest.importorskip("torch")
    chosen = _backend.resolve("auto")
    if torch.cuda.is_available():
        assert chosen is not None and chosen.type == "cuda"
    else:
        assert chosen is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _backend.resolve("auto").type == "cuda"
    monkeypatch.setitem(sys.modules, "torch", None)  # as where torch is not installed
    assert _backend.resolve("auto") is None
    train, test, topk, _ = random_split(3)
    inputs = load_inputs(train, test, topk)
    with pytest.raises(ValueError, match="device"):
        fairness.envy(inputs.topk, inputs.relevant, device="tpu")


def test_cuda_without_gpu_is_a_clear_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    relevant = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="no CUDA device"):
        fairness.envy(np.array([[0], [1], [2]]), relevant, k=1, device="cuda")


def test_weights_and_explicit_zeros_are_binarised():
    train, test, topk, _ = random_split(4)
    inputs = load_inputs(train, test, topk)
    weighted = inputs.relevant.copy()
    weighted.data *= 3.0
    weighted.data[0] = 0.0  # an explicit zero: not relevant
    binary = weighted.copy()
    binary.eliminate_zeros()
    binary.data[:] = 1.0
    assert weighted.nnz == binary.nnz + 1
    got = fairness.envy(inputs.topk, weighted, device="cpu")
    assert got == pytest.approx(fairness.envy(inputs.topk, binary, device="cpu"), rel=1e-12)
    eff_w = effectiveness.per_user(inputs.topk, weighted)
    eff_b = effectiveness.per_user(inputs.topk, binary)
    assert all(np.array_equal(eff_w[key], eff_b[key]) for key in eff_b)
    train_w = inputs.train.copy()
    train_w.data *= 2.0
    sim = pairwise.jaccard(inputs.train_of_evaluated())
    assert fairness.uf(inputs.topk, train_w, sim, device="cpu") == pytest.approx(
        fairness.uf(inputs.topk, inputs.train, sim, device="cpu"), rel=1e-12
    )
