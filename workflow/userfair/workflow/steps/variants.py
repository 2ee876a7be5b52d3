"""Steps of the variants stage (workflow/rules/variants.smk; only with opt-in measures,
config measures.relevance and measures.similarities): table_variants, exp_variants."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd

from userfair.files.inputs import load_inputs, load_split_inputs
from userfair.files.io import write_csv, write_dataset_parquet
from userfair.workflow import experiments, tables, variant_analysis
from userfair.workflow.steps import MeasureSettings, Path, SideFiles, Speed, graded_splits
from userfair.workflow.steps.uncertainty import read_resamples

log = logging.getLogger(__name__)


def table_variants(
    measure_files: Mapping[str, Path], resample_files: Mapping[str, Path],
    datasets: list[str], models: list[str], *, level: float, tau_csv: Path,
    summary_csv: Path,
) -> pd.DataFrame:  # fmt: skip
    """Rule table_variants: Kendall's tau-b between the model orderings of every pair of PUF
    variants per dataset with its bootstrap interval over the uncertainty stage's resamples
    (userfair.workflow.variant_analysis.variant_tau; no resample file: tau alone), and its
    summary per kind of change (variant_analysis.tau_summary). Both mappings keyed
    ``D/M``."""
    records = tables.read_measure_files(measure_files, datasets, models)
    tables.table_groups(records)  # the same opt-in measures in every file, or one error
    names = variant_analysis.puf_variants(next(iter(records.values())))
    frames = None
    if resample_files:
        frames = {
            (d, m): read_resamples(resample_files[f"{d}/{m}"], names)
            for d in datasets
            for m in models
        }
    tau = variant_analysis.variant_tau(records, frames, datasets, models, level)
    summary = variant_analysis.tau_summary(tau)
    write_csv(tau, tau_csv)
    write_csv(summary, summary_csv)
    log.info("%d PUF variants; tau by kind of change:\n%s", len(names), summary.to_string())
    return tau


def exp_variants(
    dataset: str, train: Path, valid: Path, test: Path, topk: Path, similarity_out: Path,
    extreme_out: Path, *, model: str, settings: MeasureSettings, speed: Speed,
    files: SideFiles = SideFiles(),
) -> None:  # fmt: skip
    """Rule exp_variants: Fig. 3's observed rows and Fig. 4 with each similarity the run
    asks for (userfair.workflow.variant_analysis.experiment_rows): the lists of ``model``
    (experiments.model) for Fig. 3, those of Fig. 2 for Fig. 4, as the default figures;
    ``settings.graded`` reads the grades file ``files.grades``
    (userfair.workflow.steps.graded_splits)."""
    k, extra = settings.k, settings.extra_similarities
    train_split, test_split, grade = graded_splits(train, test, files.grades, settings.graded)
    inputs = load_inputs(
        train_split, test_split, topk, k=k, valid=valid, grade=grade,
        item_features=files.item_features("genre" in extra),
    )  # fmt: skip
    split = load_split_inputs(train, test)
    user_vectors = files.user_vectors(extra, inputs.users)
    how = experiments.Settings(k, settings.epsilon, speed.block_size, speed.device)
    observed, extreme = variant_analysis.experiment_rows(
        inputs, split, extra, how, settings.seed, user_vectors
    )
    observed.insert(0, "model", model)
    write_dataset_parquet(observed, dataset, similarity_out)
    write_dataset_parquet(extreme, dataset, extreme_out)
    log.info("\n%s", observed.to_string())
