"""The measures as plain loops over users and pairs, written from docs/method.md only.

Slow on purpose: sets, Python floats and explicit loops, so that the vectorised library can
be checked against a direct reading of the formulas. Inputs: per-user lists ``lists[u]``
(item ids in rank order), relevant sets ``relevant[u]``, train sets ``train[u]`` of the
evaluated users, and ``all_train`` (every train user's item set, for the item columns).
"""

from __future__ import annotations

import math


def effectiveness(lists, relevant, k=10):
    """Per-user HR, MRR, P, R, MAP, NDCG as dicts of lists."""
    out = {name: [] for name in ("HR", "MRR", "P", "R", "MAP", "NDCG")}
    for ranked, rel in zip(lists, relevant):
        hits = [1 if item in rel else 0 for item in ranked[:k]]
        n_hits = sum(hits)
        ideal = min(k, len(rel))
        out["HR"].append(1.0 if n_hits else 0.0)
        first = next((j + 1 for j, h in enumerate(hits) if h), None)
        out["MRR"].append(1.0 / first if first else 0.0)
        out["P"].append(n_hits / k)
        out["R"].append(n_hits / len(rel) if rel else 0.0)
        ap = 0.0
        for j in range(k):
            if hits[j]:
                ap += sum(hits[: j + 1]) / (j + 1)
        out["MAP"].append(ap / ideal if ideal else 0.0)
        dcg = sum(hits[j] / math.log2(j + 2) for j in range(k))
        idcg = sum(1 / math.log2(j + 2) for j in range(ideal))
        out["NDCG"].append(dcg / idcg if idcg else 0.0)
    return out


def gndcg(lists, test, k):
    """gNDCG@k from its formula, user by user: ``test`` maps user -> {item: grade}."""
    out = []
    for ranked, grades in zip(lists, test):
        dcg = sum(grades.get(item, 0.0) / math.log2(r + 2) for r, item in enumerate(ranked[:k]))
        ideal = sorted(grades.values(), reverse=True)[:k]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        out.append(dcg / idcg if idcg > 0 else 0.0)
    return out


def _min_max(pairs: dict) -> dict:
    """(s - min) / (max - min) over the pairs; 0 for all when they are equal."""
    if not pairs:
        return {}
    lo, hi = min(pairs.values()), max(pairs.values())
    if hi == lo:
        return {pair: 0.0 for pair in pairs}
    return {pair: (s - lo) / (hi - lo) for pair, s in pairs.items()}


def cosine(train):
    """{(u, v): normalised cosine} for unordered pairs u < v of the train sets."""
    raw = {}
    for u in range(len(train)):
        for v in range(u + 1, len(train)):
            size = len(train[u]) * len(train[v])
            raw[u, v] = len(train[u] & train[v]) / math.sqrt(size) if size else 0.0
    return _min_max(raw)


def jaccard_raw(train):
    """{(u, v): raw Jaccard} for unordered pairs u < v."""
    raw = {}
    for u in range(len(train)):
        for v in range(u + 1, len(train)):
            union = len(train[u] | train[v])
            raw[u, v] = len(train[u] & train[v]) / union if union else 0.0
    return raw


def jaccard(train):
    """{(u, v): normalised Jaccard} for unordered pairs u < v."""
    return _min_max(jaccard_raw(train))


def genre_js_similarity(train, item_genres, genres):
    """{(u, v): 1 - JS(g_u, g_v)} with base-2 logs; a user without genres is uniform."""
    dists = []
    for items in train:
        counts = {g: 0.0 for g in genres}
        for item in items:
            for g in item_genres.get(item, ()):
                counts[g] += 1.0
        total = sum(counts.values())
        dists.append({g: (c / total if total else 1.0 / len(genres)) for g, c in counts.items()})

    def kl(p, q):
        return sum(p[g] * math.log2(p[g] / q[g]) for g in genres if p[g] > 0)

    out = {}
    for u in range(len(train)):
        for v in range(u + 1, len(train)):
            mid = {g: (dists[u][g] + dists[v][g]) / 2 for g in genres}
            js = 0.5 * kl(dists[u], mid) + 0.5 * kl(dists[v], mid)
            out[u, v] = 1.0 - js
    return out


def uf_similarity(jacc_raw, genre_sim, gamma):
    """sim_UF on the raw Jaccard, not normalised."""
    return {pair: gamma * jacc_raw[pair] + (1 - gamma) * genre_sim[pair] for pair in jacc_raw}


def sd(scores):
    mean = sum(scores) / len(scores)
    return math.sqrt(sum((x - mean) ** 2 for x in scores) / len(scores))


def gini(scores):
    x = sorted(scores)
    m, total = len(x), sum(x)
    if total == 0:
        return math.nan
    return sum((2 * (j + 1) - m - 1) * x[j] for j in range(m)) / (m * total)


def envy(lists, relevant, k=10, epsilon=0.05, utility="precision"):
    """ME (mean over ordered pairs u != v), MME, PEU; utility P@k or |L & R| / min(k, |R|)."""
    m = len(lists)

    def phi(u, ranked):
        denominator = k if utility == "precision" else min(k, len(relevant[u]))
        return len(set(ranked[:k]) & relevant[u]) / denominator if denominator else 0.0

    total, max_envy = 0.0, []
    for u in range(m):
        own, worst = phi(u, lists[u]), 0.0
        for v in range(m):
            if v != u:
                e = max(phi(u, lists[v]) - own, 0.0)
                total += e
                worst = max(worst, e)
        max_envy.append(worst)
    return {
        "ME": total / (m * (m - 1)),
        "MME": sum(max_envy) / m,
        "PEU": sum(1 for e in max_envy if e > epsilon) / m,
    }


def uf(lists, all_train, sim_uf, k=10):
    """UF with sim_uf {(u, v): s} over unordered pairs u < v, taken as it is."""
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
    total = 0.0
    for (u, v), s in sim_uf.items():
        if s >= threshold:
            d = sum(1 - item_cos(i, j) for i in lists[u][:k] for j in lists[v][:k]) / k**2
            total += s * d
    n_pairs = len(sim_uf)
    if n_pairs < 2 or total == 0:
        return math.nan
    return math.log(total) / math.log(n_pairs)


def puf(scores, sim):
    """2 / (m (m - 1)) * sum over unordered pairs of sim * |S(u) - S(v)|."""
    m = len(scores)
    total = sum(s * abs(scores[u] - scores[v]) for (u, v), s in sim.items())
    return 2 * total / (m * (m - 1))


def resampled(
    weights, lists, relevant, all_train, cos, jacc, sim_uf, k=10, epsilon=0.05, utility="precision"
):
    """All 18 measures of a bootstrap resample, on the population materialised from the
    multiplicities ``weights`` (docs/method.md#uncertainty): user u appears weights[u]
    times, each copy a distinct user; a pair made of a user and its own copy is left out;
    the similarities are the dataset's, {(u, v): value} over the original users u < v
    (``cos``, ``jacc`` normalised for PUF, ``sim_uf`` raw for UF), not recomputed."""
    origin = [u for u, w in enumerate(weights) for _ in range(w)]
    n = len(origin)
    copy_lists = [lists[u] for u in origin]
    copy_relevant = [relevant[u] for u in origin]
    eff = effectiveness(copy_lists, copy_relevant, k)
    out = {name: sum(values) / n for name, values in eff.items()}
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if origin[i] != origin[j]]

    def pair_value(sim, i, j):
        u, v = sorted((origin[i], origin[j]))
        return sim[u, v]

    for name in ("P", "NDCG"):
        out[f"SD-{name}"] = sd(eff[name])
        out[f"Gini-{name}"] = gini(eff[name])
        for label, sim in (("Cos", cos), ("Jacc", jacc)):
            total = sum(pair_value(sim, i, j) * abs(eff[name][i] - eff[name][j])
                        for i, j in pairs)  # fmt: skip
            out[f"PUF-{name}-{label}"] = total / len(pairs) if pairs else math.nan

    def phi(i, ranked):
        rel = copy_relevant[i]
        denominator = k if utility == "precision" else min(k, len(rel))
        return len(set(ranked[:k]) & rel) / denominator if denominator else 0.0

    total, max_envy = 0.0, []
    for i in range(n):
        own = phi(i, copy_lists[i])
        worst = None
        for j in range(n):
            if origin[j] != origin[i]:
                e = max(phi(i, copy_lists[j]) - own, 0.0)
                total += e
                worst = e if worst is None else max(worst, e)
        max_envy.append(worst)
    if pairs:
        out["ME"] = total / (2 * len(pairs))
        out["MME"] = sum(max_envy) / n
        out["PEU"] = sum(1 for e in max_envy if e > epsilon) / n
    else:
        out["ME"] = out["MME"] = out["PEU"] = math.nan
    copy_sim = {(i, j): pair_value(sim_uf, i, j) for i, j in pairs}
    out["UF"] = uf(copy_lists, all_train, copy_sim, k) if len(pairs) >= 2 else math.nan
    return out
