"""The ``userfair`` command: evaluate a top-k list against a split, outside the workflow.

userfair evaluate --train TRAIN --test TEST --topk TOPK [--format auto] [--valid VALID] [--k 10]
                  [--epsilon 0.05] [--envy-utility {precision,ideal}]
                  [--item-features FILE] [--gamma 1.0] [--block-size 2048]
                  [--device {auto,cpu,cuda,torch-cpu}] [--route {auto,dense,stream}]
                  [--resamples 0] [--level 0.95] [--seed 2024] [--json] [-v]
userfair compare  --train TRAIN --test TEST --topk A --topk B [evaluate's options]
                  [--resamples 1000]
userfair users    --train TRAIN --test TEST --topk TOPK [evaluate's options] [--out FILE]
                  [--user-features FILE] [--worst N] [--worst-measure PUF-P-Cos]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys

# The workflow's default seed (config key seed; a test checks they agree): the command's
# resamples equal the workflow's for the same evaluated users.
DEFAULT_SEED = 2024


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
        help="top-k lists: .parquet or text with user_id, item_id, rank (1-based); a TREC run; "
        "or a user/item/score table (see --format)",
    )  # fmt: skip
    run.add_argument(
        "--format", default="auto", choices=["auto", "native", "trec", "scores"],
        help="format of --topk (auto: detected; trec: 'qid Q0 docid rank score tag', ranked "
        "by score; scores: user, item, score, ranked by score, ties by item id)",
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
        "20,000 evaluated users",
    )  # fmt: skip
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    run.add_argument(
        "--resamples", type=int, default=0,
        help="bootstrap resamples of the evaluated users: adds percentile intervals (0: none)",
    )  # fmt: skip
    run.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    run.add_argument(
        "--seed", type=int, default=DEFAULT_SEED,
        help=f"seed of the resamples ({DEFAULT_SEED}, the workflow's default seed)",
    )  # fmt: skip
    _compare_parser(commands, run)
    _users_parser(commands, run)
    return parser


def _users_parser(commands, evaluate_parser) -> None:
    """``userfair users``: evaluate's inputs and options, plus the output file, the user
    features and the worst cases (docs/method.md#who)."""
    users = commands.add_parser(
        "users",
        help="each evaluated user's share of every fairness measure, with user attributes",
        description="One row per evaluated user: P, NDCG, the user's share of each fairness "
        "measure (each column sums to the measure of `userfair evaluate`), the signed parts "
        "and the user attributes (docs/method.md#who). --route as for evaluate: dense holds "
        "the m x m similarities, stream fills the same columns in row passes (numba, CPU; "
        "--device is accepted and not used).",
    )
    users.add_argument(
        "--out", default=None,
        help="write the frame to this .parquet or .csv file (atomic); default: CSV on stdout",
    )  # fmt: skip
    users.add_argument(
        "--user-features", default=None,
        help="RecBole .user file (user_id and feature columns) joined to the frame",
    )  # fmt: skip
    users.add_argument(
        "--worst", type=int, default=0,
        help="print the N most disadvantaged users and their better-served neighbours",
    )  # fmt: skip
    users.add_argument(
        "--worst-measure", default="PUF-P-Cos",
        choices=["PUF-P-Cos", "PUF-P-Jacc", "PUF-NDCG-Cos", "PUF-NDCG-Jacc"],
        help="the PUF measure whose disadvantaged part ranks the worst cases (PUF-P-Cos)",
    )  # fmt: skip
    users.add_argument(
        "--neighbours", type=int, default=10,
        help="most similar users looked at for each worst case (10)",
    )  # fmt: skip
    for action in evaluate_parser._actions:
        if action.dest not in ("help", "json", "resamples", "level", "seed"):
            users._add_action(action)


def _users(args) -> int:
    """``userfair users``: the per-user decomposition, written or printed as CSV."""
    from userfair import decompose
    from userfair.inputs import load_inputs
    from userfair.io import InputError

    try:
        if args.out is not None:
            decompose.check_suffix(args.out)
        if args.worst < 0 or args.neighbours < 1:
            raise ValueError("--worst must be >= 0 and --neighbours >= 1")
        features = None
        if args.user_features is not None:
            features = decompose.read_user_features(args.user_features)
        inputs = load_inputs(
            args.train, args.test, args.topk, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format,
        )  # fmt: skip
        route = decompose.choose_route(len(inputs.users), args.gamma, args.route)
        sims, stats = None, None
        if route == "dense":
            decompose.check_memory(len(inputs.users), args.gamma)
            sims = decompose.similarities_of(inputs, None, args.gamma, args.block_size)
        else:
            from userfair import streaming

            stats = streaming.pass_one(
                inputs.train_of_evaluated(), gamma=args.gamma, genres=inputs.genres,
                users=inputs.users, block_size=args.block_size,
            )  # fmt: skip
        frame = decompose.decompose(
            inputs, k=args.k, epsilon=args.epsilon, gamma=args.gamma, similarities=sims,
            block_size=args.block_size, envy_utility=args.envy_utility, route=route,
            stats=stats,
        )  # fmt: skip
        if features is not None:
            frame = decompose.join_features(frame, features, label=str(args.user_features))
        if args.out is not None:
            decompose.write_users(frame, args.out)
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    if args.out is None:
        frame.to_csv(sys.stdout, index=False)
    else:
        print(f"wrote {len(frame)} users x {frame.shape[1]} columns to {args.out}")
    if args.worst:
        sim, raw_range = decompose.worst_similarity(inputs, args.worst_measure, sims, stats)
        table = decompose.worst_cases(
            frame, sim, args.worst, args.worst_measure, args.neighbours, raw_range
        )
        stream = sys.stderr if args.out is None else sys.stdout
        print(f"the {len(table)} users most disadvantaged by {args.worst_measure}:", file=stream)
        for line in decompose.worst_lines(table, args.worst_measure, args.k):
            print(line, file=stream)
    return 0


def _compare_parser(commands, evaluate_parser) -> None:
    """``userfair compare``: evaluate's options (shared, as argparse's ``parents`` shares
    them), with --topk given twice and 1000 resamples by default."""
    paired = commands.add_parser(
        "compare",
        help="paired bootstrap comparison of two top-k lists on the same split",
        description="Differences B - A of every measure between two top-k lists of the same "
        "split, each with a percentile interval and a two-sided bootstrap p-value; both "
        "lists are resampled with the same users (docs/method.md#uncertainty).",
    )
    paired.add_argument(
        "--topk", required=True, action="append",
        help="top-k lists A, then B (--topk A --topk B), as for evaluate",
    )  # fmt: skip
    paired.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    for action in evaluate_parser._actions:
        if action.dest not in ("help", "topk", "resamples"):
            paired._add_action(action)


def format_table(result: dict) -> str:
    """A readable two-column table of the measures and their seconds."""
    from userfair.measures import NAMES

    lines = [f"{'measure':<16} {'value':>10} {'seconds':>9}"]
    for key in NAMES:
        value = result[key]
        text = "nan" if math.isnan(value) else f"{value:.6f}"
        lines.append(f"{key:<16} {text:>10} {result['seconds'].get(key, 0.0):>9.3f}")
    for name in ("similarity-cos", "similarity-jacc"):
        lines.append(f"{name:<16} {'':>10} {result['seconds'][name]:>9.3f}")
    lines.append("conventions: " + ", ".join(f"{k}={v}" for k, v in result["conventions"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    if args.command == "compare":
        return _compare(args)
    if args.command == "users":
        return _users(args)
    if args.resamples != 0:
        return _evaluate_with_intervals(args)
    # Imported here, not at the top: `userfair --help` stays free of numpy and pandas.
    from userfair.evaluate import evaluate
    from userfair.inputs import load_inputs
    from userfair.io import InputError

    try:
        inputs = load_inputs(
            args.train, args.test, args.topk, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format,
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


def _measure_options(args) -> dict:
    return {
        "k": args.k, "epsilon": args.epsilon, "gamma": args.gamma,
        "block_size": args.block_size, "device": args.device, "envy_utility": args.envy_utility,
    }  # fmt: skip


def _check_bootstrap(args, least: int) -> None:
    if args.resamples < least:
        raise ValueError(f"--resamples must be >= {least}, got {args.resamples}")
    if not 0.0 < args.level < 1.0:
        raise ValueError(f"--level must lie in (0, 1), got {args.level}")


def _bootstrapped(args, topk_paths: list[str]):
    """Inputs, point estimates and bootstrap frames of each top-k file, on the same
    similarities and the same resampled users."""
    from userfair import uncertainty
    from userfair.evaluate import evaluate
    from userfair.inputs import load_inputs

    options = _measure_options(args)
    runs = []
    sims = weights = None
    for path in topk_paths:
        inputs = load_inputs(
            args.train, args.test, path, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format,
        )  # fmt: skip
        if sims is None:
            sims = uncertainty.dataset_similarities(inputs, args.gamma, args.block_size)
            weights = uncertainty.resample_weights(len(inputs.users), args.resamples, args.seed)
        point = evaluate(inputs, similarities=sims, **options)
        frame = uncertainty.bootstrap(inputs, weights, similarities=sims, **options)
        runs.append((point, frame))
    return runs


def _evaluate_with_intervals(args) -> int:
    """``evaluate --resamples N``: the point estimates plus percentile intervals."""
    from userfair import inference
    from userfair.io import InputError
    from userfair.measures import NAMES

    try:
        _check_bootstrap(args, least=1)
        [(result, frame)] = _bootstrapped(args, [args.topk])
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    found = inference.intervals(frame, args.level)
    result["intervals"] = {key: [found[key][0], found[key][1]] for key in NAMES}
    result["resamples"] = args.resamples
    result["level"] = args.level
    result["seed"] = args.seed
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=True))
        return 0
    lines = [f"{'measure':<16} {'value':>10} {'low':>10} {'high':>10} {'seconds':>9}"]
    for key in NAMES:
        low, high = result["intervals"][key]
        cells = " ".join(f"{_number(x):>10}" for x in (result[key], low, high))
        lines.append(f"{key:<16} {cells} {result['seconds'].get(key, 0.0):>9.3f}")
    for name in ("similarity-cos", "similarity-jacc"):
        lines.append(f"{name:<16} {'':>32} {result['seconds'][name]:>9.3f}")
    lines.append(_bootstrap_line(args))
    lines.append(_conventions_line(result))
    print("\n".join(lines))
    return 0


def _compare(args) -> int:
    """``userfair compare``: paired bootstrap differences B - A of every measure."""
    from userfair import inference
    from userfair.io import InputError
    from userfair.measures import NAMES

    try:
        if len(args.topk) != 2:
            raise ValueError(f"compare needs exactly two --topk files, got {len(args.topk)}")
        _check_bootstrap(args, least=1)
        (point_a, frame_a), (point_b, frame_b) = _bootstrapped(args, args.topk)
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    table = inference.compare(frame_a, frame_b, point_a, point_b, args.level)
    if args.json:
        fields = ("difference", "low", "high", "p")
        record = {
            "measures": {
                key: {field: float(table.loc[key, field]) for field in fields} for key in NAMES
            },
            "resamples": args.resamples,
            "level": args.level,
            "seed": args.seed,
            "a": {"topk": str(args.topk[0]), "values": {key: point_a[key] for key in NAMES}},
            "b": {"topk": str(args.topk[1]), "values": {key: point_b[key] for key in NAMES}},
            "conventions": point_a["conventions"],
        }
        print(json.dumps(record, indent=2, allow_nan=True))
        return 0
    header = ("A", "B", "B-A", "low", "high", "p")
    lines = [f"{'measure':<16} " + " ".join(f"{h:>10}" for h in header)]
    for key in NAMES:
        row = table.loc[key]
        values = (point_a[key], point_b[key], row["difference"], row["low"], row["high"])
        cells = " ".join(f"{_number(x):>10}" for x in values)
        lines.append(f"{key:<16} {cells} {_number(row['p'], 4):>10}")
    lines.append(_bootstrap_line(args) + " (paired: the same users for A and B)")
    lines.append(_conventions_line(point_a))
    print("\n".join(lines))
    return 0


def _number(value: float, digits: int = 6) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def _bootstrap_line(args) -> str:
    return (
        f"intervals: {args.level:g} percentile bootstrap over the evaluated users, "
        f"{args.resamples} resamples, seed {args.seed}"
    )


def _conventions_line(result: dict) -> str:
    return "conventions: " + ", ".join(f"{k}={v}" for k, v in result["conventions"].items())


if __name__ == "__main__":
    sys.exit(main())
