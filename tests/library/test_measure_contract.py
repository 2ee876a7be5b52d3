"""The registry's contract (userfair.measures): every declared measure is served by each
route its declaration names, and a test failure names the measure and the route.

Each route is run once on tiny inputs with everything opt-in switched on (grades, the
RCos / Vec / Genre similarities, groups, three plugin measures); its output's measure names
are compared with the declarations that claim it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from userfair import measures, plugins
from userfair.engine.warmup import tiny_inputs
from userfair.formulas import groups as user_groups
from userfair.formulas import pair_terms
from userfair.measures import base


class _Mean(plugins.UserMeasure):
    name, effectiveness, better, bounds = "Contract-P", "P", "lower", (0.0, 1.0)

    def compute(self, scores, weights):
        return float((weights * scores).sum() / weights.sum())


class _Pair(plugins.PairMeasure):
    name, effectiveness, similarity, better = "Contract-NDCG-Jacc", "NDCG", "Jacc", "lower"

    def terms(self, s_u, s_v, sim):
        return sim * np.abs(s_u - s_v)


@numba.njit
def _gap(s_u, s_v, sim):
    return sim * abs(s_u - s_v)


class _Compiled(plugins.PairMeasure):
    """A compiled term: the sampled route serves it."""

    name, effectiveness, similarity, better = "Contract-P-Cos", "P", "Cos", "lower"
    term = _gap


@pytest.fixture(scope="module")
def outputs():
    """The measure names each route produced, with every opt-in on."""
    from userfair.bootstrap import uncertainty
    from userfair.decomposition import decompose_columns
    from userfair.evaluate import evaluate
    from userfair.formulas import groups
    from userfair.opt_in import variant_uncertainty
    from userfair.workflow import experiments

    plugins.load([f"{__name__}:{c}" for c in ("_Mean", "_Pair", "_Compiled")],
                 entry_points=False)  # fmt: skip
    base_inputs = tiny_inputs(m=14, n=18, k=3)
    grades = base_inputs.relevant.multiply(2.0).tocsr()
    inputs = dataclasses.replace(
        base_inputs, grades=grades, train_grades=sp.csr_matrix(base_inputs.train * 3.0)
    )
    vectors = np.random.default_rng(0).random((14, 4))
    found = groups.groups_of(inputs, "activity:0.5")
    extra = ("rcos", "vec", "genre")
    out = {}
    for route in ("dense", "stream"):
        result = evaluate(inputs, k=3, route=route, extra_similarities=extra,
                          user_vectors=vectors, groups=found)  # fmt: skip
        out[route] = set(result) - {"seconds", "conventions", "groups"}
    weights = uncertainty.resample_weights(14, 3, seed=1)
    frame = uncertainty.bootstrap(inputs, weights, k=3, groups=found)
    opt_in = variant_uncertainty.bootstrap_variants(inputs, weights, 3, extra, vectors)
    out["bootstrap"] = set(frame.columns) | set(opt_in.columns)
    from userfair.decomposition.decompose import decompose

    shares = set(decompose_columns.SHARES)
    out["decompose"] = shares | (
        set(decompose(inputs, k=3).columns) - set(decompose_columns.COLUMNS)
    )
    try:
        from userfair import recbole

        out["recbole"] = set(recbole.metric_names().values())
    except ImportError:  # pragma: no cover - the recbole extra is part of the test env
        out["recbole"] = None
    sim = np.random.default_rng(1).random((14, 14))
    sim = (sim + sim.T) / 2
    settings = experiments.Settings(3, 0.05, 64, "cpu", "precision")
    sampled = evaluate(inputs, k=3, sample_users=0.5, seed=2)
    out["sample"] = set(sampled["estimate"]["measures"])
    out["experiments"] = set(experiments.relevance_measures(inputs.topk, inputs, sim, sim,
                                                           settings))  # fmt: skip
    yield out
    plugins.clear()


def _claims(route):
    return [m for m in measures.declared() if route in m.routes]


@pytest.mark.parametrize("route", base.ROUTES)
def test_every_route_serves_what_the_declarations_claim(outputs, route):
    produced = outputs[route]
    if produced is None:
        pytest.skip(f"route {route}: its package is not installed")
    missing = [m.name for m in _claims(route) if m.name not in produced]
    assert not missing, f"route {route} does not serve {missing}, which declare it"


@pytest.mark.parametrize("route", base.ROUTES)
def test_no_route_serves_a_measure_that_does_not_declare_it(outputs, route):
    produced = outputs[route]
    if produced is None:
        pytest.skip(f"route {route}: its package is not installed")
    declared = {m.name for m in measures.declared()}
    undeclared = sorted(name for name in produced if name in declared and route not in
                        measures.get(name).routes)  # fmt: skip
    assert not undeclared, f"route {route} serves {undeclared}: add it to their declarations"
    # the decomposition's and RecBole's own columns are measures' names or documented
    unknown = sorted(n for n in produced - declared if route in ("dense", "stream"))
    assert not unknown, f"route {route} writes {unknown}, which no declaration names"


def test_every_declaration_is_complete():
    for measure in measures.declared():
        assert measure.kind in base.KINDS, measure.name
        if measure.kind in ("mean", "statistic", "group"):
            assert measure.effectiveness, f"{measure.name}: declare the score it reads"
        if measure.kind == "pair":
            assert measure.similarity, f"{measure.name}: declare its similarity"
        assert measure.text, f"{measure.name}: one line of what it is"
        assert measure.routes, f"{measure.name}: no route serves it"


def test_the_name_tuples_are_the_papers():
    assert measures.NAMES == (
        "HR", "MRR", "P", "MAP", "R", "NDCG", "SD-P", "SD-NDCG", "Gini-P", "Gini-NDCG",
        "ME", "MME", "PEU", "UF", "PUF-P-Cos", "PUF-P-Jacc", "PUF-NDCG-Cos", "PUF-NDCG-Jacc",
    )  # fmt: skip
    assert measures.FAIR_GROUP == ("UserMAD-P", "UserMAD-NDCG")
    assert measures.OPT_IN[:3] == ("gNDCG", "SD-gNDCG", "Gini-gNDCG")
    assert len(measures.OPT_IN) == 3 + 15 - 4
    assert sorted(m.name for m in measures.BUILTINS) == sorted(measures.KNOWN)


def test_a_declaration_refuses_what_it_cannot_be():
    with pytest.raises(ValueError, match="kind"):
        base.declare("X", "ratio", "lower", "plugin", "Fair (plugins)")
    with pytest.raises(ValueError, match="similarity"):
        base.declare("X", "pair", "lower", "plugin", "Fair (plugins)")
    with pytest.raises(ValueError, match="routes"):
        base.declare("X", "statistic", "lower", "plugin", "Fair (plugins)", routes={"gpu"})
    with pytest.raises(ValueError, match="better"):
        base.declare("X", "statistic", "smaller", "plugin", "Fair (plugins)")
    with pytest.raises(ValueError, match="group measure declares its statistic"):
        base.declare("X", "group", "lower", "groups", "Fair (groups)", effectiveness="P")
    with pytest.raises(ValueError, match="per-user score"):
        base.declare("X", "group", "lower", "groups", "Fair (groups)", statistic="MAD")
    with pytest.raises(ValueError, match="only a statistic or a group measure"):
        base.declare("X", "envy", "lower", "envy", "Fair (existing)", reduction="max",
                     statistic="MAD")  # fmt: skip
    with pytest.raises(ValueError, match="no statistic 'median' in"):
        user_groups.of(base.declare("X", "group", "lower", "groups", "Fair (groups)",
                                    effectiveness="P", statistic="median"))  # fmt: skip


# --- a built-in added by one declaration reaches every route ----------------------------
# The way docs/architecture.md says: a statistic (CV-P: its formulas under their name in
# userfair.formulas.spread.STATISTICS, one declaration appended to
# userfair.measures.spread.MEASURES), an effectiveness (F1: its formula in
# userfair.formulas.effectiveness.PER_USER, one declaration appended to
# userfair.measures.effectiveness.MEASURES) and two pair measures (their compiled terms in
# userfair.formulas.pair_terms.TERMS, their declarations appended to
# userfair.measures.puf.MEASURES): PUF2-P-Cos, the squared similarity times the gap, and
# PUFg-NDCG-Jacc, PUF's own term on the generic engine, which must equal PUF-NDCG-Jacc of
# the fused kernels on every route; an envy measure (MEU: its reduction in
# userfair.formulas.envy_reductions.REDUCTIONS) and a group measure (UserGap-NDCG: its
# statistic of the groups' means in userfair.formulas.groups.GROUP_STATISTICS). The
# declarations join by an import hook that runs the family module and then appends, before
# the registry reads it; nothing else is edited, and no route names any of them. One
# process for all (its imports are most of its time).
ONE_DECLARATION = r"""
import importlib.abc, importlib.machinery, json, sys
import numba
import numpy as np

ADD = {
    "userfair.measures.spread": lambda module: (module.declare(
        "CV-P", "statistic", "lower", "spread", "Fair (existing)", effectiveness="P",
        default=True, bounds=(0.0, float("inf")), statistic="CV",
        routes=module._EXACT - {"experiments"}, text="coefficient of variation of P"),),
    "userfair.measures.effectiveness": lambda module: (module._eff(
        "F1", "harmonic mean of P and R at k"),),
    "userfair.measures.envy": lambda module: (module.declare(
        "MEU", "envy", "lower", "envy", "Fair (existing)", default=True,
        bounds=(0.0, float("inf")), reduction="per-user",
        text="mean over users of their summed envy"),),
    "userfair.measures.groups": lambda module: (module.declare(
        "UserGap-NDCG", "group", "lower", "groups", "Fair (groups)", effectiveness="NDCG",
        statistic="range", routes={"dense", "stream", "bootstrap", "recbole"},
        text="largest minus smallest group mean NDCG"),),
    "userfair.measures.uf": lambda module: tuple(module.declare(
        f"UF-{label}", "uf", "lower", "uf", "Fair (existing)", similarity=label, default=True,
        routes=set(module.ROUTES) - {"sample"}, bounds=(-float("inf"), 1.0),
        text=f"UF's construction over the raw {label}") for label in ("Jacc", "Cos")),
    "userfair.measures.puf": lambda module: (
        module.declare("PUF2-P-Cos", "pair", "lower", "puf", "Fair (PUF)", effectiveness="P",
                       similarity="Cos", default=True, term="PUF2", text="PUF, sim squared"),
        module.declare("PUFg-NDCG-Jacc", "pair", "lower", "puf", "Fair (PUF)",
                       effectiveness="NDCG", similarity="Jacc", default=True, term="PUF",
                       text="PUF's term on the generic engine"),
    ),
}
PAIRS = ("PUF2-P-Cos", "PUFg-NDCG-Jacc", "PUF-NDCG-Jacc")
UFS = ("UF-Jacc", "UF-Cos", "UF")

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in ADD:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.MEASURES += ADD[name](module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Hook())
from userfair.formulas import effectiveness, spread
spread.STATISTICS["CV"] = spread.Statistic(
    lambda x: spread.sd(x) / np.mean(x),
    lambda x, d: spread.weighted_sd(x, d) / (d.w @ x / d.total),
    lambda x: {"": spread.sd_share(x) / np.mean(x)},
)
p, r = effectiveness.PER_USER["P"], effectiveness.PER_USER["R"]
effectiveness.PER_USER["F1"] = lambda h: np.where(
    p(h) + r(h) > 0, 2 * p(h) * r(h) / (p(h) + r(h)), 0.0)
from userfair.formulas import envy_reductions

envy_reductions.REDUCTIONS["per-user"] = envy_reductions.Reduction(
    "envy", "users", lambda rows: {"": (rows.envies + rows.envied) / (2.0 * rows.m)})
from userfair.formulas import groups as user_groups

def gap(means):  # (G,) or (B, G), NaN for a group not drawn
    rows = np.atleast_2d(np.asarray(means, dtype=np.float64))
    finite = np.isfinite(rows)
    high = np.where(finite, rows, -np.inf).max(axis=1)
    low = np.where(finite, rows, np.inf).min(axis=1)
    out = np.where(finite.sum(axis=1) >= 2, high - low, np.nan)
    return float(out[0]) if np.ndim(means) == 1 else out

user_groups.GROUP_STATISTICS["range"] = gap
from userfair.formulas import groups as user_groups
from userfair.formulas import pair_terms

@numba.njit
def squared(s_u, s_v, sim):
    return sim * sim * abs(s_u - s_v)

pair_terms.TERMS["PUF2"] = pair_terms.PairTerm(squared, zero_at_zero=True)
from userfair import measures
from userfair.bootstrap import uncertainty
from userfair.decomposition.decompose import decompose
from userfair.engine.warmup import tiny_inputs
from userfair.evaluate import evaluate
from userfair.workflow import experiments

from userfair import recbole_measures

inputs = tiny_inputs(m=25, n=30, k=3)
NEW = ("CV-P", "F1", "MEU", "ME") + PAIRS + UFS
GROUPED = ("UserGap-NDCG", "UserMAD-NDCG")
labels = [("a", "b", "c")[i % 3] for i in range(25)]
grouped = user_groups.from_table(inputs.users, inputs.users, labels, "file:abc", "abc")
out = {"names": list(measures.NAMES), "group_names": list(measures.FAIR_GROUP), "labels": labels}
for route in ("dense", "stream"):
    result = evaluate(inputs, k=3, route=route, groups=grouped)
    out[route] = {name: result[name] for name in NEW + GROUPED}
out["recbole"] = recbole_measures.measures(inputs, 3, list(GROUPED + UFS), groups=grouped)
whole = evaluate(inputs, k=3, sample_users=1.0, seed=2)
sampled = whole["estimate"]["measures"]
out["sample"] = {name: sampled[name] for name in PAIRS[:2] + ("MEU",)}
out["sample_exact"] = {name: whole[name] for name in UFS[:2]}
out["sampled_names"] = sorted(sampled)
weights = uncertainty.resample_weights(25, 4, seed=1)
frame = uncertainty.bootstrap(inputs, weights, k=3, groups=grouped)
out["bootstrap"] = {name: frame[name].tolist() for name in NEW + GROUPED}
out["weights"] = weights.tolist()
shares = decompose(inputs, k=3)
out["decompose"] = {name: float(shares[name].sum()) for name in ("CV-P", "MEU") + PAIRS[:2] + UFS}
sim = np.random.default_rng(1).random((25, 25))
settings = experiments.Settings(3, 0.05, 64, "cpu", "precision")
found = experiments.relevance_measures(inputs.topk, inputs, (sim + sim.T) / 2, sim, settings)
out["experiments"] = {
    name: found[name] for name in ("PUFg-NDCG-Jacc", "PUF-NDCG-Jacc", "MEU", "ME") + UFS}
per_user = effectiveness.per_user(inputs.topk, inputs.relevant, 3)
for name in ("P", "R", "NDCG"):
    out[name] = per_user[name].tolist()
out["train"] = inputs.train_of_evaluated().toarray().tolist()
out["train_all"] = inputs.train.toarray().tolist()
out["topk"], out["relevant"] = inputs.topk.tolist(), inputs.relevant.toarray().tolist()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def one_declaration():
    proc = subprocess.run(
        [sys.executable, "-c", ONE_DECLARATION], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _sd(x):
    return float(np.sqrt(np.mean((np.asarray(x) - np.mean(x)) ** 2)))


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_a_statistic_added_by_one_declaration_reaches_every_route(one_declaration):
    out = one_declaration
    names = out["names"]  # one of every measures file's, after the other spread measures
    assert names[names.index("Gini-NDCG") + 1] == "CV-P"
    p = np.array(out["P"])
    expected = _sd(p) / p.mean()
    for route in ("dense", "stream"):
        assert out[route]["CV-P"] == pytest.approx(expected, rel=1e-12), route
    assert out["decompose"]["CV-P"] == pytest.approx(expected, rel=1e-12)  # shares sum to it
    for row, value in zip(out["weights"], out["bootstrap"]["CV-P"]):
        drawn = np.repeat(p, row)  # the resample's users, each as often as drawn
        assert value == pytest.approx(_sd(drawn) / drawn.mean(), rel=1e-12)


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_an_effectiveness_added_by_one_declaration_reaches_every_route(one_declaration):
    out = one_declaration
    assert out["names"][: len(measures.EFF) + 1] == [*measures.EFF, "F1"]
    f1 = [2 * p * r / (p + r) if p + r else 0.0 for p, r in zip(out["P"], out["R"])]
    for route in ("dense", "stream"):
        assert out[route]["F1"] == pytest.approx(np.mean(f1), rel=1e-12), route
    for row, value in zip(out["weights"], out["bootstrap"]["F1"]):
        assert value == pytest.approx(np.dot(row, f1) / sum(row), rel=1e-12)


def _raw_similarity(a: set, b: set, kind: str) -> float:
    """The raw cosine or Jaccard of two users' train item sets (0 for an empty one)."""
    shared = len(a & b)
    if kind == "Cos":
        return shared / np.sqrt(len(a) * len(b)) if a and b else 0.0
    return shared / len(a | b) if a | b else 0.0


def _pair_loop(scores, train, kind, term, weights=None):
    """A pair measure from its formula: the mean over the unordered pairs (of distinct
    copies of distinct users, with bootstrap ``weights``) of term(S_u, S_v, sim), sim the
    raw cosine or Jaccard of the train rows min-max normalised over the pairs."""
    rows = [set(np.flatnonzero(row)) for row in np.asarray(train)]
    m = len(rows)
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)

    def raw(a, b):
        return _raw_similarity(a, b, kind)

    pairs = [(u, v) for u in range(m) for v in range(u + 1, m)]
    values = [raw(rows[u], rows[v]) for u, v in pairs]
    lo, hi = min(values), max(values)
    total = count = 0.0
    for (u, v), value in zip(pairs, values):
        sim = (value - lo) / (hi - lo) if hi > lo else 0.0
        total += w[u] * w[v] * term(scores[u], scores[v], sim)
        count += w[u] * w[v]
    return total / count


def _group_means(scores, labels, weights=None):
    """Each group's (weighted) mean score, by a loop over the users; NaN for a group with
    no weight."""
    w = np.ones(len(scores)) if weights is None else np.asarray(weights, dtype=float)
    means = []
    for group in sorted(set(labels)):
        mass = sum(w[u] for u in range(len(scores)) if labels[u] == group)
        total = sum(w[u] * scores[u] for u in range(len(scores)) if labels[u] == group)
        means.append(total / mass if mass else np.nan)
    return [m for m in means if not np.isnan(m)]


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_a_group_measure_added_by_one_declaration_reaches_every_route(one_declaration):
    """UserGap-NDCG, the largest minus the smallest group mean NDCG: its statistic of the
    groups' means under its name in GROUP_STATISTICS and its declaration; no route names
    it. It and UserMAD-NDCG equal loops over three groups on every route it declares."""
    out = one_declaration
    assert out["group_names"] == ["UserMAD-P", "UserMAD-NDCG", "UserGap-NDCG"]
    ndcg, labels = np.array(out["NDCG"]), out["labels"]

    def expected(weights=None):
        means = _group_means(ndcg, labels, weights)
        pairs = [abs(a - b) for i, a in enumerate(means) for b in means[i + 1 :]]
        return {
            "UserGap-NDCG": max(means) - min(means) if len(means) > 1 else np.nan,
            "UserMAD-NDCG": float(np.mean(pairs)) if pairs else np.nan,
        }

    whole = expected()
    assert whole["UserGap-NDCG"] > whole["UserMAD-NDCG"] > 0  # three groups: they differ
    for route in ("dense", "stream", "recbole"):
        for name, value in whole.items():
            assert out[route][name] == pytest.approx(value, rel=1e-12), (name, route)
    for row, *got in zip(out["weights"], *(out["bootstrap"][n] for n in whole)):
        for name, value in zip(whole, got):
            assert value == pytest.approx(expected(row)[name], rel=1e-12, nan_ok=True), name


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_pair_measures_added_by_one_declaration_reach_every_route(one_declaration):
    out = one_declaration
    assert out["names"][-2:] == ["PUF2-P-Cos", "PUFg-NDCG-Jacc"]  # one of every measures file
    p, ndcg = np.array(out["P"]), np.array(out["NDCG"])
    expected = {
        "PUF2-P-Cos": (p, "Cos", lambda a, b, sim: sim * sim * abs(a - b)),
        "PUFg-NDCG-Jacc": (ndcg, "Jacc", lambda a, b, sim: sim * abs(a - b)),
    }
    for name, (scores, kind, term) in expected.items():
        value = _pair_loop(scores, out["train"], kind, term)
        for route in ("dense", "stream"):
            assert out[route][name] == pytest.approx(value, rel=1e-12), (name, route)
        assert out["decompose"][name] == pytest.approx(value, rel=1e-12), name
        # the whole sample is the exact value, with no sampling error
        assert out["sample"][name]["value"] == pytest.approx(value, rel=1e-12), name
        assert out["sample"][name]["se"] == 0.0, name
        for row, got in zip(out["weights"], out["bootstrap"][name]):
            loop = _pair_loop(scores, out["train"], kind, term, row)
            assert got == pytest.approx(loop, rel=1e-12), (name, row)


def _envy_loop(topk, relevant, weights=None):
    """MEU from its formula: sum over ordered pairs of distinct copies of
    envy(u, v) = max(|L_v & R_u| / k - |L_u & R_u| / k, 0), over the users' copies."""
    m, k = len(topk), len(topk[0])
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)
    relevant = [set(np.flatnonzero(row)) for row in np.asarray(relevant)]
    total = 0.0
    for u in range(m):
        own = len(set(topk[u]) & relevant[u]) / k
        for v in range(m):
            if v != u:
                total += w[u] * w[v] * max(len(set(topk[v]) & relevant[u]) / k - own, 0.0)
    return total / w.sum()


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_an_envy_measure_added_by_one_declaration_reaches_every_route(one_declaration):
    """MEU, the mean over users of their summed envy: its reduction of the envy rows'
    totals (REDUCTIONS["per-user"]) and its declaration; no route names it."""
    out = one_declaration
    names = out["names"]
    assert names[names.index("PEU") + 1] == "MEU"
    expected = _envy_loop(out["topk"], out["relevant"])
    assert expected > 0  # the tiny lists leave someone envious
    for route in ("dense", "stream", "experiments"):
        assert out[route]["MEU"] == pytest.approx(expected, rel=1e-12), route
        # and ME, the built-in of the same rows: MEU = (m - 1) ME
        assert out[route]["MEU"] == pytest.approx(24 * out[route]["ME"], rel=1e-12), route
    assert out["decompose"]["MEU"] == pytest.approx(expected, rel=1e-12)  # shares sum to it
    assert out["sample"]["MEU"]["value"] == pytest.approx(expected, rel=1e-12)
    assert out["sample"]["MEU"]["se"] == 0.0
    for row, got in zip(out["weights"], out["bootstrap"]["MEU"]):
        loop = _envy_loop(out["topk"], out["relevant"], row)
        assert got == pytest.approx(loop, rel=1e-12), row


def _uf_loop(train, train_all, topk, kind, weights=None):
    """The UF construction from its formula over the raw cosine or Jaccard of the train
    rows: the pairs (of distinct copies of distinct users, with bootstrap ``weights``) with
    s >= mean + SD of s, each adding w_u w_v s d_L(u, v) with d_L the mean over i in L_u,
    j in L_v of 1 - cos(x_i, x_j) (x: every user's binary train column of the item; an item
    nobody trained on has cosine 0 to all); log of the sum over log of the pairs."""
    rows = [set(np.flatnonzero(row)) for row in np.asarray(train)]
    columns = (np.asarray(train_all) > 0).astype(float)
    norms = np.sqrt(columns.sum(axis=0))
    unit = columns / np.where(norms > 0, norms, 1.0)
    item_cos = unit.T @ unit
    m, k = len(rows), len(topk[0])
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float)

    def raw(a, b):
        return _raw_similarity(a, b, kind)

    pairs = [(u, v) for u in range(m) for v in range(u + 1, m) if w[u] * w[v] > 0]
    mass = sum(w[u] * w[v] for u, v in pairs)
    if mass < 2:
        return np.nan
    sims = {(u, v): raw(rows[u], rows[v]) for u, v in pairs}
    mean = sum(w[u] * w[v] * sims[u, v] for u, v in pairs) / mass
    sd = np.sqrt(sum(w[u] * w[v] * (sims[u, v] - mean) ** 2 for u, v in pairs) / mass)
    total = 0.0
    for u, v in pairs:
        if sims[u, v] >= mean + sd:
            d_l = sum(1 - item_cos[i, j] for i in topk[u] for j in topk[v]) / k**2
            total += w[u] * w[v] * sims[u, v] * d_l
    return np.log(total) / np.log(mass) if total > 0 else np.nan


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_a_uf_variant_added_by_one_declaration_reaches_every_route(one_declaration):
    """UF-Cos and UF-Jacc: the UF construction over another raw similarity, each one
    declaration of the uf kind (no kernel, no route names them); the generic UF engine
    serves them. Both equal the loop on every route; UF-Jacc equals the fused UF (gamma 1)."""
    out = one_declaration
    names = out["names"]
    assert names[names.index("UF") + 1 : names.index("UF") + 3] == ["UF-Jacc", "UF-Cos"]
    args = (out["train"], out["train_all"], out["topk"])
    for name, kind in (("UF-Jacc", "Jacc"), ("UF-Cos", "Cos")):
        value = _uf_loop(*args, kind)
        assert np.isfinite(value), name
        for route in ("dense", "stream", "recbole", "decompose", "experiments", "sample_exact"):
            assert out[route][name] == pytest.approx(value, rel=1e-12), (name, route)
        for row, got in zip(out["weights"], out["bootstrap"][name]):
            loop = _uf_loop(*args, kind, row)
            assert got == pytest.approx(loop, rel=1e-12, nan_ok=True), (name, row)
    assert "UF-Cos" not in out["sampled_names"]  # no sampled route: computed exact
    # (the experiment above gives UF a random similarity; UF-Jacc reads its own Jaccard)
    for route in ("dense", "stream", "recbole", "decompose"):
        assert out[route]["UF-Jacc"] == pytest.approx(out[route]["UF"], rel=1e-12), route
    np.testing.assert_allclose(out["bootstrap"]["UF-Jacc"], out["bootstrap"]["UF"], rtol=1e-12)
    assert out["dense"]["UF-Cos"] != pytest.approx(out["dense"]["UF"], rel=1e-6)


def test_a_uf_declaration_names_its_similarity():
    with pytest.raises(ValueError, match="raw similarity it reads"):
        base.declare("X", "uf", "lower", "uf", "Fair (existing)")
    with pytest.raises(ValueError, match="only a built-in pair or UF measure is fused"):
        base.declare("X", "statistic", "lower", "spread", "Fair (existing)",
                     effectiveness="P", statistic="SD", fused=True)  # fmt: skip
    assert measures.generic(["UF"]) == ()  # the paper's UF: its fused kernels


def test_an_envy_declaration_names_a_reduction():
    with pytest.raises(ValueError, match="reduction"):
        base.declare("X", "envy", "lower", "envy", "Fair (existing)")
    with pytest.raises(ValueError, match="only an envy measure"):
        base.declare("X", "statistic", "lower", "spread", "Fair (existing)",
                     effectiveness="P", statistic="SD", reduction="mean")  # fmt: skip


@pytest.mark.slow  # one_declaration: a fresh Python process
def test_the_generic_engine_on_pufs_term_equals_pufs_fused_kernels(one_declaration):
    out = one_declaration
    for route in ("dense", "stream", "experiments"):
        assert out[route]["PUFg-NDCG-Jacc"] == pytest.approx(
            out[route]["PUF-NDCG-Jacc"], rel=1e-12
        ), route
    np.testing.assert_allclose(
        out["bootstrap"]["PUFg-NDCG-Jacc"], out["bootstrap"]["PUF-NDCG-Jacc"], rtol=1e-12
    )


def test_a_built_in_pair_measure_declares_a_term_it_can_be_served_by():
    with pytest.raises(ValueError, match="declares its term"):
        base.declare("X-P-Cos", "pair", "lower", "other", "Fair (PUF)", similarity="Cos",
                     default=True)  # fmt: skip
    with pytest.raises(ValueError, match="default=True"):
        base.declare("X-P-Cos", "pair", "lower", "puf", "Fair (PUF)", similarity="Cos",
                     term="PUF")  # fmt: skip
    with pytest.raises(ValueError, match="only a built-in pair measure"):
        base.declare("X-P", "statistic", "lower", "spread", "Fair (existing)", statistic="SD",
                     term="PUF", default=True)  # fmt: skip


@pytest.mark.parametrize("name", sorted(pair_terms.TERMS))
def test_every_built_in_pair_term_is_symmetric_and_its_zero_flag_true(name):
    found = pair_terms.TERMS[name]
    rng = np.random.default_rng(5)
    s_u, s_v, sim = rng.random(300), rng.random(300), rng.random(300)
    for a, b, x in zip(s_u, s_v, sim):
        assert found.term(a, b, x) == pytest.approx(found.term(b, a, x), rel=1e-12)
        if found.zero_at_zero:
            assert found.term(a, b, 0.0) == 0.0
