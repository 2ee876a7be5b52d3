"""The registry's contract (userfair.measures): every declared measure is served by each
route its declaration names, and a test failure names the measure and the route.

Each route is run once on tiny inputs with everything opt-in switched on (grades, the
RCos / Vec / Genre similarities, groups, three plugin measures); its output's measure names
are compared with the declarations that claim it."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from userfair import measures, plugins
from userfair.engine.warmup import tiny_inputs
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
