"""Benchmark of the generic UF engine (userfair.engine.uf_engine) against the fused UF, in one
sitting; results go to docs/performance.md#uf-variants.

    python benchmarks/uf_variants.py [--sizes 3514 20000 50000] [--dense-max 20000]
        [--blocks-max 50000] [--repeats 2] [--json out.json]

On benchmarks/streaming.py's QK-like synthetic users (about 19 train items each, 20,000
items, k = 10), for each size: UF-Jacc (the UF construction over the raw Jaccard, declared
as a variant: what a UF variant costs) by the generic engine, on its compiled row loops (the
streamed route's, for Cos and Jacc) and on its numpy row blocks (every other similarity,
and the dense route; sizes up to ``--blocks-max``), against the
fused UF of the same users: on the dense route (``userfair.formulas.fairness.uf`` on the
(m, m) raw Jaccard, built once and not timed, as ``evaluate`` reports UF's seconds), where
m <= ``--dense-max``, and on the streamed route (pass one and pass two of
``userfair.streamed.streaming``, which serve UF with PUF-*-Jacc and the envy measures: the
naive bound of what UF costs there). The generic engine's time includes building its
similarity (blocks, or the rows and the item cosines of the loops). The values must agree
to 1e-9 relative. Best of ``--repeats``; the machine and its load are printed with the rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from streaming import DENSITIES, K, machine, synthetic  # noqa: E402
from userfair.engine import uf_engine  # noqa: E402
from userfair.formulas import fairness  # noqa: E402
from userfair.similarity import pairwise, registry  # noqa: E402
from userfair.streamed import streaming  # noqa: E402


def best(repeats: int, run):
    """(value, wall s, CPU s) of the fastest of ``repeats`` runs."""
    found = None
    for _ in range(repeats):
        clock, cpu = time.perf_counter(), time.process_time()
        value = run()
        row = (value, time.perf_counter() - clock, time.process_time() - cpu)
        found = row if found is None or row[1] < found[1] else found
    return found


def one_size(m: int, dense_max: int, blocks_max: int, repeats: int) -> dict:
    inputs = synthetic(m, DENSITIES["qk"])
    rows = inputs.train_of_evaluated()
    block = registry.block_function("jacc", registry.SimilarityData(rows))
    out = {"users": m, "train_interactions": int(rows.nnz)}
    value, wall, cpu = best(repeats, lambda: uf_engine.compiled_value("Jacc", inputs, K))
    out["compiled"] = {"value": value, "wall_s": wall, "cpu_s": cpu}
    if m <= blocks_max:
        value, wall, cpu = best(
            repeats, lambda: uf_engine.value(block, inputs.topk, inputs.train, K)
        )
        out["generic"] = {"value": value, "wall_s": wall, "cpu_s": cpu}
    if m <= dense_max:
        raw = pairwise.compute("jacc", rows, inputs.users).raw()
        fused, wall, cpu = best(
            repeats, lambda: fairness.uf(inputs.topk, inputs.train, raw, k=K, device="cpu")
        )
        out["dense"] = {"value": fused, "wall_s": wall, "cpu_s": cpu}
        del raw

    def streamed():
        stats = streaming.pass_one(rows, users=inputs.users)
        result = streaming.stream_evaluate(inputs, k=K, stats=stats)
        return result["UF"]

    fused, wall, cpu = best(repeats, streamed)
    out["stream"] = {"value": fused, "wall_s": wall, "cpu_s": cpu}
    for route in ("dense", "stream"):
        for engine in ("generic", "compiled"):
            if route in out and engine in out:
                reference = out[route]["value"]
                gap = abs(out[engine]["value"] - reference) / abs(reference)
                assert gap <= 1e-9, (m, route, engine, out[engine]["value"], reference)
                ratio = out[engine]["wall_s"] / out[route]["wall_s"]
                out[route][f"{engine}_over_fused_wall"] = ratio
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[3514, 20000, 50000])
    parser.add_argument("--dense-max", type=int, default=20000)
    parser.add_argument("--blocks-max", type=int, default=50000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = {"machine": machine(), "rows": []}
    print(json.dumps(found["machine"]), flush=True)
    for m in args.sizes:
        row = one_size(m, args.dense_max, args.blocks_max, args.repeats)
        found["rows"].append(row)
        print(json.dumps(row), flush=True)
    found["load_after"] = machine()["load"]
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
