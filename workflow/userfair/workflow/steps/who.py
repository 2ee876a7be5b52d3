"""Steps of the who stage (workflow/rules/who.smk): users, who_table, who_worst (fig_who is
in userfair.workflow.steps.figures)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd

from userfair.decomposition import decompose
from userfair.files.inputs import load_inputs
from userfair.files.io import read_parquet, write_csv
from userfair.similarity import pairwise
from userfair.streamed import pair_records
from userfair.workflow import tables, who
from userfair.workflow.steps import (
    MeasureSettings,
    Path,
    Route,
    SideFiles,
    Speed,
    WhoSettings,
)

log = logging.getLogger(__name__)


def users(
    dataset: str, train: Path, valid: Path, test: Path, topk: Path, users_out: Path,
    worst_out: Path, *, route: Route, settings: MeasureSettings, who_settings: WhoSettings,
    speed: Speed, source: Path, files: SideFiles = SideFiles(),
) -> pd.DataFrame:  # fmt: skip
    """Rule users: every evaluated user's exact share of every Fair measure and of every
    pair plugin (``settings.plugins``: the loaded ones, a param so that a change reruns the
    job; userfair.workflow.who.users_job, userfair.decomposition.decompose) -> ``users_out``
    (.parquet), and the worst cases (``who_settings``) -> ``worst_out`` (.csv). The
    ``route`` is the measures' (rules/common/route.smk, measure_route): the similarity files
    (``route.cos``, ``route.jacc``[, ``route.genre``]) or pass one (``route.pairs``[,
    ``files.item``]); the declared user features are read from the raw ``source`` when the
    rule got it (``files.raw``)."""
    route.require(dense=("cos",), stream=("pairs",))
    data = load_inputs(
        train, test, topk, k=settings.k, valid=valid,
        item_features=files.item_features(route.streamed),
    )  # fmt: skip
    similarities, stats = None, None
    if route.streamed:
        stats = pair_records.PairStats.load(route.pairs)
        log.info("streamed route: %d users, pass one from %s", stats.m, route.pairs)
    else:
        similarities = pairwise.load_dataset(route.cos, route.jacc, route.genre or (), data.users)
    features = who_settings.features
    user_features = who.read_user_features(dataset, source if files.raw else None, list(features))
    frame, worst_cases = who.users_job(
        data, route=route.name, k=settings.k, epsilon=settings.epsilon, gamma=settings.gamma,
        envy_utility=settings.envy_utility, block_size=speed.block_size,
        similarities=similarities, stats=stats, features=user_features,
        worst=who_settings.worst, worst_measure=who_settings.worst_measure,
        neighbours=who_settings.neighbours,
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
