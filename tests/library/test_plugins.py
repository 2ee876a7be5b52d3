"""Plugin measures (userfair.plugins, userfair.engine.generic_routes; docs/plugins.md): values
against direct loops from their formulas and hand-worked cases, every route equal, the
bootstrap against the materialised resample, and every bad plugin stopped in one line."""

from __future__ import annotations

import math
import sys
import textwrap

import numba
import numpy as np
import pytest

from userfair import cli, measures, plugins
from userfair.bootstrap.uncertainty import bootstrap, resample_weights
from userfair.engine import generic_routes
from userfair.engine.warmup import tiny_inputs
from userfair.evaluate import evaluate
from userfair.streamed import _plugin_kernels, streaming

import reference


class Spread(plugins.UserMeasure):
    """Mean absolute deviation from the weighted mean."""

    name = "MAD-NDCG"
    effectiveness = "NDCG"
    better = "lower"
    bounds = (0.0, 1.0)

    def compute(self, scores, weights):
        mean = (weights * scores).sum() / weights.sum()
        return float((weights * np.abs(scores - mean)).sum() / weights.sum())


class Squared(plugins.PairMeasure):
    """The mean over pairs of sim^2 |S_u - S_v|."""

    name = "PUF2-P-Jacc"
    effectiveness = "P"
    similarity = "Jacc"
    better = "lower"
    bounds = (0.0, 1.0)

    def terms(self, s_u, s_v, sim):
        return sim**2 * np.abs(s_u - s_v)


class Shifted(Squared):
    """A term that is not 0 where the similarity is: every pair is visited."""

    name = "Shift-P-Jacc"

    def terms(self, s_u, s_v, sim):
        return (sim + 0.5) * np.abs(s_u - s_v) / 1.5


class Overlap(plugins.UserSimilarity):
    """Raw similarity: the number of shared train items."""

    name = "overlap"
    label = "Overlap"

    def block(self, data, start, stop):
        rows = data.train
        return (rows[start:stop] @ rows.T).tocsr()


class OverlapPUF(Squared):
    name = "PUF-P-Overlap"
    similarity = "Overlap"

    def terms(self, s_u, s_v, sim):
        return sim * np.abs(s_u - s_v)


@pytest.fixture
def registered():
    """The plugins of this module loaded; forgotten afterwards."""
    module = sys.modules[__name__].__name__
    specs = [f"{module}:{name}" for name in ("Spread", "Squared", "Shifted", "Overlap",
                                              "OverlapPUF")]  # fmt: skip
    yield plugins.load(specs, entry_points=False)
    plugins.clear()
    from userfair.similarity import registry

    registry.REGISTRY.pop("overlap", None)


def _sets(matrix):
    return [set(np.nonzero(row)[0]) for row in matrix.toarray()]


def _loop_pair(scores, sim, term):
    m = len(scores)
    total = sum(term(scores[u], scores[v], s) for (u, v), s in sim.items())
    return 2 * total / (m * (m - 1))


def _overlap_min_max(train_sets):
    raw = {
        (u, v): float(len(train_sets[u] & train_sets[v]))
        for u in range(len(train_sets))
        for v in range(u + 1, len(train_sets))
    }
    return reference._min_max(raw)


def _sparse(inputs, density=0.06):
    """``inputs`` with a sparse train matrix: some pairs share no item (min Jaccard 0)."""
    import dataclasses

    import scipy.sparse as sp

    m, n = inputs.train.shape
    rng = np.random.default_rng(m)
    train = rng.random((m, n)) < density
    train[np.arange(m), np.arange(m) % n] = True
    return dataclasses.replace(inputs, train=sp.csr_matrix(train, dtype=np.float64))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plugin_values_equal_direct_loops_on_both_routes(registered, seed):
    inputs = tiny_inputs(m=25, n=30, k=4, seed=seed)
    inputs = _sparse(inputs) if seed == 2 else inputs  # the sparse pass (min Jaccard 0)
    lists = [list(row) for row in inputs.topk]
    relevant = _sets(inputs.relevant)
    train = _sets(inputs.train_of_evaluated())
    eff = reference.effectiveness(lists, relevant, 4)
    ndcg, p = np.array(eff["NDCG"]), eff["P"]
    jacc = reference.jaccard(train)
    expected = {
        "MAD-NDCG": float(np.abs(ndcg - ndcg.mean()).mean()),
        "PUF2-P-Jacc": _loop_pair(p, jacc, lambda a, b, s: s * s * abs(a - b)),
        "Shift-P-Jacc": _loop_pair(p, jacc, lambda a, b, s: (s + 0.5) * abs(a - b) / 1.5),
        "PUF-P-Overlap": _loop_pair(p, _overlap_min_max(train), lambda a, b, s: s * abs(a - b)),
    }
    for route in ("dense", "stream"):
        result = evaluate(inputs, k=4, route=route)
        for name, value in expected.items():
            assert result[name] == pytest.approx(value, rel=1e-12, abs=1e-15), (route, name)
            assert result["seconds"][name] >= 0
        # the built-ins are untouched by the plugins
        plain = reference.puf(p, jacc)
        assert result["PUF-P-Jacc"] == pytest.approx(plain, rel=1e-9)


def test_hand_worked_pair_and_user_measures(registered):
    # three users; P = (0, 0.5, 1); Jaccard: u0,u1 share 1 of 3 items, u1,u2 1 of 2, u0,u2 0
    import scipy.sparse as sp

    from userfair.files.inputs import Inputs

    train = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0]], float))
    relevant = sp.csr_matrix(np.array([[0, 0, 0, 1], [1, 0, 0, 1], [1, 1, 0, 1]], float))
    topk = np.array([[2, 0], [0, 2], [0, 1]])  # hits: 0, 1, 2 of k = 2
    inputs = Inputs(
        users=np.array(["a", "b", "c"]), items=np.array(["i0", "i1", "i2", "i3"]),
        train=train, train_rows=np.arange(3), relevant=relevant, topk=topk, genres=None,
    )  # fmt: skip
    # raw Jaccard: (a,b) 1/3, (a,c) 0, (b,c) 1/2 -> min-max: 2/3, 0, 1
    # PUF2 = mean of (4/9 * 0.5, 0 * 1, 1 * 0.5) = (2/9 + 1/2) / 3 = 13/54
    values, _, _ = generic_routes.evaluate_generic(inputs, 2, ["PUF2-P-Jacc"])
    assert values["PUF2-P-Jacc"] == pytest.approx(13 / 54, rel=1e-14)
    # NDCG: a 0; b hit at rank 1 of ideal 2: 1 / (1 + 1/log2 3); c 1 -> MAD from the mean
    ndcg = np.array([0.0, 1 / (1 + 1 / math.log2(3)), 1.0])
    values, _, _ = generic_routes.evaluate_generic(inputs, 2, ["MAD-NDCG"])
    assert values["MAD-NDCG"] == pytest.approx(np.abs(ndcg - ndcg.mean()).mean(), rel=1e-14)


def test_sparse_pass_is_taken_only_when_the_term_vanishes_at_zero(registered):
    assert plugins.zero_at_zero("PUF2-P-Jacc") and plugins.zero_at_zero("PUF-P-Overlap")
    assert not plugins.zero_at_zero("Shift-P-Jacc")
    inputs = _sparse(tiny_inputs(m=30, n=40, k=3, seed=5))
    cache = {}
    sparse = generic_routes._pass("PUF2-P-Jacc", inputs, None, 7, cache, "dense")
    dense = generic_routes._pass("Shift-P-Jacc", inputs, None, 7, cache, "dense")
    assert sparse.sparse_only and not dense.sparse_only
    # the same sum whichever pairs are visited
    s = np.random.default_rng(0).random(30)
    visited = sum(u.size for _, u, _, _ in sparse.blocks(s))
    assert visited < 30 * 29 / 2
    sparse.sparse_only = False
    assert sparse.mean(s) == pytest.approx(
        generic_routes._pass("PUF2-P-Jacc", inputs, None, 7, cache, "dense").mean(s), rel=1e-13
    )


def test_bootstrap_equals_the_materialised_resample(registered):
    inputs = tiny_inputs(m=10, n=16, k=3, seed=3)
    weights = resample_weights(10, 4, seed=7)
    frame = bootstrap(inputs, weights, k=3)
    lists = [list(row) for row in inputs.topk]
    eff = reference.effectiveness(lists, _sets(inputs.relevant), 3)
    jacc = reference.jaccard(_sets(inputs.train_of_evaluated()))
    for b, row in enumerate(weights):
        origin = [u for u, w in enumerate(row) for _ in range(w)]
        ndcg = np.array([eff["NDCG"][u] for u in origin])
        assert frame["MAD-NDCG"][b] == pytest.approx(np.abs(ndcg - ndcg.mean()).mean(), rel=1e-12)
        pairs = [
            (origin[i], origin[j])
            for i in range(len(origin))
            for j in range(i + 1, len(origin))
            if origin[i] != origin[j]
        ]
        terms = [jacc[min(u, v), max(u, v)] ** 2 * abs(eff["P"][u] - eff["P"][v]) for u, v in pairs]
        assert frame["PUF2-P-Jacc"][b] == pytest.approx(np.mean(terms), rel=1e-12)
    # unit weights give evaluate's values
    ones = bootstrap(inputs, np.ones((1, 10), dtype=np.int64), k=3)
    point = evaluate(inputs, k=3, route="dense")
    for name in measures.plugin_names():
        assert ones[name][0] == pytest.approx(point[name], rel=1e-12)


def test_plugins_join_the_registry_with_their_declarations(registered):
    declaration = measures.get("PUF2-P-Jacc")
    assert (declaration.kind, declaration.similarity, declaration.family) == ("pair", "Jacc",
                                                                              "plugin")  # fmt: skip
    assert declaration.source == f"{__name__}:Squared"
    assert not measures.higher_is_better("MAD-NDCG")
    assert "PUF2-P-Jacc" in measures.served("stream")
    assert "PUF2-P-Jacc" in measures.served("decompose")
    assert "MAD-NDCG" not in measures.served("decompose")  # a statistic: no generic share
    # loading the same classes again is harmless
    assert plugins.load([f"{__name__}:Squared"], entry_points=False)[0] == declaration


def _write_module(tmp_path, monkeypatch, source: str) -> str:
    name = f"badplugin_{abs(hash(source)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(
        "import numpy as np\nfrom userfair.plugins import UserMeasure, PairMeasure\n"
        + textwrap.dedent(source)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


BAD = {
    "import": ("", "no_such_module_xyz:Thing", "cannot import no_such_module_xyz"),
    "attribute": ("", "{m}:Missing", "has no attribute 'Missing'"),
    "not a class": ("Thing = 3\n", "{m}:Thing", "is not a subclass"),
    "no name": (
        "class A(UserMeasure):\n    def compute(self, s, w):\n        return 0.0\n",
        "{m}:A",
        "set the class attribute 'name'",
    ),
    "builtin name": (
        "class A(UserMeasure):\n    name = 'SD-P'\n    def compute(self, s, w):\n"
        "        return 0.0\n",
        "{m}:A",
        "is a built-in measure's",
    ),
    "no compute": ("class A(UserMeasure):\n    name = 'A-P'\n", "{m}:A", "define compute"),
    "bad score": (
        "class A(UserMeasure):\n    name = 'A-X'\n    effectiveness = 'X'\n"
        "    def compute(self, s, w):\n        return 0.0\n",
        "{m}:A",
        "effectiveness = 'X'",
    ),
    "out of bounds": (
        "class A(UserMeasure):\n    name = 'A-P'\n    bounds = (0, 1)\n"
        "    def compute(self, s, w):\n        return 2.0\n",
        "{m}:A",
        "outside its declared bounds",
    ),
    "nan": (
        "class A(UserMeasure):\n    name = 'A-P'\n    def compute(self, s, w):\n"
        "        return float('nan')\n",
        "{m}:A",
        "not finite",
    ),
    "ignores weights": (
        "class A(UserMeasure):\n    name = 'A-P'\n    def compute(self, s, w):\n"
        "        return float(np.mean(s))\n",
        "{m}:A",
        "treat the weights as multiplicities",
    ),
    "raises": (
        "class A(UserMeasure):\n    name = 'A-P'\n    def compute(self, s, w):\n"
        "        raise RuntimeError('boom')\n",
        "{m}:A",
        "compute raised RuntimeError: boom",
    ),
    "asymmetric": (
        "class B(PairMeasure):\n    name = 'B-P-Cos'\n    def terms(self, a, b, sim):\n"
        "        return sim * (a - b)\n",
        "{m}:B",
        "must be symmetric",
    ),
    "one value per pair": (
        "class B(PairMeasure):\n    name = 'B-P-Cos'\n    def terms(self, a, b, sim):\n"
        "        return np.array([1.0])\n",
        "{m}:B",
        "one value per pair",
    ),
    "unknown similarity": (
        "class B(PairMeasure):\n    name = 'B-P-X'\n    similarity = 'Nope'\n"
        "    def terms(self, a, b, sim):\n        return sim\n",
        "{m}:B",
        "similarity = 'Nope'",
    ),
    "term not compiled": (
        "class B(PairMeasure):\n    name = 'B-P-Cos'\n"
        "    term = staticmethod(lambda a, b, sim: sim)\n",
        "{m}:B",
        "term must be a scalar function compiled with numba",
    ),
    "term and terms disagree": (
        "import numba\n@numba.njit\ndef t(a, b, sim):\n    return sim * abs(a - b)\n"
        "class B(PairMeasure):\n    name = 'B-P-Cos'\n    term = t\n"
        "    def terms(self, a, b, sim):\n        return 2 * sim * np.abs(a - b)\n",
        "{m}:B",
        "its compiled term and terms() disagree",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_plugin_is_stopped_in_one_line_naming_it(case, tmp_path, monkeypatch):
    source, spec, expected = BAD[case]
    module = _write_module(tmp_path, monkeypatch, source)
    spec = spec.format(m=module)
    try:
        with pytest.raises(plugins.PluginError) as error:
            plugins.load([spec], entry_points=False)
    finally:
        plugins.clear()
    message = str(error.value)
    assert expected in message
    assert "\n" not in message
    assert spec.split(":")[0] in message or module in message
    assert not measures.plugin_names()


def test_a_plugin_raising_inside_a_route_is_named(registered, monkeypatch):
    inputs = tiny_inputs(m=12, n=16, k=3)
    monkeypatch.setattr(Squared, "terms", lambda self, a, b, sim: 1 / 0)
    with pytest.raises(plugins.PluginError, match=r"Squared: terms raised ZeroDivisionError"):
        generic_routes.evaluate_generic(inputs, 3, ["PUF2-P-Jacc"])


def test_cli_measure_option(tmp_path, capsys):
    from userfair.files.io import write_inter

    from measures_data import random_split

    train_frame, test_frame, topk, _ = random_split(5)
    train, test, lists = tmp_path / "d.train.inter", tmp_path / "d.test.inter", tmp_path / "t.tsv"
    write_inter(train_frame, train)
    write_inter(test_frame, test)
    topk.to_csv(lists, sep="\t", index=False)
    spec = f"{__name__}:Squared"
    try:
        args = ["--k", "3", "--measure", spec, "--no-entry-points"]
        code = cli.main(["evaluate", "--train", str(train), "--test", str(test), "--topk",
                         str(lists), *args])  # fmt: skip
        out = capsys.readouterr().out
    finally:
        plugins.clear()
    assert code == 0
    assert "PUF2-P-Jacc" in out
    code = cli.main(["evaluate", "--train", str(train), "--test", str(test), "--topk",
                     str(lists), "--measure", "nope_module:X", "--no-entry-points"])  # fmt: skip
    assert code == 2
    assert "plugin nope_module:X: cannot import nope_module" in capsys.readouterr().err


def test_unserved_routes_are_said_once_by_measure_and_route(registered, caplog):
    caplog.set_level("WARNING")
    measures._said.clear()
    assert measures.unserved("decompose", ["MAD-NDCG", "SD-P"], "left out") == ("MAD-NDCG",)
    measures.unserved("decompose", ["MAD-NDCG"], "left out")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["MAD-NDCG: no per-user decomposition route; left out"]


@pytest.mark.slow  # its compiled plugins compile their kernels (about 20 s)
def test_the_plugin_benchmark_runs_at_a_tiny_size(tmp_path):
    """benchmarks/plugins.py at 150 users (300 streamed): its plugins equal the built-ins,
    and the compiled Vec and RCos plugins' row loops their row blocks (it asserts so)."""
    import importlib.util

    from conftest import REPO

    spec = importlib.util.spec_from_file_location(
        "bench_plugins", REPO / "benchmarks" / "plugins.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_plugins"] = module
    try:
        spec.loader.exec_module(module)
        out = module.main(["--evaluated", "150", "--resamples", "10", "--repeats", "1",
                           "--stream-users", "300", "--unit-users", "300",
                           "--json", str(tmp_path / "out.json")])  # fmt: skip
    finally:
        plugins.clear()
        sys.modules.pop("bench_plugins", None)
    assert out["a"]["ratio"] > 0 and out["b"]["ratio"] > 0 and out["c"]["ratio"] > 0
    assert out["d"]["CompiledPUF-P-Vec"]["speed-up"] > 0
    assert (tmp_path / "out.json").is_file()


def test_the_experiments_serve_the_plugins(registered):
    """Figs. 2-4: a plugin measure on the experiment's lists and similarity equals the loop;
    Fig. 2 reads the plugin's own similarity, Fig. 3 the sampled one in its place, Fig. 4
    the one assigned by its score's differences."""
    from userfair.formulas import effectiveness
    from userfair.workflow import experiments

    inputs = tiny_inputs(m=16, n=20, k=3, seed=4)
    settings = experiments.Settings(3, 0.05, 64, "cpu", "precision")
    train = _sets(inputs.train_of_evaluated())
    p = effectiveness.per_user(inputs.topk, inputs.relevant, 3)["P"]
    jacc = reference.jaccard(train)
    sim_jacc = np.zeros((16, 16))
    for (u, v), value in jacc.items():
        sim_jacc[u, v] = sim_jacc[v, u] = value
    out = experiments.relevance_measures(inputs.topk, inputs, sim_jacc, sim_jacc, settings)
    square = _loop_pair(p, jacc, lambda a, b, s: s * s * abs(a - b))
    assert out["PUF2-P-Jacc"] == pytest.approx(square, rel=1e-12)
    overlap = _loop_pair(p, _overlap_min_max(train), lambda a, b, s: s * abs(a - b))
    assert out["PUF-P-Overlap"] == pytest.approx(overlap, rel=1e-12)
    assert "MAD-NDCG" in out
    # Fig. 3: the sampled similarity in place of every plugin's own
    rng = np.random.default_rng(0)
    sampled = rng.random((16, 16))
    sampled = (sampled + sampled.T) / 2
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, 3)
    out = experiments.similarity_measures(inputs.topk, inputs, sampled, scores, settings)
    pairs = {(u, v): sampled[u, v] for u in range(16) for v in range(u + 1, 16)}
    assert out["PUF-P-Overlap"] == pytest.approx(
        _loop_pair(p, pairs, lambda a, b, s: s * abs(a - b)), rel=1e-12
    )
    # Fig. 4: a row per plugin pair measure of P, per share and assignment
    frame = experiments.run_extreme(inputs, settings, seed=1)
    plugin_rows = frame[frame["measure"] == "PUF2-P-Jacc"]
    assert len(plugin_rows) == 2 * len(experiments.STEPS)
    assert set(plugin_rows["score"]) == {"P"}


@pytest.mark.parametrize("route", ["dense", "stream"])
def test_per_user_shares_of_a_pair_plugin_sum_to_it(registered, route, caplog):
    """userfair users / decompose: each pair's term split between its two users; the
    shares equal the loop's and sum to the measure; a UserMeasure says it has none."""
    from userfair.decomposition.decompose import decompose

    caplog.set_level("WARNING")
    measures._said.clear()
    inputs = _sparse(tiny_inputs(m=18, n=24, k=3, seed=6))
    frame = decompose(inputs, k=3, route=route)
    point = evaluate(inputs, k=3, route="dense")
    p = reference.effectiveness([list(r) for r in inputs.topk], _sets(inputs.relevant), 3)["P"]
    jacc = reference.jaccard(_sets(inputs.train_of_evaluated()))
    expected = np.zeros(18)
    for (u, v), s in jacc.items():
        expected[u] += s * s * abs(p[u] - p[v]) / (18 * 17)
        expected[v] += s * s * abs(p[u] - p[v]) / (18 * 17)
    np.testing.assert_allclose(frame["PUF2-P-Jacc"], expected, rtol=1e-12, atol=1e-16)
    assert frame["PUF2-P-Jacc"].sum() == pytest.approx(point["PUF2-P-Jacc"], rel=1e-12)
    assert "MAD-NDCG" not in frame.columns
    assert "MAD-NDCG: no per-user decomposition route; not in the per-user frame" in [
        r.getMessage() for r in caplog.records
    ]


def test_the_replicates_tables_hold_the_plugins(registered, tmp_path):
    """table_replicates reads the plugin measures the replicates' files hold: their values per
    replicate, Table 2 over both sources (the two-level t interval of
    userfair.bootstrap.replicates on the plugin's own resamples), the paired tests and the
    conclusions, beside the built-ins."""
    import pandas as pd

    from userfair.bootstrap import replicates as two_level
    from userfair.evaluate import as_json
    from userfair.files.io import write_json, write_parquet
    from userfair.workflow.steps.replicates import table_replicates

    models, weights = ["A", "B"], resample_weights(10, 6, seed=7)
    measure_files, resample_files, points, frames = {}, {}, {}, {}
    for i, model in enumerate(models):
        for r in (0, 1):
            inputs = tiny_inputs(m=10, n=16, k=3, seed=11 + 2 * i + r)
            key = f"d/{model}/{r}"
            measure_files[key], resample_files[key] = (
                tmp_path / f"{i}{r}.json",
                tmp_path / f"{i}{r}.pq",
            )
            points[key] = as_json(evaluate(inputs, k=3, route="dense"))
            frames[key] = bootstrap(inputs, weights, k=3)
            write_json(points[key], measure_files[key])
            write_parquet(frames[key], resample_files[key])
    out = {n: tmp_path / f"{n}.csv" for n in (
        "values", "variance", "scores", "significance", "agreement", "conclusions")}  # fmt: skip
    table_replicates(
        measure_files, resample_files, ["d"], models, 2, level=0.9, seed=1,
        **{f"{n}_csv": path for n, path in out.items()},
    )  # fmt: skip
    values = pd.read_csv(out["values"])
    scores = pd.read_csv(out["scores"]).set_index(["model", "measure"])
    for name in ("MAD-NDCG", "PUF2-P-Jacc"):
        for model in models:
            for r in (0, 1):
                row = values[(values.model == model) & (values.replicate == r)]
                assert row[row.measure == name]["value"].item() == pytest.approx(
                    points[f"d/{model}/{r}"][name], abs=1e-15
                )
            y = np.stack([frames[f"d/{model}/{r}"][name].to_numpy() for r in (0, 1)])
            full = np.array([points[f"d/{model}/{r}"][name] for r in (0, 1)])
            m = two_level.moments(y, full)
            assert scores.loc[(model, name), "value"] == pytest.approx(full.mean(), abs=1e-15)
            assert (scores.loc[(model, name), "low"], scores.loc[(model, name), "high"]) == (
                pytest.approx(two_level.t_interval(m, 0.9), abs=1e-12)
            )
        assert name in set(pd.read_csv(out["significance"]).measure)
        assert name in set(pd.read_csv(out["conclusions"]).measure)


def test_the_who_table_holds_the_pair_plugins_shares(registered):
    """The who table (userfair.workflow.who.group_table) gives each group's share of a pair
    plugin from the users files' per-user shares, beside the built-ins; the shares of a
    grouping sum to 1 and equal the group's column sum over the measure."""
    from userfair.workflow import who

    frames = {}
    for i, model in enumerate(["A", "B"]):
        inputs = tiny_inputs(m=12, n=16, k=3, seed=5)
        inputs.topk[:] = np.roll(inputs.topk, i, axis=1)  # another list order, same users
        frames[("d", model)] = who.users_job(
            inputs, route="stream", k=3, epsilon=0.05, gamma=1.0, envy_utility="precision",
            block_size=4, features=None, worst=2,
        )[0]  # fmt: skip
    table = who.group_table(frames, groups=3, resamples=20, seed=1)
    part = table[(table.measure == "PUF2-P-Jacc") & (table.model == "A")]
    assert len(part) == 3 and part.share.sum() == pytest.approx(1.0, abs=1e-12)
    column = frames[("d", "A")]["PUF2-P-Jacc"].to_numpy()
    labels, _ = who.quantile_labels(frames[("d", "A")].train_items.to_numpy(), 3)
    first = part.set_index("group").loc["Q1"]
    assert first.share == pytest.approx(column[labels == "Q1"].sum() / column.sum(), rel=1e-12)
    assert "PUF-P-Cos" in set(table.measure)
    assert "MAD-NDCG" not in set(table.measure)  # a per-user plugin has no shares


#: The tests of compiled terms: each term compiles the row loops it runs in (numba specialises
#: them on the term, per process and not cached on disk: seconds a term), so they run with the
#: slow tests, not in the fast lane.
COMPILES = pytest.mark.slow


@numba.njit
def _squared(s_u, s_v, sim):
    return sim * sim * abs(s_u - s_v)


@numba.njit
def _shifted(s_u, s_v, sim):
    return (sim + 0.5) * abs(s_u - s_v) / 1.5


class CompiledJacc(plugins.PairMeasure):
    """sim^2 |S_u - S_v| as a compiled term (terms() defaults to it)."""

    name, effectiveness, similarity, better, bounds = "C2-P-Jacc", "P", "Jacc", "lower", (0, 1)
    term = _squared


class CompiledCos(CompiledJacc):
    name, similarity = "C2-NDCG-Cos", "Cos"
    effectiveness = "NDCG"


class CompiledShift(CompiledJacc):
    """A compiled term that is not 0 at similarity 0: every pair is visited."""

    name = "CShift-P-Jacc"
    term = _shifted


@pytest.mark.parametrize("seed", [0, 2])
@COMPILES
def test_a_compiled_term_runs_inside_the_streamed_kernels(seed, caplog):
    """A PairMeasure with a numba-compiled scalar term: on the streamed route its mean comes
    from the compiled row loops (userfair.streamed._plugin_kernels), equal to a direct loop
    over the pairs and to the dense route's row blocks (terms() derived from the term), for
    Cos and Jacc, a term that vanishes at 0 (only the pairs sharing an item) and one that
    does not (every pair)."""
    specs = [f"{__name__}:{c}" for c in ("CompiledJacc", "CompiledCos", "CompiledShift")]
    try:
        plugins.load(specs, entry_points=False)
        assert plugins.zero_at_zero("C2-P-Jacc") and not plugins.zero_at_zero("CShift-P-Jacc")
        inputs = tiny_inputs(m=25, n=30, k=4, seed=seed)
        inputs = _sparse(inputs) if seed == 2 else inputs  # min similarity 0
        lists = [list(row) for row in inputs.topk]
        train = _sets(inputs.train_of_evaluated())
        eff = reference.effectiveness(lists, _sets(inputs.relevant), 4)
        jacc, cos = reference.jaccard(train), reference.cosine(train)
        expected = {
            "C2-P-Jacc": _loop_pair(eff["P"], jacc, lambda a, b, s: s * s * abs(a - b)),
            "C2-NDCG-Cos": _loop_pair(eff["NDCG"], cos, lambda a, b, s: s * s * abs(a - b)),
            "CShift-P-Jacc": _loop_pair(
                eff["P"], jacc, lambda a, b, s: (s + 0.5) * abs(a - b) / 1.5
            ),
        }
        cache = {}
        for name, value in expected.items():
            s = np.array(eff[name.split("-")[1]])
            # the compiled route itself, then through evaluate on both routes
            assert generic_routes.compiled_mean(name, inputs, s, cache) == pytest.approx(
                value, rel=1e-12, abs=1e-15
            )
        for route in ("dense", "stream"):
            result = evaluate(inputs, k=4, route=route)
            for name, value in expected.items():
                assert result[name] == pytest.approx(value, rel=1e-12, abs=1e-15), (route, name)
    finally:
        plugins.clear()


@COMPILES
def test_the_example_packages_compiled_term_agrees_with_its_terms(monkeypatch):
    """examples/userfair-example-measures' PUF2-P-Cos has a compiled term and numpy terms:
    the load checks they agree, and the streamed route (compiled kernels) gives the dense
    route's value (numpy terms over row blocks)."""
    from conftest import REPO

    monkeypatch.syspath_prepend(str(REPO / "examples" / "userfair-example-measures"))
    try:
        (declared,) = plugins.load(["userfair_example_measures:SquaredPUF"], entry_points=False)
        assert plugins.compiled_term(plugins.instance(declared.name)) is not None
        inputs = _sparse(tiny_inputs(m=30, n=40, k=4, seed=4))
        dense = evaluate(inputs, k=4, route="dense")[declared.name]
        stream = evaluate(inputs, k=4, route="stream")[declared.name]
        assert stream == pytest.approx(dense, rel=1e-12) and dense > 0
    finally:
        plugins.clear()
        sys.modules.pop("userfair_example_measures", None)


@COMPILES
def test_pass_ones_ranges_serve_the_compiled_route(monkeypatch):
    """Given pass one's stats, the compiled route takes the similarity range from them (no
    range pass of its own: the kernel is made to fail) and its values are bit for bit those
    of its own range pass."""
    specs = [f"{__name__}:{c}" for c in ("CompiledJacc", "CompiledCos", "CompiledShift")]
    try:
        plugins.load(specs, entry_points=False)
        for seed in (0, 2):
            inputs = tiny_inputs(m=25, n=30, k=4, seed=seed)
            inputs = _sparse(inputs) if seed == 2 else inputs
            scores = evaluate(inputs, k=4, route="dense")
            eff = generic_routes.scores_of(inputs, 4, ["P", "NDCG"])
            own = {
                name: generic_routes.compiled_mean(name, inputs, eff[name.split("-")[1]], {})
                for name in ("C2-P-Jacc", "C2-NDCG-Cos", "CShift-P-Jacc")
            }
            stats = streaming.stats_of(inputs)
            with monkeypatch.context() as patched:
                patched.setattr(_plugin_kernels, "range_rows", _no_range_pass)
                for name, value in own.items():
                    s = eff[name.split("-")[1]]
                    assert generic_routes.compiled_mean(name, inputs, s, {}, stats) == value
                    assert value == pytest.approx(scores[name], rel=1e-12, abs=1e-15)
    finally:
        plugins.clear()


def _no_range_pass(*args):
    raise AssertionError("the range pass ran although pass one's stats were given")


@COMPILES
def test_a_compiled_pair_plugin_is_estimated_from_the_sample(caplog):
    """The sampled estimate (docs/method.md#estimate) covers a pair plugin with a compiled
    term: over every sample of 3 of 9 users the estimate's mean is the exact value
    (unbiased) and the mean of SE^2 its variance; the whole sample gives the exact value
    with SE 0; through evaluate its entry joins the estimate record, and a pair plugin
    without a compiled term is computed exact, which is said once."""
    from itertools import combinations

    specs = [f"{__name__}:{c}" for c in ("CompiledJacc", "CompiledShift", "Squared")]
    try:
        plugins.load(specs, entry_points=False)
        inputs = _sparse(tiny_inputs(m=9, n=12, k=3, seed=5), density=0.2)
        eff = generic_routes.scores_of(inputs, 3, ["P"])["P"]
        for name in ("C2-P-Jacc", "CShift-P-Jacc"):
            exact = generic_routes.compiled_mean(name, inputs, eff, {})
            found = [
                generic_routes.compiled_estimate(name, inputs, eff, {}, np.array(rows), 0.95)
                for rows in combinations(range(9), 3)
            ]
            values = np.array([entry["value"] for entry in found])
            assert len(found) == 84 and values.std() > 0
            assert values.mean() == pytest.approx(exact, rel=1e-12)
            ses = np.array([entry["se"] for entry in found])
            assert (ses**2).mean() == pytest.approx(values.var(), rel=1e-9)
            for entry in found:
                assert entry["low"] <= entry["value"] <= entry["high"]
            whole = generic_routes.compiled_estimate(name, inputs, eff, {}, np.arange(9), 0.95)
            assert whole["value"] == pytest.approx(exact, rel=1e-12) and whole["se"] == 0.0
        with caplog.at_level("WARNING"):
            result = evaluate(inputs, k=3, sample_users=0.5, seed=3)
            evaluate(inputs, k=3, sample_users=0.5, seed=3)
        record = result["estimate"]["measures"]
        assert {"C2-P-Jacc", "CShift-P-Jacc", "PUF-P-Jacc"} <= set(record)
        assert "PUF2-P-Jacc" in result and "PUF2-P-Jacc" not in record
        for name in ("C2-P-Jacc", "CShift-P-Jacc"):
            assert record[name]["value"] == result[name]
        said = [r.message for r in caplog.records if "no sampled route" in r.getMessage()]
        assert len(said) == 1, said
    finally:
        plugins.clear()


class CompiledRCos(CompiledJacc):
    name, similarity = "C2-P-RCos", "RCos"


class CompiledVec(CompiledJacc):
    name, similarity = "C2-P-Vec", "Vec"


class CompiledGenre(CompiledShift):
    """Not 0 at similarity 0, over the genre distributions' cosine."""

    name, similarity = "CShift-P-Genre", "Genre"


def _unit_cosines(rows) -> dict:
    """The raw cosine of every unordered pair of ``rows`` (dense), one pair at a time."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = [float(np.sqrt(sum(x * x for x in row))) for row in rows]
    return {
        (u, v): (float(sum(a * b for a, b in zip(rows[u], rows[v]))) / (norms[u] * norms[v])
                 if norms[u] > 0 and norms[v] > 0 else 0.0)
        for u in range(len(rows)) for v in range(u + 1, len(rows))
    }  # fmt: skip


@COMPILES
def test_a_compiled_term_runs_inside_the_row_loops_for_every_similarity():
    """RCos (graded rows, sparse: only the pairs sharing an item when the term vanishes at
    0), Vec (dense user vectors) and Genre (dense genre distributions, a term not 0 at 0):
    the compiled route's mean equals a direct loop over the pairs of the raw cosines,
    min-max normalised, and evaluate's dense route (terms() over row blocks); its sampled
    row sums over the whole sample give the same mean with SE 0."""
    import dataclasses

    import scipy.sparse as sp

    from userfair.similarity import pairwise, registry

    specs = [f"{__name__}:{c}" for c in ("CompiledRCos", "CompiledVec", "CompiledGenre")]
    try:
        plugins.load(specs, entry_points=False)
        base = _sparse(tiny_inputs(m=16, n=20, k=4, seed=3), density=0.15)
        rng = np.random.default_rng(4)
        grades = base.train.multiply(rng.integers(1, 6, base.train.shape)).tocsr()
        inputs = dataclasses.replace(base, train_grades=sp.csr_matrix(grades))
        vectors = rng.normal(size=(16, 3))
        data = registry.SimilarityData.of(inputs, vectors)
        raw = {
            "C2-P-RCos": _unit_cosines(data.grades.toarray()),
            "C2-P-Vec": _unit_cosines(vectors),
            "CShift-P-Genre": _unit_cosines(pairwise.genre_distributions(data.train,
                                                                         data.genres)),
        }  # fmt: skip
        assert min(raw["C2-P-RCos"].values()) == 0.0  # some pair shares no item
        p = generic_routes.scores_of(inputs, 4, ["P"])["P"]
        terms = {"C2-P-RCos": _squared, "C2-P-Vec": _squared, "CShift-P-Genre": _shifted}
        cache = {}
        for name, sims in raw.items():
            expected = _loop_pair(p, reference._min_max(sims), terms[name].py_func)
            mean = generic_routes.compiled_mean(name, inputs, p, cache, vectors=vectors)
            assert mean == pytest.approx(expected, rel=1e-12, abs=1e-15), name
            whole = generic_routes.compiled_estimate(
                name, inputs, p, cache, np.arange(16), 0.95, vectors=vectors
            )
            assert whole["value"] == pytest.approx(expected, rel=1e-12) and whole["se"] == 0.0
        for route in ("dense", "stream"):
            result = evaluate(inputs, k=4, route=route, user_vectors=vectors)
            for name, sims in raw.items():
                expected = _loop_pair(p, reference._min_max(sims), terms[name].py_func)
                assert result[name] == pytest.approx(expected, rel=1e-12, abs=1e-15), (route, name)
        for name in raw:
            assert "sample" in measures.get(name).routes
    finally:
        plugins.clear()
