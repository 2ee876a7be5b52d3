"""The ``userfair`` command: evaluate a top-k list against a split, outside the workflow.

userfair evaluate --train TRAIN --test TEST --topk TOPK [--valid VALID] [--k 10]
                  [--epsilon 0.05] [--envy-utility {precision,ideal}]
                  [--item-features FILE] [--gamma 1.0] [--block-size 2048]
                  [--device auto] [--route auto] [--json] [-v]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys

from userfair.io import InputError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="userfair", description="Individual user fairness measures of top-k lists."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "evaluate",
        help="every effectiveness and fairness measure of a top-k list",
        description="Evaluated users are the users of TEST. Prints a table, or JSON.",
    )
    run.add_argument("--train", required=True, help="RecBole .inter file of the train split")
    run.add_argument("--test", required=True, help="RecBole .inter file of the test split")
    run.add_argument(
        "--valid",
        help="RecBole .inter file of the validation split: its items may appear in the lists",
    )
    run.add_argument(
        "--topk", required=True,
        help="top-k lists: .parquet or tab-separated with user_id, item_id, rank (1-based)",
    )  # fmt: skip
    run.add_argument("--k", type=int, default=10, help="list length (default 10)")
    run.add_argument("--epsilon", type=float, default=0.05, help="PEU threshold (0.05)")
    run.add_argument(
        "--envy-utility", default="precision", choices=["precision", "ideal"],
        help="utility of a list for ME/MME/PEU: precision = |L & R_u| / k (default), "
        "ideal = |L & R_u| / min(k, |R_u|)",
    )  # fmt: skip
    run.add_argument(
        "--item-features", default=None,
        help="RecBole .item file with a genre column (needed for --gamma < 1)",
    )  # fmt: skip
    run.add_argument(
        "--gamma", type=float, default=1.0,
        help="UF similarity: gamma * raw Jaccard + (1 - gamma) * genre similarity (1.0)",
    )  # fmt: skip
    run.add_argument("--block-size", type=int, default=2048, help="rows per block (2048)")
    run.add_argument(
        "--device", default="auto", choices=["auto", "cpu", "cuda", "torch-cpu"],
        help="where the block products run (auto: CUDA when present, else numpy)",
    )  # fmt: skip
    run.add_argument(
        "--route", default="auto", choices=["auto", "dense", "stream"],
        help="dense (m x m similarity matrices) or stream (row passes, never m x m); auto: "
        "stream when the dense matrices would exceed half the available memory or above "
        "50,000 evaluated users",
    )  # fmt: skip
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return parser


def format_table(result: dict) -> str:
    """A readable two-column table of the measures and their seconds."""
    from userfair.evaluate import KEYS

    lines = [f"{'measure':<16} {'value':>10} {'seconds':>9}"]
    for key in KEYS:
        value = result[key]
        text = "nan" if math.isnan(value) else f"{value:.6f}"
        lines.append(f"{key:<16} {text:>10} {result['seconds'].get(key, 0.0):>9.3f}")
    for name in ("similarity-cos", "similarity-jacc"):
        lines.append(f"{name:<16} {'':>10} {result['seconds'][name]:>9.3f}")
    lines.append(
        "conventions: " + ", ".join(f"{k}={v}" for k, v in result["conventions"].items())
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    from userfair.evaluate import evaluate
    from userfair.inputs import load_inputs

    try:
        inputs = load_inputs(
            args.train, args.test, args.topk, k=args.k, item_features=args.item_features,
            valid=args.valid,
        )  # fmt: skip
        result = evaluate(
            inputs, k=args.k, epsilon=args.epsilon, gamma=args.gamma,
            block_size=args.block_size, device=args.device, envy_utility=args.envy_utility,
            route=args.route,
        )  # fmt: skip
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=True))
    else:
        print(format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
