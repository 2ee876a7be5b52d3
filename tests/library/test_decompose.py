"""userfair.decomposition.decompose and `userfair users`: each user's share of every fairness
measure, against a direct loop from the formulas (docs/method.md#who), against hand-worked cases,
and against the measures of userfair.evaluate (column sums, <= 1e-9)."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from userfair.cli import main
from userfair.decomposition import decompose as dec
from userfair.decomposition import decompose_columns as cols
from userfair.decomposition import worst_cases
from userfair.engine import route
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs
from userfair.files.io import write_inter
from userfair.formulas import spread
from userfair.measures import NAMES

import reference as ref
from measures_data import python_views, random_split, write_item_file

K = 10
TOL = 1e-9


def same(a, b, tol=TOL):
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def assert_column(got, expected, name):
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape, name
    for u, (a, b) in enumerate(zip(got, expected)):
        assert same(a, b), (name, u, a, b)


def assert_sums(frame, result):
    """Every share column and every signed part sums to its measure of evaluate()."""
    for name in cols.SHARES:
        column = frame[name]
        total = math.nan if column.isna().all() else column.sum()
        assert same(total, result[name]), (name, total, result[name])
    for name in cols.SIGNED:
        assert same(frame[name].sum(), result[name.split(":")[0]]), name


# --- the direct loop ---------------------------------------------------------------------


def loop_puf(scores, sim):
    """share, disadvantaged, advantaged of PUF from the pair dict {(u, v): s}, u < v."""
    m = len(scores)
    share, worse, better = [0.0] * m, [0.0] * m, [0.0] * m
    for (u, v), s in sim.items():
        term = 2 * s * abs(scores[u] - scores[v]) / (m * (m - 1))  # the pair's part of PUF
        share[u] += term / 2
        share[v] += term / 2
        if scores[u] < scores[v]:
            worse[u] += term
            better[v] += term
        elif scores[v] < scores[u]:
            worse[v] += term
            better[u] += term
    return share, worse, better


def loop_envy(lists, relevant, k, epsilon, utility):
    m = len(lists)

    def phi(u, ranked):
        d = k if utility == "precision" else min(k, len(relevant[u]))
        return len(set(ranked[:k]) & relevant[u]) / d if d else 0.0

    envy = [[max(phi(u, lists[v]) - phi(u, lists[u]), 0.0) for v in range(m)] for u in range(m)]
    pairs = m * (m - 1)
    out = {name: [0.0] * m for name in ("ME:envies", "ME:envied", "MME:envies", "MME:envied")}
    out["PEU"] = [0.0] * m
    for u in range(m):
        others = [v for v in range(m) if v != u]
        for v in others:
            out["ME:envies"][u] += envy[u][v] / pairs
            out["ME:envied"][v] += envy[u][v] / pairs
        top = max(envy[u][v] for v in others)
        out["MME:envies"][u] = top / m
        out["PEU"][u] = (1.0 if top > epsilon else 0.0) / m
        if top > 0:
            tied = [v for v in others if envy[u][v] == top]
            for v in tied:
                out["MME:envied"][v] += top / m / len(tied)
    for name in ("ME", "MME"):
        out[name] = [(a + b) / 2 for a, b in zip(out[f"{name}:envies"], out[f"{name}:envied"])]
    return out


def loop_uf(lists, all_train, sim_uf, m, k):
    item_users = {}
    for user, items in enumerate(all_train):
        for item in items:
            item_users.setdefault(item, set()).add(user)

    def item_cos(i, j):
        a, b = item_users.get(i, set()), item_users.get(j, set())
        return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0

    values = list(sim_uf.values())
    mean = sum(values) / len(values)
    threshold = mean + math.sqrt(sum((s - mean) ** 2 for s in values) / len(values))
    half = [0.0] * m
    for (u, v), s in sim_uf.items():
        if s >= threshold:
            d = sum(1 - item_cos(i, j) for i in lists[u][:k] for j in lists[v][:k]) / k**2
            half[u] += s * d / 2
            half[v] += s * d / 2
    total = sum(half)
    if len(values) < 2 or total == 0:
        return [math.nan] * m
    value = math.log(total) / math.log(len(values))
    return [value * h / total for h in half]


def loop_gini(x):
    m, total = len(x), sum(x)
    if total == 0:
        return [math.nan] * m, [math.nan] * m, [math.nan] * m
    share, worse, better = [], [], []
    for u in range(m):
        lower = sum(1 for y in x if y < x[u])
        equal = sum(1 for y in x if y == x[u])
        rank = lower + (equal + 1) / 2  # the mean of the tied positions lower+1 .. lower+equal
        share.append((2 * rank - m - 1) * x[u] / (m * total))
        worse.append(sum(y - x[u] for y in x if y > x[u]) / (m * total))
        better.append(sum(x[u] - y for y in x if y < x[u]) / (m * total))
    return share, worse, better


def loop_sd(x):
    mean = sum(x) / len(x)
    squares = [(y - mean) ** 2 for y in x]
    if sum(squares) == 0:
        return [0.0] * len(x)
    return [ref.sd(x) * s / sum(squares) for s in squares]


def cold_split(seed):
    """random_split with one evaluated user without train items and one with a single
    train item shared by nobody."""
    train, test, topk, item_genres = random_split(seed)
    train = train[train.user_id != "u002"]
    return train.reset_index(drop=True), test, topk, item_genres


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("utility", ["precision", "ideal"])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
def test_every_column_matches_the_loop_and_sums_to_evaluate(tmp_path, seed, utility, gamma):
    train, test, topk, item_genres = cold_split(seed)
    write_item_file(tmp_path / "d.item", item_genres)
    inputs = load_inputs(train, test, topk, item_features=tmp_path / "d.item")
    frame = dec.decompose(inputs, k=K, gamma=gamma, block_size=7, envy_utility=utility)
    assert list(frame.columns) == list(cols.COLUMNS)
    lists, relevant, train_sets, all_train = python_views(inputs, train, test, topk)
    m = len(lists)
    assert list(frame.user_id) == sorted(test.user_id.unique())
    eff = ref.effectiveness(lists, relevant)
    assert_column(frame.P, eff["P"], "P")
    assert_column(frame.NDCG, eff["NDCG"], "NDCG")
    assert (frame.P == 0).any() and frame.P.duplicated().any()  # zero scores and ties
    cos, jacc = ref.cosine(train_sets), ref.jaccard(train_sets)
    for name in ("P", "NDCG"):
        for label, sim in (("Cos", cos), ("Jacc", jacc)):
            key = f"PUF-{name}-{label}"
            share, worse, better = loop_puf(eff[name], sim)
            assert_column(frame[key], share, key)
            assert_column(frame[f"{key}:disadvantaged"], worse, key)
            assert_column(frame[f"{key}:advantaged"], better, key)
        share, worse, better = loop_gini(eff[name])
        assert_column(frame[f"Gini-{name}"], share, name)
        assert_column(frame[f"Gini-{name}:disadvantaged"], worse, name)
        assert_column(frame[f"Gini-{name}:advantaged"], better, name)
        assert_column(frame[f"SD-{name}"], loop_sd(eff[name]), name)
    for name, values in loop_envy(lists, relevant, K, 0.05, utility).items():
        assert_column(frame[name], values, name)
    genres = sorted({g for gs in item_genres.values() for g in gs})
    sim_uf = ref.uf_similarity(
        ref.jaccard_raw(train_sets), ref.genre_js_similarity(train_sets, item_genres, genres), gamma
    )
    assert_column(frame.UF, loop_uf(lists, all_train, sim_uf, m, K), "UF")
    # attributes: activity, mean popularity of the train items, mean cosine to the others
    popularity = {}
    for items in all_train:
        for item in items:
            popularity[item] = popularity.get(item, 0) + 1
    assert list(frame.train_items) == [len(s) for s in train_sets]
    mean_pop = [sum(popularity[i] for i in s) / len(s) if s else math.nan for s in train_sets]
    assert_column(frame.popularity, mean_pop, "popularity")
    mean_cos = [
        sum(cos[min(u, v), max(u, v)] for v in range(m) if v != u) / (m - 1) for u in range(m)
    ]
    assert_column(frame.mean_similarity, mean_cos, "mean_similarity")
    assert frame.train_items.iloc[2] == 0 and math.isnan(frame.popularity.iloc[2])
    result = evaluate(inputs, k=K, gamma=gamma, device="cpu", envy_utility=utility, route="dense")
    assert_sums(frame, result)


def test_given_similarities_are_read_not_modified(tmp_path):
    train, test, topk, _ = random_split(4)
    inputs = load_inputs(train, test, topk)
    sims = dec.similarities_of(inputs)
    before = {kind: s.sim.copy() for kind, s in sims.items()}
    frame = dec.decompose(inputs, similarities=sims, block_size=5)
    for kind, s in sims.items():
        assert np.array_equal(s.sim, before[kind]), kind
    assert_sums(frame, evaluate(inputs, similarities=sims, device="cpu"))
    wrong = dict(sims, cos=sims["cos"].__class__(inputs.users[:2], np.zeros((2, 2))))
    with pytest.raises(ValueError, match="similarities"):
        dec.decompose(inputs, similarities=wrong)
    with pytest.raises(ValueError, match="genres"):
        dec.decompose(inputs, gamma=0.5)
    with pytest.raises(ValueError, match="envy utility"):
        dec.decompose(inputs, envy_utility="recall")


@pytest.mark.parametrize("m", [2, 3])
def test_two_and_three_users_follow_evaluate(m):
    train, test, topk, _ = random_split(1, m=m)
    inputs = load_inputs(train, test, topk)
    frame = dec.decompose(inputs)
    result = evaluate(inputs, device="cpu", route="dense")
    assert_sums(frame, result)
    if m == 2:  # one pair: UF is NaN for every user, PUF is the pair's term
        assert frame.UF.isna().all() and math.isnan(result["UF"])


def test_one_user_has_no_pair():
    train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["i1", "i2", "i1"]})
    test = pd.DataFrame({"user_id": ["a"], "item_id": ["i3"]})
    topk = pd.DataFrame({"user_id": ["a", "a"], "item_id": ["i3", "i1"], "rank": [1, 2]})
    frame = dec.decompose(load_inputs(train, test, topk, k=2), k=2)
    pairwise = [c for c in cols.SHARES + cols.SIGNED if not c.startswith(("Gini", "SD"))]
    assert frame[pairwise + ["mean_similarity"]].isna().all(axis=None)
    # Gini and SD of one score 0.5: 0, as evaluate gives; popularity (2 + 1) / 2 train users
    assert (frame[[c for c in cols.SHARES + cols.SIGNED if c not in pairwise]] == 0).all(axis=None)
    assert (frame.train_items.iloc[0], frame.popularity.iloc[0]) == (2, 1.5)


def test_memory_check_names_the_need():
    assert route.check_memory(1000, available=10**9) == 3 * 8 * 10**6
    assert route.check_memory(1000, gamma=0.5, available=10**9) == 5 * 8 * 10**6
    with pytest.raises(ValueError, match="100000 evaluated users need about 223.5 GiB.*stream"):
        route.check_memory(100_000, available=2**30)


# --- hand-worked cases -------------------------------------------------------------------


def test_puf_by_hand():
    # S = (0, .5, .5, 1); pairs m (m - 1) = 12, so a pair's term is 2 sim |gap| / 12:
    # ab: 1 * .5 / 6 = 1/12, ac: .5 * .5 / 6 = 1/24, ad: sim 0 -> 0, bc: gap 0 -> 0,
    # bd: .5 * .5 / 6 = 1/24, cd: .2 * .5 / 6 = 1/60; PUF = 1/12 + 1/24 + 1/24 + 1/60 = 11/60
    scores = [0.0, 0.5, 0.5, 1.0]
    sim = np.array(
        [[0, 1, 0.5, 0], [1, 0, 1, 0.5], [0.5, 1, 0, 0.2], [0, 0.5, 0.2, 0]], dtype=float
    )
    share, worse, better = dec.puf_parts(scores, sim, block_size=3)
    # half of each pair's term to each user: a (1/12 + 1/24) / 2 = 1/16, b (1/12 + 1/24) / 2
    # = 1/16, c (1/24 + 1/60) / 2 = 7/240, d (1/24 + 1/60) / 2 = 7/240
    assert_column(share, [1 / 16, 1 / 16, 7 / 240, 7 / 240], "share")
    # the whole term to the worse-served: a in ab, ac; b in bd; c in cd
    assert_column(worse, [1 / 12 + 1 / 24, 1 / 24, 1 / 60, 0.0], "disadvantaged")
    # ... to the better-served: b in ab; c in ac; d in bd, cd
    assert_column(better, [0.0, 1 / 12, 1 / 24, 1 / 24 + 1 / 60], "advantaged")
    for column in (share, worse, better):
        assert same(sum(column), 11 / 60)
    assert all(math.isnan(x) for x in dec.puf_parts([0.3], np.zeros((1, 1)))[0])


def hand_envy_inputs():
    # k = 2, items 0..3. Relevant: a {0, 1}, b {2}, c {3}; lists: a [2, 3], b [0, 1], c [0, 2]
    relevant = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float))
    topk = np.array([[2, 3], [0, 1], [0, 2]])
    return topk, relevant


def test_envy_by_hand():
    topk, relevant = hand_envy_inputs()
    # precision utility |L_v & R_u| / 2; every own utility is 0 (no list hits its user):
    # envy(a, b) = 2/2 = 1, envy(a, c) = |{0}|/2 = .5, envy(b, a) = |{2}|/2 = .5,
    # envy(b, c) = |{2}|/2 = .5, envy(c, a) = |{3}|/2 = .5, envy(c, b) = 0
    # ME = 3 / (3 * 2) = 1/2
    parts = dec.envy_parts(topk, relevant, k=2, epsilon=0.6, block_size=2)
    assert_column(parts["ME:envies"], [1.5 / 6, 1 / 6, 0.5 / 6], "envies")
    assert_column(parts["ME:envied"], [1 / 6, 1 / 6, 1 / 6], "envied")  # a: b, c; b: a; c: a, b
    assert_column(parts["ME"], [5 / 24, 1 / 6, 1 / 8], "ME")  # (envies + envied) / 2
    # max envy: a 1 (of b), b .5 (of a and c: tied, half each), c .5 (of a); MME = 2/3
    assert_column(parts["MME:envies"], [1 / 3, 1 / 6, 1 / 6], "MME:envies")
    # envied: a .5/3 from c plus .5/3/2 from b = 1/4; b 1/3 from a; c .5/3/2 = 1/12 from b
    assert_column(parts["MME:envied"], [1 / 4, 1 / 3, 1 / 12], "MME:envied")
    assert_column(parts["MME"], [7 / 24, 1 / 4, 1 / 8], "MME")
    assert same(parts["MME"].sum(), 2 / 3)
    # epsilon .6: only a's max envy (1) exceeds it; PEU = 1/3, all of it a's
    assert_column(parts["PEU"], [1 / 3, 0, 0], "PEU")
    # ideal utility: d = min(k, |R_u|) = (2, 1, 1): b's envy of a and c doubles to 1,
    # c's envy of a to 1; ME = (1 + .5 + 1 + 1 + 1) / 6 = 3/4
    ideal = dec.envy_parts(topk, relevant, k=2, epsilon=0.6, utility="ideal")
    assert_column(ideal["ME:envies"], [1.5 / 6, 2 / 6, 1 / 6], "ideal envies")
    assert same(ideal["ME"].sum(), 0.75)
    assert_column(ideal["PEU"], [1 / 3, 1 / 3, 1 / 3], "ideal PEU")


def test_gini_and_sd_by_hand():
    # x = (0, .5, .5, 1), m = 4, sum 2: weights 2j - 5 = -3, -1, 1, 3; b and c tie at
    # positions 2 and 3 and take the mean weight 0. Gini = 3 * 1 / (4 * 2) = 3/8, all d's
    share, worse, better = spread.gini_parts([0.0, 0.5, 0.5, 1.0])
    assert_column(share, [0, 0, 0, 3 / 8], "share")
    # pair sum: gaps ab .5, ac .5, ad 1, bc 0, bd .5, cd .5 (sum 3) over m sum x = 8
    assert_column(worse, [2 / 8, 0.5 / 8, 0.5 / 8, 0], "disadvantaged")
    assert_column(better, [0, 0.5 / 8, 0.5 / 8, 2 / 8], "advantaged")
    # x = (1, 2, 1): sorted weights -2, 0, 2; the tied 1s take -1 each: -1/12, 4/12, -1/12
    share, _, _ = spread.gini_parts([1.0, 2.0, 1.0])
    assert_column(share, [-1 / 12, 4 / 12, -1 / 12], "tied")
    assert same(share.sum(), ref.gini([1.0, 2.0, 1.0]))
    assert np.isnan(spread.gini_parts([0.0, 0.0])[0]).all()  # Gini is NaN: every score 0
    # SD: mean .5, squares (.25, 0, 0, .25), SD = sqrt(.5 / 4); shares SD / 2 to a and d
    sd = math.sqrt(0.125)
    assert_column(spread.sd_share([0.0, 0.5, 0.5, 1.0]), [sd / 2, 0, 0, sd / 2], "SD")
    assert_column(spread.sd_share([0.2, 0.2]), [0, 0], "SD equal")


def test_uf_by_hand():
    # 3 users, k = 1: lists a [0], b [1], c [0]. sim_UF ab .6, ac 0, bc .3: mean .3,
    # SD sqrt((.09 + .09 + 0) / 3) = sqrt(.06), threshold .3 + .245 = .545: only ab is
    # similar. Train users x, y: item 0 {x, y}, item 1 {y}: cos = 1 / sqrt(2), so
    # d_L(a, b) = 1 - 1/sqrt(2), T = .6 (1 - 1/sqrt(2)), UF = log T / log 3, half to a and b
    train = sp.csr_matrix(np.array([[1, 0], [1, 1]], dtype=float))
    topk = np.array([[0], [1], [0]])
    sim_uf = np.array([[0, 0.6, 0], [0.6, 0, 0.3], [0, 0.3, 0]])
    total = 0.6 * (1 - 1 / math.sqrt(2))
    value = math.log(total) / math.log(3)
    assert_column(dec.uf_parts(topk, train, sim_uf, k=1), [value / 2, value / 2, 0], "UF")
    # every pair at .5: SD 0, threshold .5, so every pair counts (>=): d_ab = d_bc =
    # 1 - 1/sqrt(2), d_ac = 1 - cos(0, 0) = 0; T = .5 * 2 d_ab = d_ab; halves a .5 d_ab / 2,
    # b 2 * .5 d_ab / 2, c .5 d_ab / 2: the shares are UF * (1/4, 1/2, 1/4)
    d = 1 - 1 / math.sqrt(2)
    value = math.log(d) / math.log(3)
    equal = np.full((3, 3), 0.5) - 0.5 * np.eye(3)
    assert_column(dec.uf_parts(topk, train, equal, k=1), [value / 4, value / 2, value / 4], "=")
    # every pair equal: threshold = their value 0, every pair similar with weight 0: T = 0
    assert np.isnan(dec.uf_parts(topk, train, np.zeros((3, 3)), k=1)).all()
    # two users: one pair, UF is NaN
    assert np.isnan(dec.uf_parts(topk[:2], train, sim_uf[:2, :2], k=1)).all()


def test_worst_cases_and_their_lines():
    frame = pd.DataFrame(
        {
            "user_id": ["a", "b", "c", "d"],
            "P": [0.0, 0.5, 0.5, 0.1],
            "PUF-P-Cos:disadvantaged": [0.3, 0.0, 0.0, 0.2],
        }
    )
    sim = np.array(
        [[0, 0.9, 0.65, 0.1], [0.9, 0, 0.2, 0.3], [0.65, 0.2, 0, 0.4], [0.1, 0.3, 0.4, 0]]
    )
    table = worst_cases.worst_cases(frame, sim, n=2, neighbours=2)
    assert list(table.user_id) == ["a", "d"]
    # a's 2 most similar: b (.9), c (.65), both better served (.5 > 0)
    first = table.iloc[0]
    assert (first.better, first.neighbours, first.better_ids) == (2, 2, "b,c")
    assert (first.min_similarity, first.min_score, first.mean_score) == (0.65, 0.5, 0.5)
    # d's 2 most similar: c (.4), b (.3), both better served than .1
    assert table.iloc[1].better_ids == "c,b"
    assert (first.better_served, first.closest_id, first.closest_rank) == (3, "b", 1)
    lines = worst_cases.worst_lines(table, "PUF-P-Cos", k=10)
    assert lines[0] == (
        "user a: P@10 0.00; its part sums over 3 better-served users, the closest its most "
        "similar (user b, min-max normalised cosine 0.90) with P@10 0.50; 2 of its 2 most "
        "similar users (normalised cosine >= 0.65) get P@10 >= 0.50 (mean 0.50)"
    )
    none = worst_cases.worst_cases(frame.assign(P=[1.0, 0.5, 0.5, 0.1]), sim, n=1, neighbours=1)
    assert worst_cases.worst_lines(none)[0] == (
        "user a: P@10 1.00; no similar user is better served, so its part is 0 (up to rounding)"
    )
    with pytest.raises(ValueError, match="PUF"):
        worst_cases.worst_cases(frame, sim, measure="ME")
    with pytest.raises(ValueError, match="row order"):
        worst_cases.worst_cases(frame, sim[:3, :3])


def test_worst_line_names_the_better_served_beyond_the_nearest():
    """Issue 33: user 0's 10 most similar users are served no better than it, yet its part
    is positive: the line names the 2 better-served users it sums over, the closest being
    its 11th most similar, with raw and normalised similarity, and never says 'none' alone."""
    m = 14
    scores = np.zeros(m)
    scores[[11, 12]] = [0.3, 0.5]  # only users 11 and 12 are better served than user 0
    sim = np.zeros((m, m))
    sim[0, 1:] = sim[1:, 0] = np.linspace(0.95, 0.35, m - 1)  # 1 most similar ... 13 least
    sim[0, 13] = sim[13, 0] = 0.0
    sim[1:, 1:] = 0.05
    np.fill_diagonal(sim, 0.0)
    share, worse, better = dec.puf_parts(scores, sim)
    frame = pd.DataFrame(
        {"user_id": [f"u{i}" for i in range(m)], "P": scores, "PUF-P-Cos:disadvantaged": worse}
    )
    table = worst_cases.worst_cases(frame, sim, n=1, neighbours=10, raw_range=(0.1, 0.6))
    row = table.iloc[0]
    assert row.user_id == "u0" and row.disadvantaged > 0
    # the direct loop: the part sums over v with S_v > S_u and sim > 0
    direct = [v for v in range(m) if v != 0 and scores[v] > scores[0] and sim[0, v] > 0]
    assert direct == [11, 12] and row.better_served == 2 and row.better == 0
    assert (row.closest_id, row.closest_rank, row.closest_score) == ("u11", 11, 0.3)
    assert row.closest_similarity == pytest.approx(sim[0, 11])
    assert row.closest_similarity_raw == pytest.approx(0.1 + sim[0, 11] * 0.5)
    line = worst_cases.worst_lines(table)[0]
    assert line == (
        f"user u0: P@10 0.00; its part sums over 2 better-served users, the closest its 11th "
        f"most similar (user u11, raw cosine {0.1 + sim[0, 11] * 0.5:.2f}, min-max normalised "
        f"cosine {sim[0, 11]:.2f}) with P@10 0.30; none of its 10 most similar users is "
        "better served"
    )


def test_worst_cases_agree_with_the_parts_on_random_inputs():
    """better_served > 0 exactly when the ranked part is > 0, and it counts the direct loop."""
    rng = np.random.default_rng(3)
    m = 40
    scores = rng.choice([0.0, 0.1, 0.2, 0.5], size=m)
    sim = rng.random((m, m)) * (rng.random((m, m)) < 0.3)
    sim = np.triu(sim, 1) + np.triu(sim, 1).T
    _, worse, _ = dec.puf_parts(scores, sim)
    frame = pd.DataFrame(
        {"user_id": [str(i) for i in range(m)], "P": scores, "PUF-P-Cos:disadvantaged": worse}
    )
    table = worst_cases.worst_cases(frame, sim, n=m, neighbours=5)
    for row in table.itertuples(index=False):
        u = int(row.user_id)
        direct = [v for v in range(m) if v != u and scores[v] > scores[u] and sim[u, v] > 0]
        assert row.better_served == len(direct)
        assert (row.better_served > 0) == (row.disadvantaged > 1e-12 * worse.max())  # rounding
        if direct:
            closest = max(direct, key=lambda v: (sim[u, v], -v))
            assert row.closest_id == str(closest)
            assert row.closest_rank == 1 + sum(
                1 for v in range(m) if v != u and (sim[u, v], -v) > (sim[u, closest], -closest)
            )


def test_features_are_joined_by_user_id():
    frame = pd.DataFrame({"user_id": ["u1", "u2"], "P": [0.1, 0.2]})
    joined = dec.join_features(
        frame, pd.DataFrame({"age": [30.0]}, index=pd.Index([2])).rename(index=lambda i: f"u{i}")
    )
    assert list(joined.columns) == ["user_id", "P", "age"]
    assert math.isnan(joined.age.iloc[0]) and joined.age.iloc[1] == 30.0
    with pytest.raises(ValueError, match="appears more than once"):
        dec.join_features(frame, pd.DataFrame({"user_id": ["u1", "u1"], "age": [1, 2]}))
    with pytest.raises(ValueError, match="'P'"):
        dec.join_features(frame, pd.DataFrame({"user_id": ["u1"], "P": [1]}))


# --- the command -------------------------------------------------------------------------


@pytest.fixture()
def split_files(tmp_path):
    train, test, topk, item_genres = random_split(7)
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_csv(tmp_path / "topk.tsv", sep="\t", index=False)
    write_item_file(tmp_path / "d.item", item_genres)
    users = sorted(test.user_id.unique())
    lines = ["user_id:token\tage:float\tgender:token"]
    lines += [f"{u}\t{20 + i}\t{'MF'[i % 2]}" for i, u in enumerate(users[:-1])]
    (tmp_path / "d.user").write_text("\n".join(lines) + "\n")
    return tmp_path


def inputs_args(path):
    return [
        "--train", str(path / "d.train.inter"), "--test", str(path / "d.test.inter"),
        "--topk", str(path / "topk.tsv"), "--item-features", str(path / "d.item"),
        "--gamma", "0.5", "--envy-utility", "ideal", "--block-size", "9",
    ]  # fmt: skip


def test_users_command_sums_to_evaluate_json(split_files, capsys):
    path = split_files
    assert main(["evaluate", *inputs_args(path), "--json", "--device", "cpu"]) == 0
    result = json.loads(capsys.readouterr().out)
    out = path / "users.parquet"
    args = ["users", *inputs_args(path), "--out", str(out), "--user-features"]
    assert main([*args, str(path / "d.user"), "--worst", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()
    frame = pd.read_parquet(out)
    assert list(frame.columns) == list(cols.COLUMNS) + ["age", "gender"]
    assert len(frame) == 30 and np.isnan(frame.age.iloc[-1]) and frame.age.iloc[0] == 20.0
    assert_sums(frame, result)
    assert printed[0] == f"wrote 30 users x {frame.shape[1]} columns to {out}"
    assert printed[1] == "the 3 users most disadvantaged by PUF-P-Cos:"
    worst = frame.sort_values("PUF-P-Cos:disadvantaged", ascending=False, kind="stable")
    for line, user in zip(printed[2:], worst.user_id[:3]):
        assert line.startswith(f"user {user}: P@10 ")
    assert len(printed) == 5
    # CSV to a file and to stdout: the same numbers
    assert main(["users", *inputs_args(path), "--out", str(path / "users.csv")]) == 0
    capsys.readouterr()
    assert main(["users", *inputs_args(path)]) == 0
    from io import StringIO

    printed = pd.read_csv(StringIO(capsys.readouterr().out), dtype={"user_id": str})
    for table in (pd.read_csv(path / "users.csv", dtype={"user_id": str}), printed):
        assert list(table.columns) == list(cols.COLUMNS)
        for name in NAMES:
            if name in cols.SHARES:
                assert np.allclose(table[name], frame[name], rtol=1e-12, equal_nan=True), name


def test_users_command_errors_leave_nothing_behind(split_files, capsys):
    path = split_files
    assert main(["users", *inputs_args(path), "--out", str(path / "users.xlsx")]) == 2
    assert "users.xlsx: unknown suffix '.xlsx'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # refused by the option's bound (userfair.bounds)
        main(["users", *inputs_args(path), "--worst", "-1", "--out", "x.csv"])
    assert "argument --worst: -1 is less than the minimum of 0" in capsys.readouterr().err
    (path / "bad.user").write_text("id:token\tage:float\nu000\t3\n")
    bad = ["--user-features", str(path / "bad.user"), "--out", str(path / "u.csv")]
    assert main(["users", *inputs_args(path), *bad]) == 2
    assert "bad.user: missing column 'user_id'" in capsys.readouterr().err
    assert sorted(p.name for p in path.iterdir()) == sorted(
        ["bad.user", "d.item", "d.test.inter", "d.train.inter", "d.user", "topk.tsv"]
    )
