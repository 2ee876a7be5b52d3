"""Benchmark of plugin measures against the built-ins of the same kind, in one sitting;
results go to docs/performance.md#plugins.

    python benchmarks/plugins.py [--evaluated 3514] [--resamples 1000] [--repeats 3]
        [--stream-users 100000]

On a QK-video-sized synthetic input (benchmarks/measures.py's, 3,514 evaluated users):
(a) the bootstrap of a per-user plugin (numpy, the population SD as a UserMeasure) over
    ``--resamples`` resamples against the built-in weighted SD of the same resamples
    (``userfair.formulas.spread.weighted_sd``): seconds and ratio (target <= 2);
(b) a pure-numpy pair plugin (PUF-P-Cos's own term as a PairMeasure) on the dense route
    (row blocks of the cosine) against the built-in PUF-P-Cos on its dense matrix
    (``userfair.formulas.fairness.puf``, the similarity built once and not timed), and the plugin's
    streamed pass (only the pairs that share an item) against the same: seconds and ratios;
    the values agree to 1e-9 relative;
(c) a pair plugin whose term is compiled with numba (PUF-P-Jacc's own term as
    ``PairMeasure.term``) on the streamed route at ``--stream-users`` QK-like users
    (benchmarks/streaming.py's synthetic users, about 20 train items each): its two
    compiled row passes (the Jaccard range, then the terms) against the built-in streamed
    passes' pair work for the same users (``pass_one`` and the pair part of ``pass_two``,
    which serve PUF-P-Jacc with the other pair measures); wall and CPU seconds, ratio
    (target <= 2), values equal to 1e-9 relative. Each timed once (minutes at 100,000);
(d) compiled pair plugins over Vec (16-dimensional user vectors) and RCos (graded rows) on
    the streamed route at ``--unit-users`` users: the row loops against the same plugin's
    row blocks (the route such a plugin took before the loops read unit rows); values equal
    to 1e-9 relative.
Best of ``--repeats`` for each timing; the machine and its load are printed with them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from measures import QK, synthetic  # noqa: E402
from streaming import machine  # noqa: E402
from userfair import plugins  # noqa: E402
from userfair.engine import generic_routes  # noqa: E402


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


@numba.njit
def puf_term(s_u, s_v, sim):
    return sim * abs(s_u - s_v)


class CompiledPUF(plugins.PairMeasure):
    """PUF-P-Jacc's term, compiled with numba: the streamed route runs it in its kernels."""

    name, effectiveness, similarity, better = "CompiledPUF-P-Jacc", "P", "Jacc", "lower"
    bounds = (0.0, 1.0)
    term = puf_term


class CompiledVec(CompiledPUF):
    """PUF-P-Vec's term, compiled: the cosine of the user vectors (dense unit rows)."""

    name, similarity = "CompiledPUF-P-Vec", "Vec"


class CompiledRCos(CompiledPUF):
    """PUF-P-RCos's term, compiled: the cosine of the graded train rows (sparse)."""

    name, similarity = "CompiledPUF-P-RCos", "RCos"


def compiled_unit(users: int) -> dict:
    """(d): compiled pair plugins over Vec and RCos on the streamed route, in the row loops
    (``generic_routes.compiled_mean``) against the route they took before, the same plugin's
    row blocks (``generic_routes._pass``): seconds, ratio, values equal to 1e-9."""
    import dataclasses

    import scipy.sparse as sp

    from streaming import K
    from streaming import synthetic as stream_inputs
    from userfair.formulas import effectiveness

    def graded(inputs, seed):
        train = sp.csr_matrix(inputs.train, dtype=np.float64)
        train.data = np.random.default_rng(seed).integers(1, 6, train.nnz).astype(np.float64)
        return dataclasses.replace(inputs, train_grades=train)

    inputs = graded(stream_inputs(users, 20.0), 0)
    vectors = np.random.default_rng(1).normal(size=(users, 16))
    p = effectiveness.per_user(inputs.topk, inputs.relevant, K)["P"]
    small = graded(stream_inputs(200, 20.0, seed=1), 1)  # compile the kernels first
    out = {"users": users, "dimensions": 16}
    for name in ("CompiledPUF-P-Vec", "CompiledPUF-P-RCos"):
        small_vectors = vectors[:200]
        generic_routes.compiled_mean(name, small, np.linspace(0, 1, 200), {}, vectors=small_vectors)
        generic_routes._pass(name, small, small_vectors, 2048, {}, "stream").mean(
            np.linspace(0, 1, 200)
        )
        loops_t, loops_cpu, loops = timed(
            lambda: generic_routes.compiled_mean(name, inputs, p, {}, vectors=vectors)
        )
        blocks_t, blocks_cpu, blocks = timed(
            lambda: generic_routes._pass(name, inputs, vectors, 2048, {}, "stream").mean(p)
        )
        assert math.isclose(loops, blocks, rel_tol=1e-9), (name, loops, blocks)
        out[name] = {
            "row_loops_s": loops_t, "row_loops_cpu_s": loops_cpu, "row_blocks_s": blocks_t,
            "row_blocks_cpu_s": blocks_cpu, "speed-up": blocks_t / loops_t, "value": loops,
        }  # fmt: skip
    return out


def timed(function) -> tuple[float, float, object]:
    """(wall s, CPU s of every thread, value) of one call."""
    clock, cpu = time.perf_counter(), time.process_time()
    value = function()
    return time.perf_counter() - clock, time.process_time() - cpu, value


def compiled_stream(users: int) -> dict:
    """(c): the compiled pair plugin against the built-in pair passes on ``users`` users."""
    from streaming import K
    from streaming import synthetic as stream_inputs
    from userfair.formulas import effectiveness
    from userfair.streamed import streaming

    inputs = stream_inputs(users, 20.0)
    rows = inputs.train_of_evaluated()
    p = effectiveness.per_user(inputs.topk, inputs.relevant, K)["P"]
    # compile both routes' kernels on a few users first: the timings are of the passes
    small = stream_inputs(200, 20.0, seed=1)
    streaming.stream_evaluate(small, k=K)
    generic_routes.compiled_mean("CompiledPUF-P-Jacc", small, np.linspace(0, 1, 200), {})
    one_t, one_cpu, stats = timed(lambda: streaming.pass_one(rows, users=inputs.users))
    two_t, two_cpu, two = timed(lambda: streaming.pass_two(inputs, stats, k=K))
    result = streaming.finish(inputs, stats, two)
    plugin_t, plugin_cpu, value = timed(
        lambda: generic_routes.compiled_mean("CompiledPUF-P-Jacc", inputs, p, {})
    )
    assert math.isclose(value, result["PUF-P-Jacc"], rel_tol=1e-9), (value, result["PUF-P-Jacc"])
    builtin_t = stats.seconds + two.seconds_pairs
    return {
        "users": users, "sharing_pairs": stats.sharing_pairs,
        "builtin_pass_one_s": stats.seconds, "builtin_pass_two_pairs_s": two.seconds_pairs,
        "builtin_pair_s": builtin_t, "builtin_wall_s": one_t + two_t,
        "builtin_cpu_s": one_cpu + two_cpu, "plugin_s": plugin_t, "plugin_cpu_s": plugin_cpu,
        "ratio": plugin_t / builtin_t, "value": value,
    }  # fmt: skip


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
    parser.add_argument("--stream-users", type=int, default=100_000, help="(c); 0: skip it")
    parser.add_argument("--unit-users", type=int, default=20_000, help="(d); 0: skip it")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from userfair.bootstrap.uncertainty import resample_weights
    from userfair.files.inputs import load_inputs
    from userfair.formulas import effectiveness, fairness
    from userfair.formulas.spread import Draws, weighted_sd
    from userfair.similarity import pairwise

    specs = [
        f"{__name__}:{name}"
        for name in ("PluginSD", "PluginPUF", "CompiledPUF", "CompiledVec", "CompiledRCos")
    ]
    plugins.load(specs, entry_points=False)
    train, test, topk = synthetic(args.evaluated)
    inputs = load_inputs(train, test, topk, k=10)
    m = len(inputs.users)
    p = effectiveness.per_user(inputs.topk, inputs.relevant, 10)["P"]
    weights = resample_weights(m, args.resamples, seed=0)
    draws = Draws.of(weights)
    out = {"machine": machine(), "evaluated": m, "resamples": args.resamples}

    builtin_t, builtin = best(lambda: weighted_sd(p, draws), args.repeats)
    plugin_t, plugin = best(
        lambda: generic_routes.bootstrap_generic(inputs, weights, 10, ["PluginSD-P"])["PluginSD-P"],
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
        lambda: generic_routes.evaluate_generic(inputs, 10, ["PluginPUF-P-Cos"])[0][
            "PluginPUF-P-Cos"
        ],
        args.repeats,
    )
    assert math.isclose(dense, builtin, rel_tol=1e-9), (dense, builtin)
    cache: dict = {}
    pair_pass = generic_routes._pass("PluginPUF-P-Cos", inputs, None, 2048, cache, "stream")
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
    if args.stream_users:
        out["c"] = c = compiled_stream(args.stream_users)
        print(f"(c) compiled pair plugin, streamed, {c['users']} users "
              f"({c['sharing_pairs']:.3g} pairs share an item): built-in pair passes "
              f"{c['builtin_pair_s']:.1f} s (pass one {c['builtin_pass_one_s']:.1f} s, pass "
              f"two's pairs {c['builtin_pass_two_pairs_s']:.1f} s), plugin "
              f"{c['plugin_s']:.1f} s wall, {c['plugin_cpu_s']:.1f} CPU s, "
              f"ratio {c['ratio']:.2f}")  # fmt: skip
    if args.unit_users:
        out["d"] = d = compiled_unit(args.unit_users)
        for name in ("CompiledPUF-P-Vec", "CompiledPUF-P-RCos"):
            e = d[name]
            print(f"(d) {name}, streamed, {d['users']} users: row loops {e['row_loops_s']:.1f} s "
                  f"wall ({e['row_loops_cpu_s']:.1f} CPU s), row blocks {e['row_blocks_s']:.1f} s "
                  f"({e['row_blocks_cpu_s']:.1f} CPU s): {e['speed-up']:.1f}x")  # fmt: skip
    print(json.dumps(out["machine"]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
