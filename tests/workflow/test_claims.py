"""The paper's claims as checks (userfair.workflow.claims, docs/analyses.md#claims): each
check on synthetic runs made to hold and made to fail, the tolerances never passing a
check on its own failing input, an interval that straddles a threshold undecided, and a
run that lacks what a check needs "not testable" with the reason."""

import numpy as np
import pandas as pd
import pytest

from userfair import measures
from userfair.workflow import claims, properties, verdicts
from userfair.workflow.properties import FLAT, DatasetRun

MODELS = ["A", "B", "C", "D", "E"]
RISING = [0.1, 0.2, 0.3, 0.4, 0.5]  # one value per model
# tau of this order against RISING (both oriented the same way) is 0.2: "unrelated"
SHUFFLED = [0.3, 0.1, 0.5, 0.2, 0.4]


def make_run(values=None, *, draws=0, noise=0.0, seconds=None, experiments=True, **tables):
    """A run of five models: every measure of the registry with ``values`` (measure -> one
    value per model; the others a fixed shuffle, so no claim holds by accident), ``draws``
    resamples of point + N(0, noise), and the experiment tables given (or a neutral one)."""
    rng = np.random.default_rng(7)
    base = {name: [v * (1 + i / 50) for v in SHUFFLED] for i, name in enumerate(measures.NAMES)}
    base.update(values or {})
    points = {m: {name: float(base[name][i]) for name in base} for i, m in enumerate(MODELS)}
    frames = None
    if draws:
        frames = {
            m: pd.DataFrame({n: points[m][n] + rng.normal(0, noise, draws) for n in base})
            for m in MODELS
        }
    times = seconds or {n: 1.0 for n in base}
    run = DatasetRun(
        "toy", points, seconds={m: dict(times) for m in MODELS}, users=100, draws=frames
    )
    if experiments:
        run.relevance = tables.get("relevance", relevance_table({}))
        run.similarity = tables.get("similarity", similarity_table({}))
        run.extreme = tables.get("extreme", extreme_table(0.01, 0.8))
    return run


def verdict(run, claim_id):
    table = properties.measure_properties(run)
    taus = properties.tau_table(run, run.measure_names())
    rows = claims.check(run, table, taus).set_index("claim")
    return rows.at[claim_id, "verdict"], rows.at[claim_id, "evidence"]


SHARES = np.linspace(0, 1, 11)
CURVES = {
    "inverted U": 0.4 * (1 - (2 * SHARES - 1) ** 2),
    "rising": 0.5 * SHARES,
    "flat": np.full(11, 0.3),
}
PAPER_SHAPES = {
    "PUF-P-Jacc": "inverted U", "PUF-NDCG-Jacc": "inverted U", "SD-P": "inverted U",
    "SD-NDCG": "inverted U", "Gini-P": "rising", "Gini-NDCG": "rising", "PEU": "rising",
    "ME": "flat", "UF": "flat", "MME": "rising",
}  # fmt: skip


def relevance_table(changes):
    curves = {name: CURVES[shape] for name, shape in PAPER_SHAPES.items()}
    curves.update(changes)
    rows = [(s, name, float(y[i])) for name, y in curves.items() for i, s in enumerate(SHARES)]
    return pd.DataFrame(rows, columns=["share", "measure", "value"])


SKEW = np.array([6.0, 2.0, 0.6, 0.0, -0.3, -0.8, -2.0])


def similarity_table(changes):
    curves = {
        "PUF-P": 0.3 - 0.03 * SKEW, "PUF-NDCG": 0.35 - 0.03 * SKEW, "UF": 0.7 - 0.02 * SKEW,
        "SD-P": np.full(7, 0.2), "SD-NDCG": np.full(7, 0.25),
    }  # fmt: skip
    curves.update(changes)
    rows = [
        ("weibull", 1.0, float(s), name, float(y[i]))
        for name, y in curves.items()
        for i, s in enumerate(SKEW)
    ]
    rows += [("observed", np.nan, 1.0, name, 0.5) for name in curves]  # never read as a trend
    return pd.DataFrame(rows, columns=["distribution", "shape", "skewness", "measure", "value"])


def extreme_table(fair_puf, fair_uf, uf_step=0.0):
    rows = []
    for i, share in enumerate(SHARES):
        for score in ("P", "NDCG"):
            rows += [
                (share, "MostFair", score, "PUF", fair_puf),
                (share, "MostFair", score, "UF", fair_uf + uf_step * i),
                (share, "MostUnfair", score, "PUF", 0.15),
                (share, "MostUnfair", score, "UF", fair_uf),
            ]
    return pd.DataFrame(rows, columns=["share", "assignment", "score", "measure", "value"])


FAIR_OTHERS = [n for n in measures.FAIR if n != claims.PAPER_MME]


def spread_values(span, centre=0.5):
    return [centre + span * (v - 0.1) / 0.4 for v in SHUFFLED]


# --- one test per claim: made to hold, made to fail -------------------------------------


def test_mme_range_smallest():
    small = {claims.PAPER_MME: spread_values(0.001, 0.01)}
    others = {n: spread_values(0.05) for n in FAIR_OTHERS}
    assert verdict(make_run({**others, **small}), "mme-range-smallest")[0] == claims.HOLDS
    # over the 5.2e-3 threshold, still the smallest
    wide = {claims.PAPER_MME: spread_values(0.006, 0.01)}
    assert verdict(make_run({**others, **wide}), "mme-range-smallest")[0] == claims.FAILS
    # below the threshold, but another Fair measure narrower
    narrower = {**others, **small, "SD-P": spread_values(0.0005)}
    got, evidence = verdict(make_run(narrower), "mme-range-smallest")
    assert got == claims.FAILS and "next smallest SD-P" in evidence
    # an interval that straddles the threshold: undecided, decided with tight draws
    near = {**others, claims.PAPER_MME: spread_values(0.005, 0.01)}
    assert verdict(make_run(near, draws=100, noise=3e-4), "mme-range-smallest")[0] == (
        claims.UNDECIDED
    )
    assert verdict(make_run(near, draws=100, noise=1e-6), "mme-range-smallest")[0] == (claims.HOLDS)


def test_gini_peu_widest():
    wide = {n: spread_values(0.5) for n in ("Gini-P", "Gini-NDCG", "PEU")}
    rest = {n: spread_values(0.1) for n in measures.FAIR if n not in wide}
    assert verdict(make_run({**rest, **wide}), "gini-peu-widest")[0] == claims.HOLDS
    got, evidence = verdict(make_run({**rest, **wide, "UF": spread_values(0.6)}), "gini-peu-widest")
    assert got == claims.FAILS and "widest other UF" in evidence


def oriented_like(order, name):
    """Values of ``name`` whose model ordering (best first) is that of ``order``'s values
    for a higher-is-better measure."""
    return list(order) if measures.higher_is_better(name) else [1 - v for v in order]


def with_eff(order):
    return {e: list(order) for e in measures.EFF}


def test_puf_disagrees_eff():
    reverse = RISING[::-1]
    disagree = {p: oriented_like(reverse, p) for p in measures.FAIR_PUF}
    assert verdict(make_run({**with_eff(RISING), **disagree}), "puf-disagrees-eff")[0] == (
        claims.HOLDS
    )
    agree = {p: oriented_like(RISING, p) for p in measures.FAIR_PUF}
    assert verdict(make_run({**with_eff(RISING), **agree}), "puf-disagrees-eff")[0] == (
        claims.FAILS
    )
    # tau = -0.6, just short of the -0.71 threshold: no tolerance lets it pass
    close = [0.4, 0.5, 0.2, 0.3, 0.1]
    nearly = {p: oriented_like(close, p) for p in measures.FAIR_PUF}
    got, evidence = verdict(make_run({**with_eff(RISING), **nearly}), "puf-disagrees-eff")
    assert got == claims.FAILS and "-0.6" in evidence


def test_no_fair_equivalent_eff():
    unrelated = {f: oriented_like(SHUFFLED, f) for f in measures.FAIR}
    assert verdict(make_run({**with_eff(RISING), **unrelated}), "no-fair-equivalent-eff")[0] == (
        claims.HOLDS
    )
    equivalent = {**unrelated, "Gini-P": oriented_like(RISING, "Gini-P")}
    got, evidence = verdict(make_run({**with_eff(RISING), **equivalent}), "no-fair-equivalent-eff")
    assert got == claims.FAILS and "Gini-P" in evidence
    opposite = {**unrelated, "SD-P": oriented_like(RISING[::-1], "SD-P")}  # |tau| = 1 too
    assert verdict(make_run({**with_eff(RISING), **opposite}), "no-fair-equivalent-eff")[0] == (
        claims.FAILS
    )


def test_sd_aligns_puf():
    puf = {p: list(RISING) for p in measures.FAIR_PUF}
    sd = {s: list(RISING) for s in ("SD-P", "SD-NDCG")}
    rest = {n: list(SHUFFLED) for n in measures.FAIR_EXISTING if n not in sd}
    assert verdict(make_run({**puf, **sd, **rest}), "sd-aligns-puf")[0] == claims.HOLDS
    also = {**puf, **sd, **rest, "Gini-P": list(RISING)}
    assert verdict(make_run(also), "sd-aligns-puf")[0] == claims.FAILS
    apart = {**puf, **rest, "SD-P": list(SHUFFLED), "SD-NDCG": list(RISING)}
    assert verdict(make_run(apart), "sd-aligns-puf")[0] == claims.FAILS


def test_uf_puf_differ_with_and_without_draws():
    uf_picks_a, b_fairest = [0.1, 0.5, 0.5, 0.5, 0.5], [0.5, 0.1, 0.5, 0.5, 0.5]
    differ = {"UF": uf_picks_a, **{p: b_fairest for p in measures.FAIR_PUF}}
    same = {"UF": uf_picks_a, **{p: uf_picks_a for p in measures.FAIR_PUF}}
    assert verdict(make_run(differ), "uf-puf-differ")[0] == claims.HOLDS
    assert verdict(make_run(same), "uf-puf-differ")[0] == claims.FAILS
    assert verdict(make_run(differ, draws=100, noise=0.001), "uf-puf-differ")[0] == claims.HOLDS
    assert verdict(make_run(same, draws=100, noise=0.001), "uf-puf-differ")[0] == claims.FAILS
    # UF's pick unsettled in the draws: undecided
    close = {**differ, "UF": [0.10, 0.101, 0.5, 0.5, 0.5]}
    assert verdict(make_run(close, draws=200, noise=0.01), "uf-puf-differ")[0] == claims.UNDECIDED


@pytest.mark.parametrize(
    ("claim", "change"),
    [
        ("relevance-inverted-u", {"SD-P": CURVES["rising"]}),
        ("relevance-inverted-u", {"PUF-P-Jacc": CURVES["flat"]}),
        ("relevance-rise", {"Gini-P": CURVES["flat"]}),
        ("relevance-rise", {"PEU": CURVES["inverted U"]}),
        ("relevance-flat", {"UF": CURVES["rising"]}),
        ("relevance-flat", {claims.PAPER_MME: CURVES["inverted U"]}),
        # just beyond the tolerance: a flat claim on a curve that moves by 1.5 x FLAT fails
        ("relevance-flat", {"UF": 0.3 + 1.5 * FLAT * SHARES}),
        # an inverted U whose ends sit less than FLAT below its peak is not one
        ("relevance-inverted-u", {"SD-NDCG": 0.3 + 0.9 * FLAT * (1 - (2 * SHARES - 1) ** 2)}),
    ],
)
def test_relevance_claims(claim, change):
    assert verdict(make_run(), claim)[0] == claims.HOLDS
    got, evidence = verdict(make_run(relevance=relevance_table(change)), claim)
    assert got == claims.FAILS, evidence


@pytest.mark.parametrize(
    "change",
    [
        {"SD-P": 0.2 + 0.02 * SKEW},  # SD moves with the similarity
        {"UF": 0.7 + 0.02 * SKEW},  # UF rises
        {"PUF-NDCG": 0.35 - 0.002 * SKEW},  # PUF's fall within the tolerance: flat
    ],
)
def test_skew_falls(change):
    assert verdict(make_run(), "skew-falls")[0] == claims.HOLDS
    got, evidence = verdict(make_run(similarity=similarity_table(change)), "skew-falls")
    assert got == claims.FAILS, evidence


def test_extreme_mostfair():
    assert verdict(make_run(), "extreme-mostfair")[0] == claims.HOLDS
    assert verdict(make_run(extreme=extreme_table(0.1, 0.8)), "extreme-mostfair")[0] == (
        claims.FAILS
    )
    assert verdict(make_run(extreme=extreme_table(0.01, 0.3)), "extreme-mostfair")[0] == (
        claims.FAILS
    )
    moving = extreme_table(0.01, 0.6, uf_step=FLAT / 5)  # UF rises 2 x FLAT over the steps
    assert verdict(make_run(extreme=moving), "extreme-mostfair")[0] == claims.FAILS


def test_puf_cheaper():
    fast = {n: (0.1 if n in measures.FAIR_PUF else 5.0) for n in measures.NAMES}
    assert verdict(make_run(seconds=fast), "puf-cheaper")[0] == claims.HOLDS
    slow = {**fast, "PUF-P-Cos": 6.0}
    assert verdict(make_run(seconds=slow), "puf-cheaper")[0] == claims.FAILS
    equal = {**fast, "PUF-P-Cos": 5.0}  # as slow as the fastest of the others: not less
    assert verdict(make_run(seconds=equal), "puf-cheaper")[0] == claims.FAILS


def test_mixed_models_make_the_cost_claim_undecided():
    run = make_run()
    for i, model in enumerate(MODELS):
        run.seconds[model] = {n: 1.0 for n in measures.NAMES}
        run.seconds[model].update({p: (0.1 if i % 2 else 9.0) for p in measures.FAIR_PUF})
    assert verdict(run, "puf-cheaper")[0] == claims.UNDECIDED


# --- what a run lacks -------------------------------------------------------------------


def test_one_model_and_no_experiments_are_not_testable_with_the_reason():
    run = make_run(experiments=False)
    run.points = {"A": run.points["A"]}
    run.seconds = {"A": run.seconds["A"]}
    table = properties.measure_properties(run)
    rows = claims.check(run, table, properties.tau_table(run, run.measure_names()))
    rows = rows.set_index("claim")
    assert set(rows["verdict"]) <= {claims.UNTESTABLE, claims.HOLDS, claims.FAILS}
    for claim in ("mme-range-smallest", "puf-disagrees-eff", "uf-puf-differ"):
        assert rows.at[claim, "verdict"] == claims.UNTESTABLE
        assert rows.at[claim, "evidence"].startswith("not testable here: 1 model")
    assert rows.at["relevance-rise", "evidence"] == "not testable here: no relevance experiment"
    assert rows.at["skew-falls", "verdict"] == claims.UNTESTABLE


def test_every_claim_of_the_issue_is_checked_once_with_its_threshold_stated():
    ids = [c.id for c in claims.CLAIMS]
    assert ids == list(dict.fromkeys(ids))
    assert set(ids) >= {
        "mme-range-smallest", "gini-peu-widest", "puf-disagrees-eff", "no-fair-equivalent-eff",
        "sd-aligns-puf", "uf-puf-differ", "relevance-inverted-u", "relevance-rise",
        "relevance-flat", "skew-falls", "extreme-mostfair", "puf-cheaper",
    }  # fmt: skip
    rows = claims.check(make_run(), *_props(make_run()))
    assert list(rows.columns) == claims.COLUMNS and len(rows) == len(ids)
    assert rows["threshold"].str.len().min() > 10 and set(rows["verdict"]) <= set(claims.VERDICTS)
    assert claims.PAPER_MME in measures.NAMES and set(claims.EXPENSIVE) <= set(measures.NAMES)


def _props(run):
    return properties.measure_properties(run), properties.tau_table(run, run.measure_names())


def test_across_datasets_says_on_how_many_a_claim_holds():
    table = pd.DataFrame(
        {
            "claim": ["a", "a", "a", "b"],
            "dataset": ["x", "y", "z", "x"],
            "verdict": [claims.HOLDS, claims.FAILS, claims.HOLDS, claims.UNTESTABLE],
        }
    )
    lines = claims.across(table).set_index("claim")["line"]
    assert lines["a"] == "holds on 2 of 3 datasets (x, z); does not hold on y"
    assert lines["b"] == "holds on 0 of 1 dataset; not testable on x"


# --- the decision rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "low", "high", "region", "expected"),
    [
        (0.5, 0.4, 0.6, verdicts.above(0.3), claims.HOLDS),
        (0.5, 0.2, 0.6, verdicts.above(0.3), claims.UNDECIDED),
        (0.1, 0.0, 0.2, verdicts.above(0.3), claims.FAILS),
        (0.3, 0.3, 0.4, verdicts.above(0.3), claims.UNDECIDED),  # the end on the threshold
        (0.3, np.nan, np.nan, verdicts.above(0.3), claims.FAILS),  # strictly above
        (0.3, np.nan, np.nan, verdicts.at_least(0.3), claims.HOLDS),
        (-1.0, -1.0, 1.0, verdicts.Region(-0.9, 0.9, False, False), claims.UNDECIDED),
        (0.95, 0.92, 1.0, verdicts.Region(-0.9, 0.9, False, False), claims.FAILS),
        (np.nan, np.nan, np.nan, verdicts.above(0.0), claims.UNTESTABLE),
    ],
)
def test_decide(point, low, high, region, expected):
    assert verdicts.decide(point, low, high, region) == expected


def test_combine_fails_on_one_certain_failure_and_holds_only_on_all():
    assert verdicts.combine([claims.HOLDS, claims.UNDECIDED]) == claims.UNDECIDED
    assert verdicts.combine([claims.UNDECIDED, claims.FAILS]) == claims.FAILS
    assert verdicts.combine([claims.HOLDS, claims.HOLDS]) == claims.HOLDS
    assert verdicts.combine([]) == claims.UNTESTABLE
