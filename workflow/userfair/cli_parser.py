"""The ``userfair`` command's arguments: the parsers of ``evaluate``, ``compare``, ``users``
and ``claims`` (``python -m userfair.cli --help``). Light on purpose: argparse and the shared
bounds (:mod:`userfair.bounds`) only, so ``userfair evaluate --help`` loads no numpy."""

from __future__ import annotations

import argparse

from userfair.bounds import option
from userfair.measures import FAIR_PUF

# The workflow's default seed (config key seed; a test checks they agree): the command's
# resamples equal the workflow's for the same evaluated users.
DEFAULT_SEED = 2024


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="userfair", description="Individual user fairness measures of top-k lists."
    )
    commands = top.add_subparsers(dest="command", required=True)
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
    run.add_argument("--k", type=option("k"), default=10, help="list length (default 10)")
    run.add_argument("--epsilon", type=option("epsilon"), default=0.05, help="PEU threshold (0.05)")
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
        "--gamma", type=option("gamma"), default=1.0,
        help="UF similarity: gamma * raw Jaccard + (1 - gamma) * genre similarity (1.0)",
    )  # fmt: skip
    run.add_argument(
        "--block-size", type=option("block-size"), default=2048, help="rows per block (2048)"
    )
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
    run.add_argument(
        "--grade", default=None, metavar="FIELD",
        help="numeric field of TRAIN/TEST holding each interaction's grade (e.g. rating): "
        "adds gNDCG, SD-gNDCG, Gini-gNDCG and PUF with gNDCG and RCos (opt-in measures)",
    )  # fmt: skip
    run.add_argument(
        "--user-vectors", default=None, metavar="FILE",
        help="parquet/CSV of user vectors (user_id + numeric columns): adds PUF-{P,NDCG}-Vec",
    )  # fmt: skip
    run.add_argument(
        "--similarity", action="append", default=[], choices=["rcos", "vec", "genre"],
        help="add PUF with this similarity (repeatable; genre needs --item-features)",
    )  # fmt: skip
    run.add_argument(
        "--user-groups", default=None, metavar="FILE|activity:P|feature:NAME",
        help="adds the group measures UserMAD-P, UserMAD-NDCG and each group's size and mean "
        "P, NDCG: groups from a file (user_id, group; .csv, .tsv, .parquet), the most active "
        "share P of the evaluated users by train items against the rest (activity: 0.05), or "
        "a column of --user-features (docs/method.md#groups)",
    )  # fmt: skip
    run.add_argument(
        "--user-features", default=None,
        help="RecBole .user file (user_id and feature columns): feature:NAME reads it; "
        "`userfair users` joins it to the frame",
    )  # fmt: skip
    run.add_argument(
        "--measure", action="append", default=[], metavar="MODULE:CLASS",
        help="a plugin measure or user similarity (docs/plugins.md), repeatable; installed "
        "packages' entry points (group userfair.measures) are loaded too",
    )  # fmt: skip
    run.add_argument(
        "--no-entry-points", action="store_true",
        help="load only the --measure plugins, not the installed entry points",
    )  # fmt: skip
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    run.add_argument(
        "--resamples", type=option("resamples"), default=0,
        help="bootstrap resamples of the evaluated users: adds percentile intervals (0: none)",
    )  # fmt: skip
    run.add_argument("--level", type=option("level"), default=0.95, help="interval level (0.95)")
    run.add_argument(
        "--seed", type=option("seed"), default=DEFAULT_SEED,
        help=f"seed of the resamples ({DEFAULT_SEED}, the workflow's default seed)",
    )  # fmt: skip
    run.add_argument(
        "--sample-users", type=option("sample-users"), default=None, metavar="SHARE",
        help="estimate the pair measures ME, MME, PEU, UF, PUF-*-Jacc from a uniform sample of "
        "this share of the users (0 < SHARE <= 1; --seed) against all users, with a standard "
        "error and an interval (streamed route; docs/method.md#estimate)",
    )  # fmt: skip
    compare_parser(commands, run)
    users_parser(commands, run)
    claims_parser(commands)
    return top


def claims_parser(commands) -> None:
    """``userfair claims RUN_DIR``: the paper's claims as a workflow run checked them."""
    claims = commands.add_parser(
        "claims",
        help="the paper's claims checked on a workflow run, one line a claim",
        description="Prints RUN_DIR/results/tables/claims.csv (rule claims of the workflow, "
        "docs/analyses.md#claims): each claim's verdict per dataset with its evidence.",
    )
    claims.add_argument("run", metavar="RUN_DIR", help="the run's directory, or its claims.csv")
    claims.add_argument(
        "--color", default="auto", choices=["auto", "always", "never"],
        help="colour the verdicts (auto: on a terminal, unless NO_COLOR is set)",
    )  # fmt: skip


def users_parser(commands, evaluate_parser) -> None:
    """``userfair users``: evaluate's inputs and options, plus the output file, the user
    features and the worst cases (docs/method.md#who)."""
    users = commands.add_parser(
        "users",
        help="each evaluated user's share of every fairness measure, with user attributes",
        description="One row per evaluated user: P, NDCG, the user's share of each fairness "
        "measure (each column sums to the measure of `userfair evaluate`), the signed parts "
        "and the user attributes (docs/method.md#who). --route as for evaluate: dense holds "
        "the m x m similarities, stream fills the same columns in row passes (on --device: "
        "the numba kernels on the CPU, or torch on cuda or torch-cpu; the dense route runs "
        "on the CPU).",
    )
    users.add_argument(
        "--out", default=None,
        help="write the frame to this .parquet or .csv file (atomic); default: CSV on stdout",
    )  # fmt: skip
    users.add_argument(
        "--worst", type=option("worst"), default=0,
        help="print the N most disadvantaged users and their better-served neighbours",
    )  # fmt: skip
    users.add_argument(
        "--worst-measure", default="PUF-P-Cos",
        choices=list(FAIR_PUF),
        help="the PUF measure whose disadvantaged part ranks the worst cases (PUF-P-Cos)",
    )  # fmt: skip
    users.add_argument(
        "--neighbours", type=option("neighbours"), default=10,
        help="most similar users looked at for each worst case (10)",
    )  # fmt: skip
    for action in evaluate_parser._actions:
        if action.dest not in ("help", "json", "resamples", "level", "seed", "sample_users"):
            users._add_action(action)


def compare_parser(commands, evaluate_parser) -> None:
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
    paired.add_argument(
        "--resamples", type=option("resamples"), default=1000, help="bootstrap resamples (1000)"
    )
    for action in evaluate_parser._actions:
        if action.dest not in ("help", "topk", "resamples", "sample_users"):
            paired._add_action(action)
