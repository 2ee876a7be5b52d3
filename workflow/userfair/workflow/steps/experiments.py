"""Steps of the experiments stage (workflow/rules/experiments.smk): exp_relevance,
exp_similarity, exp_extreme, exp_gamma."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from userfair.files.inputs import load_inputs, load_split_inputs
from userfair.files.io import write_dataset_parquet
from userfair.similarity.pairwise import load, uf_similarity
from userfair.workflow import experiments
from userfair.workflow.steps import Path, only

log = logging.getLogger(__name__)


def exp_relevance(
    dataset: str, train: Path, test: Path, jacc: Path, genre: Sequence[Path], out: Path, *,
    k: int, epsilon: float, envy_utility: str, gamma: float, block_size: int, device: str,
    seed: int, plugins: Sequence[str] = (),
) -> pd.DataFrame:  # fmt: skip
    """Rule exp_relevance: the Fig. 2 experiment (userfair.workflow.experiments.run_relevance) of
    one dataset: PUF with the normalised Jaccard, UF with the raw sim_UF (the genre
    similarity mixed in when gamma < 1), and the plugin measures the job loaded
    (``plugins``, a param so that a change reruns it; docs/plugins.md)."""
    inputs = load_split_inputs(train, test)
    jaccard = load(jacc, inputs.users)
    genre_path = only(genre)
    genre_sim = load(genre_path, inputs.users).raw() if genre_path else None
    sim_uf = uf_similarity(jaccard.raw(), genre_sim, gamma)
    settings = experiments.Settings(k, epsilon, block_size, device, envy_utility)
    frame = experiments.run_relevance(inputs, jaccard.sim, sim_uf, settings, seed)
    write_dataset_parquet(frame, dataset, out)
    log.info("\n%s", frame.pivot(index="share", columns="measure", values="value"))
    return frame


def exp_similarity(
    dataset: str, train: Path, valid: Path, test: Path, topk: Path, jacc: Path, out: Path,
    *, model: str, k: int, epsilon: float, block_size: int, device: str, seed: int,
    weibull_shapes: list[float],
    plugins: Sequence[str] = (),
) -> pd.DataFrame:  # fmt: skip
    """Rule exp_similarity: the Fig. 3 experiment (userfair.workflow.experiments.run_similarity) on
    the lists of ``model`` (experiments.model)."""
    inputs = load_inputs(train, test, topk, k=k, valid=valid)
    settings = experiments.Settings(k, epsilon, block_size, device)
    frame = experiments.run_similarity(
        inputs, load(jacc, inputs.users), weibull_shapes, settings, seed
    )
    frame.insert(0, "model", model)
    write_dataset_parquet(frame, dataset, out)
    log.info("\n%s", frame.to_string())
    return frame


def exp_extreme(
    dataset: str, train: Path, test: Path, out: Path, *, k: int, epsilon: float,
    block_size: int, device: str, seed: int,
    plugins: Sequence[str] = (),
) -> pd.DataFrame:  # fmt: skip
    """Rule exp_extreme: the Fig. 4 experiment (userfair.workflow.experiments.run_extreme,
    MostFair / MostUnfair) of one dataset."""
    inputs = load_split_inputs(train, test)
    settings = experiments.Settings(k, epsilon, block_size, device)
    frame = experiments.run_extreme(inputs, settings, seed)
    write_dataset_parquet(frame, dataset, out)
    log.info("\n%s", frame.to_string())
    return frame


def exp_gamma(
    dataset: str, train: Path, valid: Path, test: Path, jacc: Path, genre: Path,
    topk: Mapping[str, Path], models_out: Path, relevance_out: Path, *, k: int,
    epsilon: float, block_size: int, device: str, seed: int, gammas: list[float],
) -> None:  # fmt: skip
    """Rule exp_gamma: UF and PUF with sim_UF for every gamma (appendix) on the real lists
    of every model (``topk`` by model name; userfair.workflow.experiments.run_gamma_models) and on
    the lists of Fig. 2 (userfair.workflow.experiments.run_gamma_relevance)."""
    split = load_split_inputs(train, test)
    jaccard_raw = load(jacc, split.users).raw()
    genre_sim = load(genre, split.users).raw()
    settings = experiments.Settings(k, epsilon, block_size, device)
    runs = {model: load_inputs(train, test, path, k=k, valid=valid) for model, path in topk.items()}
    per_model = experiments.run_gamma_models(runs, jaccard_raw, genre_sim, gammas, settings)
    write_dataset_parquet(per_model, dataset, models_out)
    relevance = experiments.run_gamma_relevance(
        split, jaccard_raw, genre_sim, gammas, settings, seed
    )
    write_dataset_parquet(relevance, dataset, relevance_out)
    log.info("real runs:\n%s", per_model.to_string())
