"""Steps of the models stage (workflow/rules/models.smk): recbole_dataset, tune, topk,
user_vectors; and the training of a replicate (rule replicate of
workflow/rules/replicates.smk), which runs in the same environment. The stage's ``select``
reads JSON records only and lives in :mod:`userfair.workflow.steps.selection`, so that its
job does not import torch and RecBole (about 2 CPU seconds a job)."""

from __future__ import annotations

import logging
import os

from userfair.files.io import read_inter, write_json, write_parquet
from userfair.workflow import (
    config_bounds,
    embeddings,
    recbole_setup,
    recommenders,
    shared_dataset,
    tuning,
)
from userfair.workflow.meter import JobMeter, energy_file
from userfair.workflow.replication import replicate_seed
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)


def recbole_dataset(dataset: str, data_dir: Path, workdir: Path, out: Path, *, training: dict):
    """Rule recbole_dataset: the dataset's RecBole dataset, its parts, sampler and evaluation
    loaders (userfair.workflow.shared_dataset.build_shared), built once on the CPU and saved for
    every
    training and export job of the dataset (userfair.workflow.shared_dataset.write_shared)."""
    # k cannot exceed the items (RecBole's full-sort top-k would fail inside training):
    # said here, before any training job, when stats.json did not exist at parse time.
    items = set()
    for part in ("train", "valid", "test"):
        items.update(read_inter(os.path.join(data_dir, f"{dataset}.{part}.inter"))["item_id"])
    config_bounds.check_items(training["k"], len(items), f"{dataset} (the split in {data_dir})")
    settings = recbole_setup.Training(**training, device="cpu", threads=1)
    shared = shared_dataset.build_shared(data_dir, dataset, workdir, settings)
    shared_dataset.write_shared(shared, out)
    log.info("saved %s", out)


def tune(
    dataset: str, model: str, point: int, data_dir: Path, workdir: Path, shared: Path,
    out: Path, *, grid_params: dict, training: dict, threads: int, checkpoint_every: int,
) -> dict:  # fmt: skip
    """Rule tune: train one grid point (userfair.workflow.recommenders.train_point) on the dataset's
    serialised RecBole dataset (``shared``, rule recbole_dataset) with the ``training:``
    settings and the job's threads, saving resume.pth every ``checkpoint_every`` epochs and
    on SIGTERM (userfair.workflow.resume); its record (params, valid metrics, curve) -> valid.json,
    its best checkpoint -> model.pth in ``workdir``."""
    settings = recbole_setup.Training(**{**training, "threads": threads})
    with JobMeter(energy_file("tune", out)):  # what it drew (docs/cluster.md#measured-energy)
        record = recommenders.train_point(
            model, grid_params, data_dir, dataset, workdir, settings, shared=shared,
            checkpoint_every=checkpoint_every,
        )  # fmt: skip
    record["point"] = int(point)
    write_json(record, out)
    log.info("valid %s", record["valid"])
    return record


def topk(
    dataset: str, model: str, best: Path, data_dir: Path, workdir: Path, shared: Path,
    topk_out: Path, test_out: Path, *, training: dict, threads: int,
) -> None:  # fmt: skip
    """Rule topk: the winner's checkpoint (best.json) -> its top-k lists of every test user
    (userfair.workflow.recommenders.export_topk, ranked as RecBole's full-sort test evaluation
    ranks) and RecBole's own test metrics. The fairness measures are the measures job's
    (their equality with the RecBole plugin's is tested: tests/test_recbole_plugin.py)."""
    winner = tuning.read_best(best, model)
    settings = recbole_setup.Training(**{**training, "threads": threads})
    with JobMeter(energy_file("topk", topk_out)):
        lists, test = recommenders.export_topk(
            model, winner["params"], winner["checkpoint"], data_dir, dataset, workdir, settings,
            shared=shared,
        )  # fmt: skip
    recommenders.write_topk(lists, topk_out)
    write_json({key: test[key] for key in recbole_setup.METRICS.values()}, test_out)
    log.info("%d users, RecBole test metrics %s", lists["user_id"].nunique(), test)


def user_vectors(
    dataset: str, model: str, best: Path, data_dir: Path, workdir: Path, shared: Path,
    out: Path, *, training: dict, threads: int,
) -> None:  # fmt: skip
    """Rule user_vectors: the winner's checkpoint (best.json) -> the user vectors of every
    user of the split (userfair.workflow.embeddings.export_user_vectors: ``user_id``,
    ``e0 ..``), which the opt-in similarity ``embedding:MODEL`` (PUF-*-Vec) reads."""
    winner = tuning.read_best(best, model)
    settings = recbole_setup.Training(**{**training, "threads": threads})
    frame = embeddings.export_user_vectors(
        model, winner["params"], winner["checkpoint"], data_dir, dataset, workdir, settings,
        shared=shared,
    )  # fmt: skip
    write_parquet(frame, out, index=False)
    log.info("%s: %d users, %d dimensions", out, len(frame), frame.shape[1] - 1)


def replicate(
    dataset: str, model: str, replicate: int, best: Path, data_dir: Path, workdir: Path,
    shared: Path, topk_out: Path, valid_out: Path, test_out: Path, *, training: dict,
    threads: int, checkpoint_every: int,
) -> dict:  # fmt: skip
    """Rule replicate: the winner's hyper-parameters (best.json) trained again with
    ``replicate_seed(seed, replicate)`` (userfair.workflow.replication) in ``workdir``, as the
    grid point was (early stopping on valid NDCG@k, resumable), then its top-k lists of every
    test user (topk.parquet), its training record with the seed (valid.json) and RecBole's
    test metrics (recbole_test.json)."""
    winner = tuning.read_best(best, model)
    seed = replicate_seed(training["seed"], int(replicate))
    settings = recbole_setup.Training(**{**training, "threads": threads, "seed": seed})
    with JobMeter(energy_file("replicate", valid_out)):
        record = recommenders.train_point(
            model, winner["params"], data_dir, dataset, workdir, settings, shared=shared,
            checkpoint_every=checkpoint_every,
        )  # fmt: skip
        lists, test = recommenders.export_topk(
            model, winner["params"], os.path.join(workdir, recbole_setup.CHECKPOINT), data_dir,
            dataset, os.path.join(workdir, "export"), settings, shared=shared,
        )  # fmt: skip
    recommenders.write_topk(lists, topk_out)
    record.update(replicate=int(replicate), seed=seed, point=winner["point"])
    write_json(record, valid_out)
    write_json({key: test[key] for key in recbole_setup.METRICS.values()}, test_out)
    log.info("replicate %s (seed %d): valid %s, test %s", replicate, seed, record["valid"], test)
    return record
