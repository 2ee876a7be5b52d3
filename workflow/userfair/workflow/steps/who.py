"""Steps of the who stage (workflow/rules/who.smk): users, who_table, who_worst (fig_who is
in userfair.workflow.steps.figures)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from userfair.decomposition import decompose
from userfair.files.inputs import load_inputs
from userfair.files.io import read_parquet, write_csv
from userfair.similarity import pairwise
from userfair.streamed import pair_records
from userfair.workflow import tables, who
from userfair.workflow.steps import Path, only

log = logging.getLogger(__name__)


def users(
    dataset: str, train: Path, valid: Path, test: Path, topk: Path, users_out: Path,
    worst_out: Path, *, k: int, epsilon: float, envy_utility: str, gamma: float,
    block_size: int, features: list[str], worst: int, worst_measure: str, neighbours: int,
    source: Path, route: str, cos: Path | None = None, jacc: Path | None = None,
    genre: Sequence[Path] = (), pairs: Path | None = None, item: Sequence[Path] = (),
    raw: Sequence[Path] | Path = (), plugins: Sequence[str] = (),
) -> pd.DataFrame:  # fmt: skip
    """Rule users: every evaluated user's exact share of every Fair measure and of every
    pair plugin (``plugins``: the loaded ones, a param so that a change reruns the job;
    userfair.workflow.who.users_job, userfair.decomposition.decompose) -> ``users_out``
    (.parquet), and the worst cases -> ``worst_out`` (.csv). The ``route`` is the measures'
    (rules/common/route.smk, measure_route): the similarity files (``cos``, ``jacc``[,
    ``genre``]) or pass one (``pairs``[, ``item``]); the declared user ``features`` are read
    from the raw ``source`` when the rule got it (``raw``)."""
    streamed = route == "stream"
    if (pairs if streamed else cos) is None:
        raise ValueError(f"route {route!r}: the rule gave no {'pairs' if streamed else 'cos'}")
    data = load_inputs(
        train, test, topk, k=k, valid=valid, item_features=only(item) if streamed else None
    )
    similarities, stats = None, None
    if streamed:
        stats = pair_records.PairStats.load(pairs)
        log.info("streamed route: %d users, pass one from %s", stats.m, pairs)
    else:
        similarities = pairwise.load_dataset(cos, jacc, genre or (), data.users)
    user_features = who.read_user_features(dataset, source if raw else None, features)
    frame, worst_cases = who.users_job(
        data, k=k, epsilon=epsilon, gamma=gamma, envy_utility=envy_utility,
        block_size=block_size, similarities=similarities, stats=stats,
        features=user_features, worst=worst, worst_measure=worst_measure,
        neighbours=neighbours,
    )  # fmt: skip
    decompose.write_users(frame, users_out)
    write_csv(worst_cases, worst_out)
    log.info("%s: %d users x %d columns", users_out, *frame.shape)
    return frame


def _by_run(files: Mapping[str, Path], datasets, models, read) -> dict:
    """{(dataset, model): read(file)} of the named inputs ``D/M`` (per_run,
    rules/common/paths.smk)."""
    return {(d, m): read(files[f"{d}/{m}"]) for d in datasets for m in models}


def who_table(
    users_files: Mapping[str, Path], datasets: list[str], models: list[str], out: Path, *,
    groups: int, features: list[str], resamples: int, seed: int, level: float,
) -> pd.DataFrame:  # fmt: skip
    """Rule who_table: each Fair measure's share by group of users, with bootstrap
    intervals (userfair.workflow.who.group_table), from every users file named ``D/M``."""
    table = who.group_table(
        _by_run(users_files, datasets, models, read_parquet), groups=groups,
        features=features, resamples=resamples, seed=seed, level=level,
    )  # fmt: skip
    write_csv(tables.label_models(table), out)  # U-KNN as in Table 2
    log.info("%s: %d rows", out, len(table))
    return table


def who_worst(
    worst_files: Mapping[str, Path], datasets: list[str], models: list[str], out: Path
) -> pd.DataFrame:
    """Rule who_worst: the most disadvantaged users of every model (userfair.workflow.who
    .worst_table), from every worst-case file named ``D/M``."""
    table = who.worst_table(_by_run(worst_files, datasets, models, who.read_worst))
    write_csv(tables.label_models(table), out)  # U-KNN as in Table 2
    log.info("%s: %d rows", out, len(table))
    return table
