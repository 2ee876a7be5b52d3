"""The workflow's streamed measures: above config measures.stream_above the measures of the
tiny ml-100k come from pass one (pairs.json) and pass two instead of the dense similarity
files, in one job or scattered over measures.scatter jobs, with the same numbers; and the
config's estimate (measures.estimate.pairs) samples the streamed pair measures."""

from __future__ import annotations

import json
import math
import shutil

import pandas as pd
import pytest
import yaml

from userfair.measures import NAMES
from userfair.workflow.tables import model_label

from conftest import copy_run

DATASET, MODEL = "ml-100k", "UserKNN"
MEASURES = f"results/{DATASET}/measures/{MODEL}.json"
PAIRS = f"results/{DATASET}/similarity/pairs.json"


def _config(run, name, **measures):
    """An overlay of the .test/ config: only ``measures`` changes (its device stays cpu)."""
    path = run.test_dir / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"measures": {"device": "cpu", **measures}}))
    return str(path)


def _measures(run, config):
    """The measures file of a fresh run of `measures` under ``config``, and the log."""
    work = run.test_dir
    (work / MEASURES).unlink(missing_ok=True)
    shutil.rmtree(work / f"results/{DATASET}/measures/{MODEL}", ignore_errors=True)
    proc = run.snakemake(MEASURES, "--cores", "2", "--configfile", config)
    return json.loads((work / MEASURES).read_text()), proc.stderr


def _finished(log: str, rule: str) -> int:
    """How many jobs of ``rule`` the run finished."""
    return log.count(f"(Rule: {rule})")


def _assert_same(dense, streamed):
    for name in NAMES:
        a, b = dense[name], streamed[name]
        if a is None or (isinstance(a, float) and math.isnan(a)):
            assert b is None or math.isnan(b), name
        else:
            assert b == pytest.approx(a, rel=1e-9, abs=1e-12), name
    assert dense["conventions"] == streamed["conventions"]
    # Table 3 keeps a similarity time: pass one's, on the streamed route
    assert {"similarity-cos", "similarity-jacc"} <= streamed["seconds"].keys()


@pytest.mark.slow
def test_streamed_and_scattered_measures_equal_the_dense_ones(tmp_path, tiny_run):
    """On a copy of the session's tiny run (conftest ``tiny_run``): its lists and dense
    similarity files are reused, only the measures jobs of each route run; the scattered
    run then serves the config's estimate (measures.estimate.pairs) as its exact run."""
    run = copy_run(tiny_run, tmp_path / "run")
    work = run.test_dir
    dense, log = _measures(run, _config(run, "dense"))
    assert _finished(log, "measures") == 1 and _finished(log, "pairs") == 0, log[-4000:]
    assert _finished(log, "similarity") == 0 and _finished(log, "topk") == 0, log[-4000:]
    assert not (work / PAIRS).exists()

    one, log = _measures(run, _config(run, "stream", stream_above=0))
    assert _finished(log, "pairs") == 1 and _finished(log, "similarity") == 0, log[-4000:]
    assert _finished(log, "pairs_part") == _finished(log, "measure_sums") == 1  # one part each
    _assert_same(dense, one)

    stats = json.loads((work / PAIRS).read_text())
    (work / PAIRS).unlink()
    two, log = _measures(run, _config(run, "two", stream_above=0, scatter=2))
    for rule, jobs in (("pairs_part", 2), ("measure_sums", 2), ("pairs", 1), ("measures", 1)):
        assert _finished(log, rule) == jobs, (rule, log[-4000:])
    _assert_same(dense, two)
    gathered = json.loads((work / PAIRS).read_text())
    assert {k: v for k, v in gathered.items() if k not in ("seconds", "uf_mean", "uf_m2")} == {
        k: v for k, v in stats.items() if k not in ("seconds", "uf_mean", "uf_m2")
    }
    # the scattered run is the exact one the config's estimate starts from
    _assert_the_estimate_samples_the_streamed_pair_measures(run, two)

    # the dense files are not built above the threshold: a clear error names the key (a
    # dense file already there stays valid: a new threshold alone rebuilds nothing)
    (work / f"results/{DATASET}/similarity/jacc.npz").unlink()
    proc = run.snakemake(
        f"results/{DATASET}/similarity/jacc.npz",
        "--cores",
        "1",
        "--configfile",
        _config(run, "stream", stream_above=0),
        check=False,
    )
    assert proc.returncode != 0
    logs = "".join(p.read_text() for p in (work / "results/logs/similarity").glob("*jacc*"))
    assert "measures.stream_above" in logs, logs

    # gamma < 1: UF mixes in the genre similarity (ml-100k's genres), both passes carry it;
    # streamed and scattered it still equals the dense route
    mixed, log = _measures(run, _config(run, "dense-mixed", gamma=0.8))
    assert _finished(log, "pairs") == 0, log[-4000:]
    assert mixed["conventions"]["gamma"] == 0.8 and mixed["UF"] != dense["UF"]
    (work / PAIRS).unlink()
    streamed, log = _measures(run, _config(run, "two-mixed", gamma=0.8, stream_above=0, scatter=2))
    assert _finished(log, "pairs_part") == 2 and _finished(log, "measure_sums") == 2, log[-4000:]
    _assert_same(mixed, streamed)
    assert json.loads((work / PAIRS).read_text())["gamma"] == 0.8


def _assert_the_estimate_samples_the_streamed_pair_measures(run, exact):
    """measures.estimate.pairs through the real rules, after the exact scattered run
    ``exact`` (stream_above 0, scatter 2): a sample of every user is the exact streamed
    route, a half sample puts each estimated measure's SE and interval in the measures file
    and beside it in Table 2."""
    work = run.test_dir
    whole, log = _measures(
        run, _config(run, "whole", stream_above=0, scatter=2, estimate={"pairs": 1.0})
    )
    # pass one is the exact one's: only pass two's parts and the gather rerun
    assert _finished(log, "measure_sums") == 2 and _finished(log, "pairs_part") == 0, log[-4000:]
    _assert_same(exact, whole)
    assert all(entry["se"] == 0.0 for entry in whole["estimate"]["measures"].values())
    config = _config(run, "half", stream_above=0, scatter=2, estimate={"pairs": 0.5})
    half, log = _measures(run, config)
    record = half["estimate"]
    assert record["share"] == 0.5 and 2 * record["rows"] in (record["users"], record["users"] + 1)
    assert record["measures"]["PUF-P-Jacc"]["se"] > 0, record
    assert half["PUF-P-Cos"] == pytest.approx(exact["PUF-P-Cos"], rel=1e-12)  # not sampled
    run.snakemake("results/tables/scores.csv", "--cores", "2", "--configfile", config)
    table = pd.read_csv(work / "results/tables/scores.csv", index_col="Measure")
    label = model_label(MODEL)
    row = table.loc["PUF-P-Jacc"]
    assert row[f"{label} SE"] == pytest.approx(record["measures"]["PUF-P-Jacc"]["se"], rel=1e-6)
    assert row[label] == pytest.approx(half["PUF-P-Jacc"], rel=1e-6)
    assert math.isnan(table.loc["PUF-P-Cos", f"{label} SE"])  # exact: no SE
