"""Cosine PUF by the items (userfair.streamed.puf_items): the same numbers as a loop over the pairs
written from the formula, as the dense and the streamed pair routes, and exact extremes,
each certificate and fallback taken."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from userfair.formulas import fairness
from userfair.opt_in import variants
from userfair.similarity import pairwise
from userfair.similarity.registry import CosineBlocks
from userfair.streamed import puf_items, streaming

from test_streaming import K, split_inputs


def loop_cosine(x, u, v) -> float:
    """cos of rows u and v of the dense array ``x`` from the definition; 0 for a zero row."""
    norm = math.sqrt(sum(a * a for a in x[u])) * math.sqrt(sum(b * b for b in x[v]))
    return 0.0 if norm == 0 else sum(a * b for a, b in zip(x[u], x[v])) / norm


def loop_puf(x, scores):
    """(PUF, lo, hi): the mean over unordered pairs of the min-max cosine times |S_u - S_v|,
    one pair at a time."""
    m = len(scores)
    pairs = list(itertools.combinations(range(m), 2))
    raw = {pair: loop_cosine(x, *pair) for pair in pairs}
    lo, hi = min(raw.values()), max(raw.values())
    if hi == lo:
        return 0.0, lo, hi
    total = sum((raw[u, v] - lo) / (hi - lo) * abs(scores[u] - scores[v]) for u, v in pairs)
    return total / len(pairs), lo, hi


def random_rows(rng, m, n, kind):
    density = rng.uniform(0.05, 0.8)
    x = (rng.random((m, n)) < density).astype(float)
    if kind == "graded":
        rows = sp.csr_matrix(x)
        rows.data = rng.integers(0, 6, rows.nnz).astype(float)  # grade 0 stays an entry
        return rows.toarray(), rows
    if kind == "dense":
        x = rng.normal(size=(m, 4))
        return x, x
    return x, sp.csr_matrix(x)


def test_hand_worked_case():
    # u0 has items a, b; u1 has a; u2 has c: cos(u0, u1) = 1 / sqrt 2, the others 0
    rows = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=float))
    scores = np.array([0.1, 0.5, 0.3])
    block = CosineBlocks(rows)
    # item a holds u0 (S 0.1, w 1/sqrt 2) below u1 (S 0.5, w 1): gap 0.4 crossed once
    assert puf_items.weighted_spread(block.unit, scores)[0] == pytest.approx(0.4 / math.sqrt(2))
    assert puf_items.spread(scores)[0] == pytest.approx(0.4 + 0.2 + 0.2)
    value, found = puf_items.cosine_puf(block, scores)
    # normalised: 1 for (u0, u1), 0 for the others; mean over 3 pairs
    assert value[0] == pytest.approx(0.4 / 3, rel=1e-12)
    assert (found.lo, found.hi) == (0.0, pytest.approx(1 / math.sqrt(2)))


@pytest.mark.parametrize("kind", ["binary", "graded", "dense"])
def test_equals_the_loop_on_random_rows(kind):
    rng = np.random.default_rng(len(kind))
    for _ in range(25):
        m, n = int(rng.integers(2, 30)), int(rng.integers(1, 12))
        x, rows = random_rows(rng, m, n, kind)
        scores = np.round(rng.random((2, m)) * 10) / 10  # ties, as P@k has
        block = CosineBlocks(rows)
        got, found = puf_items.cosine_puf(block, scores)
        for j in range(2):
            want, lo, hi = loop_puf(x, scores[j])
            assert math.isclose(got[j], want, rel_tol=1e-9, abs_tol=1e-15)
        assert math.isclose(found.lo, lo, abs_tol=1e-12)
        assert math.isclose(found.hi, hi, rel_tol=1e-12, abs_tol=1e-15)


def test_spread_and_weighted_spread_equal_loops():
    rng = np.random.default_rng(5)
    m = 17
    x = rng.normal(size=(m, 3))  # signed weights: Vec
    scores = rng.random(m)
    unit = x / np.linalg.norm(x, axis=1)[:, None]
    pairs = list(itertools.combinations(range(m), 2))
    weighted = sum(unit[u] @ unit[v] * abs(scores[u] - scores[v]) for u, v in pairs)
    plain = sum(abs(scores[u] - scores[v]) for u, v in pairs)
    assert math.isclose(puf_items.weighted_spread(unit, scores)[0], weighted, rel_tol=1e-12)
    assert math.isclose(puf_items.spread(scores)[0], plain, rel_tol=1e-12)


def test_equals_the_dense_and_streamed_pair_routes():
    rng = np.random.default_rng(11)
    m, n = 300, 60
    rows = sp.random(m, n, density=0.06, random_state=3, format="csr")
    rows.data[:] = 1.0
    scores = rng.integers(0, 11, (2, m)) / 10
    block = CosineBlocks(rows)
    got, _ = puf_items.cosine_puf(block, scores)
    dense = pairwise.cosine(rows)
    streamed = variants.streamed_puf(block, scores)
    for j in range(2):
        want = fairness.puf(scores[j], dense, device="cpu")
        assert math.isclose(got[j], want, rel_tol=1e-12)
        assert math.isclose(got[j], streamed[j], rel_tol=1e-12)


def pattern(rows):
    return sp.csr_matrix(np.asarray(rows, dtype=float))


def test_lo_certificates():
    # an empty row
    assert puf_items.zero_certificate(pattern([[1, 0], [0, 0], [1, 1]]))[0].startswith("a user")
    # four users, one item each, two items: 2 sharing pairs of 6
    how, _ = puf_items.zero_certificate(pattern([[1, 0], [1, 0], [0, 1], [0, 1]]))
    assert how.startswith("item pair count")
    # the hub item i0 of everyone but u4 gives 15 + ... pair counts above the 21 pairs, but
    # u4's items reach only 2 other users
    rows = np.zeros((7, 4))
    rows[:6, 0] = 1
    rows[:6, 1] = 1
    rows[6, 2] = rows[5, 2] = rows[4, 2] = 1
    assert puf_items.zero_certificate(pattern(rows))[0].startswith("a user's items")
    # every bound fails (12 item pairs for 6 pairs, each user's items reach 4 others), an
    # exact count finds u0 and u3 apart
    rows = pattern([[1, 0, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1], [0, 1, 0, 1]])
    how, visits = puf_items.zero_certificate(rows)
    assert how is not None and "share no item" in how and visits > 0
    u, v = (int(w) for w in how.split()[1:4:2])
    assert rows[u].multiply(rows[v]).nnz == 0
    # every pair shares item 0: no certificate
    assert puf_items.zero_certificate(pattern([[1, 1, 0], [1, 0, 1], [1, 1, 1]]))[0] is None


def test_lo_above_zero_falls_back_to_the_pair_pass():
    rows = pattern([[1, 1, 0], [1, 0, 1], [1, 1, 1], [1, 0, 0]])
    found = puf_items.extremes(CosineBlocks(rows))
    x = rows.toarray()
    pairs = list(itertools.combinations(range(4), 2))
    assert found.lo_by == "pair pass" and found.lo > 0
    assert math.isclose(found.lo, min(loop_cosine(x, *p) for p in pairs), rel_tol=1e-12)
    assert math.isclose(found.hi, max(loop_cosine(x, *p) for p in pairs), rel_tol=1e-12)


def test_binary_max_search():
    duplicates = pattern([[1, 1, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 1, 1, 1]])
    found = puf_items.extremes(CosineBlocks(duplicates))
    assert found.hi == 1.0 and "t = 1.0" in found.hi_by
    lonely = pattern([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert puf_items.extremes(CosineBlocks(lonely)).hi == 0.0
    rng = np.random.default_rng(2)
    for _ in range(40):
        m, n = int(rng.integers(2, 40)), int(rng.integers(2, 30))
        x = (rng.random((m, n)) < rng.uniform(0.02, 0.6)).astype(float)
        found = puf_items.extremes(CosineBlocks(sp.csr_matrix(x)))
        want = max(loop_cosine(x, *p) for p in itertools.combinations(range(m), 2))
        assert math.isclose(found.hi, want, rel_tol=1e-12, abs_tol=1e-15), (found, want)


def test_max_search_prunes():
    # popular items, no duplicates: the search computes far fewer overlaps than there are
    # sharing pairs
    rng = np.random.default_rng(4)
    m, n = 3000, 400
    popularity = 1 / (np.arange(n) + 5.0)
    popularity /= popularity.sum()
    rows = np.zeros((m, n))
    for u in range(m):
        rows[u, rng.choice(n, size=int(rng.integers(8, 30)), p=popularity, replace=False)] = 1
    rows = sp.csr_matrix(rows)
    found = puf_items.extremes(CosineBlocks(rows))
    sharing = ((rows @ rows.T) > 0).sum() - m
    assert found.hi_by.startswith("prefix") and found.candidates < sharing / 2 / 2
    assert found.hi == puf_items.pair_extremes(CosineBlocks(rows), m)[1] or math.isclose(
        found.hi, puf_items.pair_extremes(CosineBlocks(rows), m)[1], rel_tol=1e-12
    )


@pytest.mark.parametrize("share_all", [False, True])
def test_streamed_route_uses_the_items_and_keeps_its_values(share_all):
    inputs = split_inputs(7, m=40, share_all=share_all)
    rows = inputs.train_of_evaluated()
    stats = streaming.pass_one(rows, users=inputs.users)
    sums = streaming.pass_two(inputs, stats, k=K)
    result = streaming.finish(inputs, stats, sums)
    cosine = pairwise.compute("cos", rows, inputs.users)  # the dense pair route
    per_user = variants.per_user_scores(inputs, K)
    for name in ("P", "NDCG"):
        key = f"PUF-{name}-Cos"
        by_pairs = fairness.puf(per_user[name], cosine.sim, device="cpu")
        assert math.isclose(result[key], by_pairs, rel_tol=1e-12)
        x = rows.toarray()
        assert math.isclose(result[key], loop_puf(x, per_user[name])[0], rel_tol=1e-9)
