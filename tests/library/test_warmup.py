"""Every ``seconds`` times the computation only (issue 33): in a fresh process the first
``evaluate`` loads the compiled kernels in an untimed warm-up (``userfair.engine.warmup``), so the
UF time it records is far below the load time."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from userfair import evaluate, measures, plugins
from userfair.engine import precompile, warmup

WORKFLOW = Path(__file__).resolve().parents[2] / "workflow"

FRESH = """
import json, sys, time
from userfair import evaluate
from userfair.engine import precompile, warmup
from userfair.similarity import pairwise
inputs = warmup.tiny_inputs(m=30, n=40, k=5, seed=1)
start = time.perf_counter()
result = evaluate.evaluate(inputs, k=5, route=sys.argv[1])
wall = time.perf_counter() - start
again = evaluate.evaluate(inputs, k=5, route=sys.argv[1])
print(json.dumps({"first": result["seconds"], "wall": wall, "again": again["seconds"]}))
"""


@pytest.mark.parametrize("route", ["dense", "stream"])
@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_a_fresh_process_times_the_computation_not_the_kernel_load(route):
    # one numba thread: the bound is about what is timed, not about a loaded machine's
    # thread pool (with 2 threads on a busy 2-core machine a 30-user UF waits ~0.2 s)
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(WORKFLOW)}
    done = subprocess.run(
        [sys.executable, "-c", FRESH, route], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    first, wall = got["first"], got["wall"]
    # the first call of the process includes the warm-up (kernel loading, about 1 s), the
    # recorded times do not: each is a small part of the call and close to the second call's
    timed = sum(first[key] for key in ("UF", "ME", "PUF-P-Cos", "similarity-cos"))
    assert wall > 5 * timed, (wall, first)
    assert first["UF"] < 0.05, first
    assert first["UF"] < 0.05 * wall, (wall, first)
    assert first["similarity-cos"] < 0.05, first


def test_once_runs_a_warm_up_once_per_key():
    calls = []
    key = ("test", object())
    assert warmup.once(key, lambda: calls.append(1)) >= 0.0
    assert warmup.once(key, lambda: calls.append(2)) == 0.0
    assert calls == [1]


def test_tiny_inputs_serve_every_measure():
    result = evaluate.evaluate(warmup.tiny_inputs(), k=3, gamma=0.5, route="dense")
    assert all(result[key] == result[key] for key in ("UF", "PUF-P-Cos", "ME", "MME"))  # no NaN


def test_precompile_reaches_every_cached_kernel():
    """scripts/setup-venv.sh compiles the kernels into numba's cache
    (userfair.engine.precompile): its steps reach every public cached kernel, so a fresh
    checkout's first processes (the test workers, the first jobs) load rather than compile.
    The stamp makes a second run a no-op until a source changes."""
    found = precompile.cached_kernels()
    assert len(found) >= 20, sorted(found)
    assert "userfair.streamed._streaming_kernels.pass_one_rows" in found
    assert not any(name.rsplit(".", 1)[1].startswith("_") for name in found)
    stamp = Path(precompile.userfair.__path__[0], "__pycache__", precompile.STAMP_NAME)
    seconds = precompile.precompile(force=True)
    assert set(seconds) == set(precompile._steps()) and precompile.uncompiled() == []
    assert stamp.read_text().strip() == precompile.digest()
    assert precompile.precompile() == {}  # the stamp: nothing changed


class _VecPlugin(plugins.PairMeasure):
    """A plugin of Vec: tiny inputs have no user vectors for it."""

    name, effectiveness, similarity, better = "Warm-P-Vec", "P", "Vec", "lower"

    def terms(self, s_u, s_v, sim):
        return sim * np.abs(s_u - s_v)


def test_the_warm_up_runs_the_builtins_only(monkeypatch):
    """A plugin loaded before the first timed call does not run in the warm-up on tiny
    inputs (which lack what it reads, here user vectors), and is back after it."""
    monkeypatch.setattr(warmup, "_DONE", set())
    try:
        plugins.load([f"{__name__}:_VecPlugin"], entry_points=False)
        seen = []

        def run():
            seen.append(measures.plugin_names())
            evaluate.evaluate(warmup.tiny_inputs(), k=3, route="dense")  # would need vectors

        warmup.once("test", run)
        assert seen == [()] and measures.plugin_names() == ("Warm-P-Vec",)
    finally:
        plugins.clear()
