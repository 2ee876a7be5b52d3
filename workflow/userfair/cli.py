"""The ``userfair`` command: evaluate a top-k list against a split, outside the workflow.

userfair evaluate --train TRAIN --test TEST --topk TOPK [--format auto] [--valid VALID] [--k 10]
                  [--epsilon 0.05] [--envy-utility {precision,ideal}]
                  [--item-features FILE] [--gamma 1.0] [--block-size 2048]
                  [--device {auto,cpu,cuda,torch-cpu}] [--route {auto,dense,stream}]
                  [--user-groups FILE|activity:P|feature:NAME] [--user-features FILE]
                  [--resamples 0] [--level 0.95] [--seed 2024] [--json] [-v]
                  [--grade FIELD] [--user-vectors FILE] [--similarity {rcos,vec,genre}]
userfair compare  --train TRAIN --test TEST --topk A --topk B [evaluate's options]
                  [--resamples 1000]
userfair users    --train TRAIN --test TEST --topk TOPK [evaluate's options] [--out FILE]
                  [--worst N] [--worst-measure PUF-P-Cos]
"""

from __future__ import annotations

import json
import logging
import math
import sys

from userfair.cli_parser import parser


def _users(args) -> int:
    """``userfair users``: the per-user decomposition, written or printed as CSV."""
    from userfair.decomposition import decompose, worst_cases
    from userfair.engine import route as route_
    from userfair.files.inputs import load_inputs
    from userfair.files.io import InputError
    from userfair.formulas import groups
    from userfair.opt_in.variant_parts import variant_columns

    try:
        if args.out is not None:
            decompose.check_suffix(args.out)
        features = None
        if args.user_features is not None:
            features = groups.read_user_features(args.user_features)
        inputs = load_inputs(
            args.train, args.test, args.topk, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format, grade=args.grade,
        )  # fmt: skip
        vectors, extra = _variant_options(args, inputs)
        route = route_.choose_route(len(inputs.users), args.gamma, args.route, purpose="decompose")
        sims, stats = None, None
        if route == "dense":
            route_.check_memory(len(inputs.users), args.gamma)
            sims = decompose.similarities_of(inputs, None, args.gamma, args.block_size)
        else:
            from userfair.streamed import streaming

            stats = streaming.pass_one(
                inputs.train_of_evaluated(), gamma=args.gamma, genres=inputs.genres,
                users=inputs.users, block_size=args.block_size, device=args.device,
            )  # fmt: skip
        frame = decompose.decompose(
            inputs, k=args.k, epsilon=args.epsilon, gamma=args.gamma, similarities=sims,
            block_size=args.block_size, envy_utility=args.envy_utility, route=route,
            stats=stats, device=args.device,
        )  # fmt: skip
        if inputs.grades is not None or extra:  # the opt-in columns after the 18's
            columns = variant_columns(inputs, args.k, extra, vectors, route, args.block_size)
            frame = frame.assign(**columns)
        if features is not None:
            frame = decompose.join_features(frame, features, label=str(args.user_features))
        found = _groups(args, inputs, features)
        if found is not None:
            if "group" in frame.columns:
                raise ValueError("--user-features has a column 'group'; rename it")
            frame.insert(1, "group", groups.user_labels(found))
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
        sim, raw_range = worst_cases.worst_similarity(inputs, args.worst_measure, sims, stats)
        table = worst_cases.worst_cases(
            frame, sim, args.worst, args.worst_measure, args.neighbours, raw_range
        )
        stream = sys.stderr if args.out is None else sys.stdout
        print(f"the {len(table)} users most disadvantaged by {args.worst_measure}:", file=stream)
        for line in worst_cases.worst_lines(table, args.worst_measure, args.k):
            print(line, file=stream)
    return 0


def _groups(args, inputs, features=None):
    """The :class:`userfair.formulas.groups.Groups` of ``--user-groups`` (None without it); the
    dropped groups and users without a group are logged."""
    if not args.user_groups:
        return None
    from userfair.formulas import groups

    if features is None and args.user_features is not None:
        features = groups.read_user_features(args.user_features)
    found = groups.groups_of(inputs, args.user_groups, features, str(args.user_features))
    if len(found.names) < 2:
        logging.getLogger("userfair").warning("fewer than 2 groups: UserMAD is NaN")
    if found.dropped or found.unassigned:
        logging.getLogger("userfair").warning(groups.describe(found))
    return found


def _measure_keys(result: dict) -> list[str]:
    """The measures of ``result``: the 18 defaults, then the opt-in measures (graded, PUF
    variants) and the group measures when given."""
    from userfair.measures import FAIR_GROUP, NAMES, OPT_IN, plugin_names

    return list(NAMES) + [key for key in OPT_IN + FAIR_GROUP + plugin_names() if key in result]


def _group_lines(result: dict) -> list[str]:
    """The groups record as lines: how, sizes and mean P, NDCG (with intervals if any)."""
    record = result.get("groups")
    if not record:
        return []
    from userfair.formulas.groups import mean_column

    intervals = result.get("intervals", {})
    first = record["rows"][0] if record["rows"] else {}
    scores = [key for key in first if key not in ("group", "users")]
    lines = [f"groups by {record['by']}"]
    lines.append(f"{'group':<16} {'users':>7} " + " ".join(f"{s:>30}" for s in scores))
    for row in record["rows"]:
        cells = []
        for score in scores:
            low, high = intervals.get(mean_column(score, row["group"]), (None, None))
            bounds = "" if low is None else f" [{_number(low)}, {_number(high)}]"
            cells.append(f"{_number(row[score]) + bounds:>30}")
        lines.append(f"{row['group']:<16} {row['users']:>7} " + " ".join(cells))
    if record["dropped"]:
        lines.append("dropped (no evaluated user): " + ", ".join(record["dropped"]))
    if record["unassigned"]:
        lines.append(f"evaluated users without a group: {record['unassigned']}")
    return lines


def format_table(result: dict) -> str:
    """A readable table of the measures and their seconds; with a sampled ``estimate``,
    each estimated measure's SE and interval beside its value."""
    record = result.get("estimate")
    estimated = record["measures"] if record else {}
    spread = f" {'SE':>10} {'low':>10} {'high':>10}" if record else ""
    lines = [f"{'measure':<16} {'value':>10}{spread} {'seconds':>9}"]
    for key in _measure_keys(result):
        cells = f"{_number(result[key]):>10}"
        if key in estimated:
            entry = estimated[key]
            cells += "".join(f" {_number(entry[part]):>10}" for part in ("se", "low", "high"))
        elif record:
            cells += " " * len(spread)
        lines.append(f"{key:<16} {cells} {result['seconds'].get(key, 0.0):>9.3f}")
    for name in [key for key in result["seconds"] if key.startswith("similarity-")]:
        lines.append(f"{name:<16} {'':>10}{' ' * len(spread)} {result['seconds'][name]:>9.3f}")
    if record:
        lines.append(_estimate_line(record))
    lines.append("conventions: " + ", ".join(f"{k}={v}" for k, v in result["conventions"].items()))
    return "\n".join(lines + _group_lines(result))


def _estimate_line(record: dict) -> str:
    return (
        f"SE, low, high: estimated from {record['rows']} of {record['users']} users "
        f"(a uniform sample, share {record['share']:g}, seed {record['seed']}) against all "
        f"users, {record['level']:g} intervals; the other measures are exact"
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "claims":
        from userfair.claims_view import main as claims

        return claims(args.run, args.color)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    if getattr(args, "measure", None) is not None and _load_plugins(args):
        return 2
    if args.command == "compare":
        return _compare(args)
    if args.command == "users":
        return _users(args)
    if args.resamples != 0:
        if args.sample_users is not None:
            print(
                "userfair: error: --sample-users with --resamples: the bootstrap resamples the "
                "users on the dense route, where every measure is exact and cheap; give one",
                file=sys.stderr,
            )
            return 2
        return _evaluate_with_intervals(args)
    # Imported here, not at the top: `userfair --help` stays free of numpy and pandas.
    from userfair.engine import route as route_
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs
    from userfair.files.io import InputError

    try:
        inputs = load_inputs(
            args.train, args.test, args.topk, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format, grade=args.grade,
        )  # fmt: skip
        vectors, extra = _variant_options(args, inputs)
        route = route_.choose_route(
            len(inputs.users), args.gamma, args.route, sampled=args.sample_users is not None
        )
        result = evaluate(
            inputs, k=args.k, epsilon=args.epsilon, gamma=args.gamma,
            block_size=args.block_size, device=args.device, envy_utility=args.envy_utility,
            route=route, extra_similarities=extra, user_vectors=vectors,
            groups=_groups(args, inputs), sample_users=args.sample_users, seed=args.seed,
        )  # fmt: skip
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=True))
    else:
        print(format_table(result))
    return 0


def _load_plugins(args) -> bool:
    """Load the plugin measures of ``--measure`` and the entry points (docs/plugins.md);
    True after printing the one-line error of a bad plugin."""
    from userfair.plugins import PluginError, load

    try:
        load(args.measure, entry_points=not args.no_entry_points)
    except PluginError as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return True
    return False


def _variant_options(args, inputs) -> tuple:
    """(user vectors or None, extra similarity names) of --user-vectors and --similarity."""
    from userfair.similarity.registry import read_user_vectors

    vectors, extra = None, list(getattr(args, "similarity", []))
    if getattr(args, "user_vectors", None) is not None:
        vectors = read_user_vectors(args.user_vectors, inputs.users)
        extra.append("vec")
    return vectors, extra


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
    from userfair.bootstrap import uncertainty
    from userfair.evaluate import evaluate
    from userfair.files.inputs import load_inputs
    from userfair.opt_in.variant_uncertainty import bootstrap_variants

    options = _measure_options(args)
    runs = []
    sims = weights = found = None
    for path in topk_paths:
        inputs = load_inputs(
            args.train, args.test, path, k=args.k, item_features=args.item_features,
            valid=args.valid, topk_format=args.format, grade=getattr(args, "grade", None),
        )  # fmt: skip
        vectors, extra = _variant_options(args, inputs)
        if sims is None:
            sims = uncertainty.dataset_similarities(inputs, args.gamma, args.block_size)
            weights = uncertainty.resample_weights(len(inputs.users), args.resamples, args.seed)
            found = _groups(args, inputs)
        point = evaluate(
            inputs, similarities=sims, extra_similarities=extra, user_vectors=vectors,
            groups=found, **options,
        )  # fmt: skip
        frame = uncertainty.bootstrap(inputs, weights, similarities=sims, groups=found, **options)
        if inputs.grades is not None or extra:  # the opt-in measures' resamples beside
            more = bootstrap_variants(inputs, weights, args.k, extra, vectors, args.block_size)
            for column in more.columns:
                frame[column] = more[column].to_numpy()
        runs.append((point, frame))
    return runs


def _values(point: dict) -> dict:
    """``point``'s measures with the group means keyed as the bootstrap frame's columns."""
    from userfair.formulas.groups import record_means

    return {**point, **(record_means(point["groups"]) if "groups" in point else {})}


def _evaluate_with_intervals(args) -> int:
    """``evaluate --resamples N``: the point estimates plus percentile intervals."""
    from userfair.bootstrap import inference
    from userfair.files.io import InputError

    try:
        _check_bootstrap(args, least=1)
        [(result, frame)] = _bootstrapped(args, [args.topk])
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    found = inference.intervals(frame, args.level)
    result["intervals"] = {key: [found[key][0], found[key][1]] for key in frame.columns}
    result["resamples"] = args.resamples
    result["level"] = args.level
    result["seed"] = args.seed
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=True))
        return 0
    lines = [f"{'measure':<16} {'value':>10} {'low':>10} {'high':>10} {'seconds':>9}"]
    for key in _measure_keys(result):
        low, high = result["intervals"][key]
        cells = " ".join(f"{_number(x):>10}" for x in (result[key], low, high))
        lines.append(f"{key:<16} {cells} {result['seconds'].get(key, 0.0):>9.3f}")
    for name in [key for key in result["seconds"] if key.startswith("similarity-")]:
        lines.append(f"{name:<16} {'':>32} {result['seconds'][name]:>9.3f}")
    lines.append(_bootstrap_line(args))
    lines.append(_conventions_line(result))
    print("\n".join(lines + _group_lines(result)))
    return 0


def _compare(args) -> int:
    """``userfair compare``: paired bootstrap differences B - A of every measure."""
    from userfair.bootstrap import inference
    from userfair.files.io import InputError

    try:
        if len(args.topk) != 2:
            raise ValueError(f"compare needs exactly two --topk files, got {len(args.topk)}")
        _check_bootstrap(args, least=1)
        (point_a, frame_a), (point_b, frame_b) = _bootstrapped(args, args.topk)
    except (InputError, ValueError) as error:
        print(f"userfair: error: {error}", file=sys.stderr)
        return 2
    point_a, point_b = _values(point_a), _values(point_b)
    table = inference.compare(frame_a, frame_b, point_a, point_b, args.level)
    keys = list(frame_a.columns)  # the 18, then the group measures and means if grouped
    if args.json:
        fields = ("difference", "low", "high", "p")
        record = {
            "measures": {
                key: {field: float(table.loc[key, field]) for field in fields} for key in keys
            },
            "resamples": args.resamples,
            "level": args.level,
            "seed": args.seed,
            "a": {"topk": str(args.topk[0]), "values": {key: point_a[key] for key in keys}},
            "b": {"topk": str(args.topk[1]), "values": {key: point_b[key] for key in keys}},
            "conventions": point_a["conventions"],
        }
        print(json.dumps(record, indent=2, allow_nan=True))
        return 0
    header = ("A", "B", "B-A", "low", "high", "p")
    lines = [f"{'measure':<16} " + " ".join(f"{h:>10}" for h in header)]
    for key in keys:
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
