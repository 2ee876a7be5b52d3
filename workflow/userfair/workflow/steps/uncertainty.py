"""Steps of the uncertainty stage (workflow/rules/uncertainty.smk): uncertainty,
table_uncertainty."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from userfair.bootstrap.inference import significance, summary, tau_intervals
from userfair.bootstrap.uncertainty import bootstrap, resample_weights
from userfair.files.inputs import load_inputs
from userfair.files.io import InputError, read_parquet, write_csv, write_parquet
from userfair.opt_in.variant_uncertainty import bootstrap_variants
from userfair.similarity.pairwise import load_dataset
from userfair.workflow import tables
from userfair.workflow.steps import (
    MeasureSettings,
    Path,
    SideFiles,
    Speed,
    graded_splits,
    only,
    read_optional_csv,
)

log = logging.getLogger(__name__)


def uncertainty(
    train: Path, valid: Path, test: Path, topk: Path, cos: Path, jacc: Path,
    genre: Sequence[Path], out: Path, *, resamples: int, settings: MeasureSettings,
    speed: Speed, files: SideFiles = SideFiles(),
) -> pd.DataFrame:  # fmt: skip
    """Rule uncertainty: every measure of one dataset x model on ``resamples`` bootstrap
    resamples of the evaluated users (userfair.bootstrap.uncertainty.bootstrap); the same seed
    (``settings.seed``) for every model of a dataset, so the resampled users are the same
    (paired).

    Opt-in, as the measures rule (config measures.relevance, measures.similarities):
    ``settings.graded`` and ``settings.extra_similarities`` add the columns of the opt-in
    measures on the same weights (userfair.opt_in.variant_uncertainty.bootstrap_variants),
    after the 18; the side ``files`` (item genres, user vectors, grades) as there. Without
    them the frame is the 18 columns alone. The plugin measures loaded by the job
    (``settings.plugins``, a param as for ``measures``) follow
    (userfair.bootstrap.uncertainty.bootstrap)."""
    k, extra, seed = settings.k, settings.extra_similarities, settings.seed
    train_split, test_split, grade = graded_splits(train, test, files.grades, settings.graded)
    inputs = load_inputs(
        train_split, test_split, topk, k=k, valid=valid, grade=grade,
        item_features=files.item_features("genre" in extra),
    )  # fmt: skip
    similarities = load_dataset(cos, jacc, genre or (), inputs.users)
    weights = resample_weights(len(inputs.users), resamples, seed)
    log.info("%d resamples of %d users (seed %d)", resamples, len(inputs.users), seed)
    frame = bootstrap(
        inputs, weights, similarities=similarities, k=k, epsilon=settings.epsilon,
        gamma=settings.gamma, envy_utility=settings.envy_utility,
        block_size=speed.block_size, device=speed.device,
    )  # fmt: skip
    if settings.graded or extra:
        user_vectors = files.user_vectors(extra, inputs.users)
        opt_in = bootstrap_variants(
            inputs, weights, k, extra, user_vectors, block_size=speed.block_size
        )
        frame = pd.concat([frame, opt_in], axis=1)
        log.info("opt-in measures resampled: %s", list(opt_in.columns))
    write_parquet(frame, out)
    log.info("%s: %d resamples", out, len(frame))
    return frame


def read_resamples(path: Path, measures: Sequence[str]) -> pd.DataFrame:
    """The bootstrap frame of one model (rule uncertainty) with the columns ``measures``;
    an InputError naming the file and the missing columns when it lacks some (a file
    written before measures.relevance or measures.similarities changed)."""
    frame = read_parquet(path)
    missing = [name for name in measures if name not in frame.columns]
    if missing:
        raise InputError(
            f"{path}: no resampled column {missing}: rerun its uncertainty rule with the "
            "measures.relevance and measures.similarities of the measures files"
        )
    return frame


def table_uncertainty(
    measure_files: Mapping[str, Path], resample_files: Mapping[str, Path],
    datasets: list[str], models: list[str], *, level: float, resamples: int, csv: Path,
    tex: Path, intervals_csv: Path, significance_csv: Path, agreement_csv: Path,
    groups: Sequence[Path] = (),
) -> None:  # fmt: skip
    """Rule table_uncertainty: Table 2 with bootstrap intervals (userfair.workflow.tables
    .write_scores_ci), the paired model comparisons (Holm within each measure) and the
    Kendall tau intervals of Fig. 1 (userfair.bootstrap.inference), from every model's resamples;
    both mappings are keyed ``D/M``. With the group stage on, ``groups`` is its
    ``groups.csv``: Table 2 then ends each dataset with the group measures per grouping."""
    records = tables.read_measure_files(measure_files, datasets, models)
    # Table 2's groups: the 18 and the opt-in measures the files hold (none by default)
    measure_groups = tables.table_groups(records)
    measures = [name for names in measure_groups.values() for name in names]
    tau_names = tables.agreement_names(records)  # Fig. 1's: the 18 and the plugins
    summaries, comparisons, taus = [], [], []
    for dataset in datasets:
        frames = {m: read_resamples(resample_files[f"{dataset}/{m}"], measures) for m in models}
        points = {m: records[(dataset, m)] for m in models}
        summaries.append(summary(frames, points, level, measures).assign(dataset=dataset))
        comparisons.append(significance(frames, points, level, measures).assign(dataset=dataset))
        # Fig. 1's tau intervals: the 18 and the plugins (the opt-in ones: table_variants)
        taus.append(tau_intervals(frames, points, level, tau_names).assign(dataset=dataset))
    table = pd.concat(summaries, ignore_index=True)
    conventions = tables.shared_conventions(records)
    group_table = read_optional_csv(only(groups))
    tables.write_scores_ci(
        table, datasets, models, csv, tex, conventions, level, resamples, group_table,
        measure_groups,
    )  # fmt: skip
    compared = pd.concat(comparisons, ignore_index=True)
    for frame, path in (
        (table, intervals_csv),
        (compared, significance_csv),
        (pd.concat(taus, ignore_index=True), agreement_csv),
    ):
        frame = tables.label_models(frame)  # U-KNN as in Table 2
        write_csv(frame[["dataset"] + [c for c in frame.columns if c != "dataset"]], path)
    log.info(
        "significant model differences (Holm, level %s):\n%s",
        level,
        compared[compared["significant"]].to_string(),
    )
