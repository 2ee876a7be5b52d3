"""Plugin measures through the real workflow (docs/plugins.md): the example package under
examples/userfair-example-measures, installed into a folder of its own (pip --target) and
found through its entry points, on a copy of the shared tiny run. Its two measures join
every measures file, Table 2, Table 3, the intervals, significance.csv, Fig. 1's agreement
and the experiments of Figs. 2-4; their values equal plain loops over the run's own files; the
built-in measures and the other outputs stay as they were. A plugin that cannot be
imported stops the run at the parse, in one line, before any job."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from userfair.files.inputs import load_inputs
from userfair.files.io import read_json
from userfair.measures import NAMES

import reference
from conftest import REPO, copy_run, snakemake

EXAMPLE = REPO / "examples" / "userfair-example-measures"
PLUGINS = ("Atkinson-P", "PUF2-P-Cos")
MODELS = ("UserKNN", "ItemKNN", "BPR")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example package installed into a folder of its own (not the test environment:
    every other run of the suite stays without plugins)."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--no-build-isolation", "--no-index", "--target", str(target), str(EXAMPLE)],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return target


def _atkinson(p: np.ndarray) -> float:
    mean = p.mean()
    return 0.0 if mean <= 0 else 1.0 - np.sqrt(p).mean() ** 2 / mean


def _puf2(p, train_sets) -> float:
    cos = reference.cosine(train_sets)
    m = len(p)
    total = sum(s * s * abs(p[u] - p[v]) for (u, v), s in cos.items())
    return 2 * total / (m * (m - 1))


@pytest.mark.slow
def test_example_plugins_through_the_workflow(tiny_run, installed, tmp_path):
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    env = {"PYTHONPATH": str(installed)}
    run = snakemake(
        repo, "--directory", ".test", "--cores", "2", "table_scores", "table_timing",
        "agreement", "table_uncertainty", "fig_relevance", "fig_similarity", "fig_extreme",
        env=env,
    )  # fmt: skip
    log = run.stdout + run.stderr
    # the plugins rerun the jobs that compute measures, and nothing upstream
    assert "rule train" not in log and "rule topk" not in log and "rule split" not in log
    results = test_dir / "results"
    before = tiny_run.test_dir / "results"
    for model in MODELS:
        written = read_json(results / "ml-100k" / "measures" / f"{model}.json")
        old = read_json(before / "ml-100k" / "measures" / f"{model}.json")
        assert {name: written[name] for name in NAMES} == {name: old[name] for name in NAMES}
        # the plugins' values against plain loops over the run's own split and lists
        data = results / "ml-100k" / "data"
        inputs = load_inputs(data / "ml-100k.train.inter", data / "ml-100k.test.inter",
                             results / "ml-100k" / "models" / model / "topk.parquet", k=10,
                             valid=data / "ml-100k.valid.inter")  # fmt: skip
        lists = [list(row) for row in inputs.topk]
        relevant = [set(np.nonzero(r)[0]) for r in inputs.relevant.toarray()]
        train = [set(np.nonzero(r)[0]) for r in inputs.train_of_evaluated().toarray()]
        p = np.array(reference.effectiveness(lists, relevant, 10)["P"])
        assert written["Atkinson-P"] == pytest.approx(_atkinson(p), rel=1e-12)
        assert written["PUF2-P-Cos"] == pytest.approx(_puf2(p, train), rel=1e-9)
        assert set(PLUGINS) <= set(written["seconds"])

    scores = pd.read_csv(results / "tables" / "scores.csv")
    plugin_rows = scores[scores["Group"] == "Fair (plugins)"]
    assert list(plugin_rows["Measure"]) == list(PLUGINS)
    timing = pd.read_csv(results / "tables" / "timing.csv")
    assert set(PLUGINS) <= set(timing["Measure"])
    significance = pd.read_csv(results / "tables" / "significance.csv")
    assert set(PLUGINS) <= set(significance["measure"])
    intervals = pd.read_csv(results / "tables" / "intervals.csv")
    assert set(PLUGINS) <= set(intervals["measure"])
    agreement = pd.read_csv(results / "tables" / "agreement.csv")
    against = agreement[(agreement["measure_a"] == "PUF2-P-Cos")]
    assert set(against["measure_b"]) == set(NAMES) | set(PLUGINS)
    # PUF2 orders the models as a measure should against itself
    assert against[against["measure_b"] == "PUF2-P-Cos"]["tau"].iloc[0] == pytest.approx(1.0)
    experiments = results / "ml-100k" / "experiments"
    relevance = pd.read_parquet(experiments / "relevance.parquet")
    assert set(PLUGINS) <= set(relevance["measure"])  # Fig. 2
    assert set(PLUGINS) <= set(pd.read_parquet(experiments / "similarity.parquet")["measure"])
    extreme = pd.read_parquet(experiments / "extreme.parquet")  # Fig. 4: the pair measure
    assert "PUF2-P-Cos" in set(extreme["measure"]) and "Atkinson-P" not in set(extreme["measure"])
    first = relevance[(relevance["measure"] == "Atkinson-P") & (relevance["share"] == 0)]
    assert math.isfinite(first["value"].iloc[0])


@pytest.mark.slow
def test_a_bad_plugin_stops_the_run_before_any_job(tiny_run, tmp_path):
    repo, test_dir = copy_run(tiny_run, tmp_path / "run")
    (test_dir / "overlay.yaml").write_text("measures:\n  plugins: ['no_such_pkg.m:Thing']\n")
    run = snakemake(
        repo, "--directory", ".test", "--cores", "2", "table_scores", "--configfile",
        str(test_dir / "overlay.yaml"), check=False,
    )  # fmt: skip
    log = run.stdout + run.stderr
    assert run.returncode != 0
    assert "plugin no_such_pkg.m:Thing: cannot import no_such_pkg.m" in log
    assert "rule measures" not in log and "localrule" not in log
