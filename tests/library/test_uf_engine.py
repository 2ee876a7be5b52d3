"""The generic UF engine (userfair.engine.uf_engine): the UF construction over any raw
similarity's row blocks equals the dense UF (userfair.formulas.fairness.uf) on the same
matrix, a hand-worked case, and loops for the threshold, the shares and the resamples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.engine import uf_engine
from userfair.formulas import fairness
from userfair.similarity import registry


def _blocks(train, name):
    return registry.block_function(name, registry.SimilarityData(sp.csr_matrix(train)))


def _dense(block, m):
    raw = block(0, m)
    return raw.toarray() if sp.issparse(raw) else np.asarray(raw)


def _random(seed, m=30, n=25, k=4):
    rng = np.random.default_rng(seed)
    train = sp.csr_matrix((rng.random((m, n)) < 0.2).astype(float))
    topk = np.array([rng.choice(n, k, replace=False) for _ in range(m)])
    return train, topk, k


def test_a_hand_worked_case():
    # users 0-2 trained on items {0, 1}, user 3 on item {2}; Jaccard 1 within 0-2, 0 else:
    # mean 0.5, SD 0.5, threshold 1, the three pairs of 0-2 similar. Lists (k = 1): 2, 2,
    # 3, 0. d_L(0, 1) = 1 - cos(x_2, x_2) = 0; d_L(0, 2) = d_L(1, 2) = 1 - cos(x_2, x_3) = 1
    # (item 3 nobody trained on). UF = log(0 + 1 + 1) / log(6).
    train = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0]]))
    topk = np.array([[2], [2], [3], [0]])
    block = _blocks(train, "jacc")
    assert uf_engine.threshold(block, 4) == pytest.approx(1.0, rel=1e-15)
    assert uf_engine.value(block, topk, train, 1) == pytest.approx(math.log(2) / math.log(6))
    shares = uf_engine.shares(block, topk, train, 1)
    # t_u, half of each of u's similar pairs' terms: (0 + 1) / 2, (0 + 1) / 2, (1 + 1) / 2,
    # 0; T = 2; UF_u = UF t_u / T
    np.testing.assert_allclose(shares, math.log(2) / math.log(6) * np.array([0.25, 0.25, 0.5, 0]))
    # the lists all alike: every distance 0, the sum 0, NaN
    assert math.isnan(uf_engine.value(block, np.array([[2], [2], [2], [2]]), train, 1))


@pytest.mark.parametrize("name", ["jacc", "cos", "vec"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_blocks_equal_the_dense_uf(name, seed):
    train, topk, k = _random(seed)
    m = train.shape[0]
    if name == "vec":  # a dense block function: negative similarities too
        vectors = np.random.default_rng(seed).normal(size=(m, 3))
        block = registry.block_function("vec", registry.SimilarityData(train, vectors=vectors))
    else:
        block = _blocks(train, name)
    sim = _dense(block, m)
    expected = fairness.uf(topk, train, sim, k=k, device="cpu")
    for size in (m, 7, 1):  # the same number whatever the block
        assert uf_engine.value(block, topk, train, k, size) == pytest.approx(expected, rel=1e-12)
        shares = uf_engine.shares(block, topk, train, k, size)
        assert shares.sum() == pytest.approx(expected, rel=1e-12)
    u, v = np.triu_indices(m, 1)
    loop = sim[u, v].mean() + sim[u, v].std()
    assert uf_engine.threshold(block, m, 5) == pytest.approx(loop, rel=1e-12)


def test_resamples_equal_a_loop_over_copies():
    train, topk, k = _random(4, m=12)
    m = train.shape[0]
    sim = _dense(_blocks(train, "cos"), m)
    rng = np.random.default_rng(9)
    weights = np.array([np.bincount(rng.integers(0, m, m), minlength=m) for _ in range(6)])
    weights[0] = 1  # all ones: the value itself
    thresholds = uf_engine.resampled_thresholds(sim, weights)
    got = uf_engine.resampled(topk, train, sim, thresholds, weights, k)
    assert got[0] == pytest.approx(fairness.uf(topk, train, sim, k=k, device="cpu"), rel=1e-12)
    for row, threshold, value in zip(weights, thresholds, got):
        # the population in which user u appears w_u times; copies of one user never pair
        copies = np.repeat(np.arange(m), row)
        pairs = [(a, b) for i, a in enumerate(copies) for b in copies[i + 1 :] if a != b]
        s = np.array([sim[a, b] for a, b in pairs])
        assert threshold == pytest.approx(s.mean() + s.std(), rel=1e-12)
        unit = fairness.unit_item_columns(train, np.arange(train.shape[1])).toarray()
        item_cos = unit.T @ unit
        total = sum(
            sim[a, b] * sum(1 - item_cos[i, j] for i in topk[a] for j in topk[b]) / k**2
            for (a, b), x in zip(pairs, s)
            if x >= threshold
        )
        expected = math.log(total) / math.log(len(pairs)) if total > 0 else math.nan
        assert value == pytest.approx(expected, rel=1e-12, nan_ok=True)


@pytest.mark.parametrize("label", ["Cos", "Jacc"])
@pytest.mark.parametrize("seed", [0, 3])
def test_the_compiled_streamed_route_equals_the_blocks(label, seed):
    from userfair.engine.warmup import tiny_inputs

    inputs = tiny_inputs(m=40, n=30, k=4, seed=seed)
    block = _blocks(inputs.train_of_evaluated(), label.lower())
    expected = uf_engine.value(block, inputs.topk, inputs.train, 4)
    assert np.isfinite(expected)
    assert uf_engine.compiled_value(label, inputs, 4) == pytest.approx(expected, rel=1e-12)


def test_the_compiled_route_is_for_counted_similarities_only():
    from userfair.engine.warmup import tiny_inputs

    assert uf_engine.compiled_value("Vec", tiny_inputs(), 3) is None
    assert math.isnan(uf_engine.compiled_value("Cos", tiny_inputs(m=2), 3))
