"""Benchmark of plugin measures against the built-ins of the same kind, in one sitting;
results go to docs/performance.md#plugins.

    python benchmarks/plugins.py [--evaluated 3514] [--resamples 1000] [--repeats 3]

On a QK-video-sized synthetic input (benchmarks/measures.py's, 3,514 evaluated users):
(a) the bootstrap of a per-user plugin (numpy, the population SD as a UserMeasure) over
    ``--resamples`` resamples against the built-in weighted SD of the same resamples
    (``userfair.bootstrap.uncertainty.weighted_sd``): seconds and ratio (target <= 2);
(b) a pure-numpy pair plugin (PUF-P-Cos's own term as a PairMeasure) on the dense route
    (row blocks of the cosine) against the built-in PUF-P-Cos on its dense matrix
    (``userfair.formulas.fairness.puf``, the similarity built once and not timed), and the plugin's
    streamed pass (only the pairs that share an item) against the same: seconds and ratios;
    the values agree to 1e-9 relative.
Best of ``--repeats`` for each timing; the machine and its load are printed with them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from measures import QK, synthetic  # noqa: E402
from streaming import machine  # noqa: E402
from userfair import plugins  # noqa: E402
from userfair.engine import plugin_routes  # noqa: E402


class PluginSD(plugins.UserMeasure):
    """The population SD of the per-user P, as a plugin would write it."""

    name, effectiveness, better, bounds = "PluginSD-P", "P", "lower", (0.0, 0.5)

    def compute(self, scores, weights):
        total = weights.sum()
        mean = weights @ scores / total
        return float(np.sqrt(weights @ (scores - mean) ** 2 / total))


class PluginPUF(plugins.PairMeasure):
    """PUF-P-Cos's term, as a plugin would write it."""

    name, effectiveness, similarity, better = "PluginPUF-P-Cos", "P", "Cos", "lower"
    bounds = (0.0, 1.0)

    def terms(self, s_u, s_v, sim):
        return sim * np.abs(s_u - s_v)


def best(function, repeats: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluated", type=int, default=QK["evaluated"])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from userfair.bootstrap.uncertainty import resample_weights, weighted_sd
    from userfair.files.inputs import load_inputs
    from userfair.formulas import effectiveness, fairness
    from userfair.similarity import pairwise

    plugins.load([f"{__name__}:PluginSD", f"{__name__}:PluginPUF"], entry_points=False)
    train, test, topk = synthetic(args.evaluated)
    inputs = load_inputs(train, test, topk, k=10)
    m = len(inputs.users)
    p = effectiveness.per_user(inputs.topk, inputs.relevant, 10)["P"]
    weights = resample_weights(m, args.resamples, seed=0)
    w = weights.astype(np.float64)
    out = {"machine": machine(), "evaluated": m, "resamples": args.resamples}

    builtin_t, builtin = best(lambda: weighted_sd(p, w, w.sum(axis=1)), args.repeats)
    plugin_t, plugin = best(
        lambda: plugin_routes.bootstrap_plugins(inputs, weights, 10, ["PluginSD-P"])["PluginSD-P"],
        args.repeats,
    )
    assert np.allclose(plugin, builtin, rtol=1e-9), "the plugin SD differs from the built-in"
    out["a"] = {"builtin_s": builtin_t, "plugin_s": plugin_t, "ratio": plugin_t / builtin_t}
    ratio = plugin_t / builtin_t
    print(f"(a) bootstrap, {args.resamples} resamples of {m} users: built-in weighted SD "
          f"{builtin_t:.3f} s, plugin {plugin_t:.3f} s, ratio {ratio:.2f}")  # fmt: skip

    rows = inputs.train_of_evaluated()
    cos = pairwise.compute("cos", rows, inputs.users)
    builtin_t, builtin = best(lambda: fairness.puf(p, cos.sim, device="cpu"), args.repeats)
    dense_t, dense = best(
        lambda: plugin_routes.evaluate_plugins(inputs, 10, ["PluginPUF-P-Cos"])[0][
            "PluginPUF-P-Cos"
        ],
        args.repeats,
    )
    assert math.isclose(dense, builtin, rel_tol=1e-9), (dense, builtin)
    cache: dict = {}
    pair_pass = plugin_routes._pass("PluginPUF-P-Cos", inputs, None, 2048, cache, "stream")
    stored_t, stored = best(lambda: pair_pass.mean(p), args.repeats)
    assert math.isclose(stored, builtin, rel_tol=1e-9), (stored, builtin)
    pair_pass.sparse_only = False
    all_t, _ = best(lambda: pair_pass.mean(p), args.repeats)
    out["b"] = {
        "builtin_s": builtin_t, "plugin_s": dense_t, "ratio": dense_t / builtin_t,
        "plugin_stored_pairs_s": stored_t, "plugin_every_pair_s": all_t,
    }  # fmt: skip
    print(f"(b) pair measure on {m} users: built-in PUF-P-Cos {builtin_t:.3f} s (dense "
          f"matrix given), plugin {dense_t:.3f} s (ratio {dense_t / builtin_t:.1f}; its "
          f"similarity blocks and range included), the plugin's pass alone {stored_t:.3f} s "
          f"over the pairs that share an item, {all_t:.3f} s over every pair")  # fmt: skip
    print(json.dumps(out["machine"]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
