"""Training, tuning and top-k export with RecBole (docs/method.md#recommenders).

One grid point is trained by :func:`train_point` in its own working directory (RecBole
writes logs, tensorboard files and checkpoints into the current directory); the winner is
chosen by :func:`userfair.tuning.select_best`; :func:`export_topk` reloads the winner's
checkpoint and writes the top-k lists exactly as RecBole's full-sort test evaluation ranks
them, together with RecBole's own test metrics.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from userfair import models, recbole_fast, recbole_patches

recbole_patches.apply()
recbole_fast.apply()  # leaner model internals at paper scale (docs/training.md)

from recbole.config import Config  # noqa: E402  (after the patches)
from recbole.data import create_dataset, data_preparation  # noqa: E402
from recbole.data.dataloader import FullSortEvalDataLoader  # noqa: E402
from recbole.utils import get_model, get_trainer, init_seed  # noqa: E402

from userfair import recbole as recbole_metrics  # noqa: E402
from userfair.io import InputError, atomic_path  # noqa: E402
from userfair.userknn import ItemKNN, UserKNN  # noqa: E402

log = logging.getLogger(__name__)

# RecBole metric names -> the keys of our files (docs/method.md#effectiveness).
METRICS = {"hit": "HR", "mrr": "MRR", "precision": "P", "recall": "R", "map": "MAP", "ndcg": "NDCG"}
RECBOLE_METRICS = ["Hit", "MRR", "Precision", "Recall", "MAP", "NDCG"]
SPLITS = ("train", "valid", "test")
CHECKPOINT = "model.pth"
# Models this project implements itself (ItemKNN: RecBole's, with batch-wise scores).
OURS = {"UserKNN": UserKNN, "ItemKNN": ItemKNN}


@dataclass(frozen=True)
class Training:
    """Settings shared by every model: the config's ``training`` keys that the workflow
    passes (workflow/rules/common.smk, ``training_settings``), the job's threads, and the
    top-level seed and k."""

    epochs: int = 30
    stopping_step: int = 10
    device: str = "auto"
    train_batch_size: int = 2048
    eval_batch_size: int = 409600
    threads: int = 1
    seed: int = 2024
    k: int = 10


def model_class(name: str):
    """The RecBole model class of ``name`` (UserKNN and the batch-wise ItemKNN are ours)."""
    models.get(name)  # an InputError naming close matches for an unknown model
    return OURS[name] if name in OURS else get_model(name)


def gpu_ids(device: str) -> str:
    """RecBole's ``gpu_id`` for our ``device`` setting. RecBole writes it to
    CUDA_VISIBLE_DEVICES, so keep the devices a scheduler (SLURM) already assigned."""
    cuda = torch.cuda.is_available()
    if device == "cuda" and not cuda:
        raise ValueError("training.device is 'cuda' but torch sees no CUDA device")
    if device == "cpu" or not cuda:
        return ""
    return os.environ.get("CUDA_VISIBLE_DEVICES", "0")


def recbole_name(dataset: str) -> str:
    """The dataset name RecBole sees. Not the real name: RecBole's Config replaces the
    data_path of a dataset called "ml-100k" by its own bundled copy."""
    return f"{dataset}_split"


def link_split(data_dir: str | os.PathLike, dataset: str, workdir: Path) -> Path:
    """RecBole reads ``{data_path}/{name}/{name}.{split}.inter``: link our split files
    ``data_dir/{dataset}.{split}.inter`` there (name = :func:`recbole_name`) and return the
    data_path. Only the .inter files are linked, so RecBole never sees ``{dataset}.item``."""
    data_dir = Path(data_dir).resolve()
    name = recbole_name(dataset)
    data_path = workdir / "recbole_data"
    folder = data_path / name
    folder.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        target = data_dir / f"{dataset}.{split}.inter"
        if not target.is_file():
            raise InputError(f"{target}: split file not found (run the data stage first)")
        link = folder / f"{name}.{split}.inter"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return data_path


def recbole_settings(
    model: str, params: dict, data_path: Path, workdir: Path, training: Training
) -> dict:
    """The RecBole config_dict of one run: benchmark split files, user/item columns only,
    full-sort evaluation at k, early stopping on valid NDCG@k, seeded and reproducible."""
    k = training.k
    settings = {
        "data_path": str(data_path),
        "checkpoint_dir": str(workdir),
        "benchmark_filename": list(SPLITS),
        "load_col": {"inter": ["user_id", "item_id"]},
        "eval_args": {"group_by": "user", "order": "RO", "mode": "full"},
        "metrics": RECBOLE_METRICS,
        "topk": [k],
        "valid_metric": f"NDCG@{k}",
        "metric_decimal_place": 12,
        "epochs": training.epochs if models.get(model).trainable else 1,
        "stopping_step": training.stopping_step,
        "eval_step": 1,
        "train_batch_size": training.train_batch_size,
        "eval_batch_size": training.eval_batch_size,
        "seed": training.seed,
        "reproducibility": True,
        "gpu_id": gpu_ids(training.device),
        "worker": 0,
        "show_progress": False,
        "save_dataset": False,
        "save_dataloaders": False,
        "log_wandb": False,
    }
    if model == "UserKNN":
        settings.update({"k": 100, "shrink": 0.0})
    settings.update(params)
    return settings


def external_metrics(result: dict, k: int) -> dict:
    """RecBole's ``{'ndcg@10': ...}`` -> ``{'NDCG': ...}`` in the order of METRICS."""
    return {ours: float(result[f"{name}@{k}"]) for name, ours in METRICS.items()}


@dataclass
class Run:
    config: Config
    dataset: object
    train: object
    valid: object
    test: FullSortEvalDataLoader
    model: torch.nn.Module
    trainer: object


def prepare(
    model: str, params: dict, data_dir, dataset: str, workdir: Path, training: Training
) -> Run:
    """Build config, dataset, dataloaders, a fresh model and its trainer (cwd = workdir)."""
    torch.set_num_threads(training.threads)
    data_path = link_split(data_dir, dataset, workdir)
    cls = model_class(model)
    config = Config(
        model=cls,
        dataset=recbole_name(dataset),
        config_dict=recbole_settings(model, params, data_path, workdir, training),
    )
    init_seed(config["seed"], config["reproducibility"])
    data = create_dataset(config)
    log.info("%s", data)
    train, valid, test = data_preparation(config, data)
    if model == "NCL" and config["num_clusters"] >= data.user_num - 1:
        raise InputError(
            f"{model}: num_clusters={config['num_clusters']} must be below the "
            f"number of users ({data.user_num - 1}) of {dataset}"
        )
    init_seed(config["seed"], config["reproducibility"])
    net = cls(config, train.dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, net)
    return Run(config, data, train, valid, test, net, trainer)


def train_point(
    model: str, params: dict, data_dir, dataset: str, workdir, training: Training
) -> dict:
    """Train one grid point with early stopping on valid NDCG@k; keep its best checkpoint as
    ``workdir/model.pth``. Returns the record written to valid.json: params, the valid
    metrics of the best epoch, ``best_epoch``, ``stop_epoch`` (the last epoch trained,
    0-based like RecBole's log) and ``curve``, one entry per epoch with its train loss and
    valid NDCG@k."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    started = time.perf_counter()
    with contextlib.chdir(workdir):
        run = prepare(model, params, data_dir, dataset, workdir, training)
        log.info("training %s %s on %s (device %s)", model, params, dataset, run.config["device"])
        curve = []

        def record_epoch(epoch: int, valid_score: float) -> None:
            curve.append(
                {
                    "epoch": int(epoch),
                    "train_loss": float(run.trainer.train_loss_dict[epoch]),
                    "valid_NDCG": float(valid_score),
                }
            )

        best_score, best_result = run.trainer.fit(
            run.train, run.valid, saved=True, show_progress=False, callback_fn=record_epoch
        )
        saved = Path(run.trainer.saved_model_file)
        if not saved.is_file():
            raise RuntimeError(f"{model}: RecBole wrote no checkpoint at {saved}")
        os.replace(saved, workdir / CHECKPOINT)
        epoch = torch.load(workdir / CHECKPOINT, map_location="cpu", weights_only=False)["epoch"]
    return {
        "model": model,
        "params": params,
        "valid": external_metrics(best_result, training.k),
        "best_epoch": int(epoch),
        "stop_epoch": curve[-1]["epoch"] if curve else None,
        "seconds": time.perf_counter() - started,
        "device": str(run.config["device"]),
        "curve": curve,
    }


def _ranked_lists(run: Run, k: int) -> pd.DataFrame:
    """Top-k of every test user, ranked by the scores RecBole's full-sort evaluation uses
    (``Trainer._full_sort_batch_eval``: padding, train and valid items set to -inf) and the
    same ``torch.topk`` as RecBole's collector."""
    trainer, data = run.trainer, run.dataset
    uid, iid = run.config["USER_ID_FIELD"], run.config["ITEM_ID_FIELD"]
    parts = []
    with torch.no_grad():
        for batch in run.test:
            interaction, scores, _, _ = trainer._full_sort_batch_eval(batch)
            top_scores, top_items = torch.topk(scores, k, dim=-1)
            if torch.isinf(top_scores).any():
                raise ValueError(f"a test user has fewer than k={k} candidate items")
            users = interaction[uid].cpu().numpy()
            parts.append(
                pd.DataFrame(
                    {
                        "user_id": np.repeat(data.id2token(uid, users), k),
                        "item_id": data.id2token(iid, top_items.cpu().numpy().ravel()),
                        "rank": np.tile(np.arange(1, k + 1), len(users)),
                        "score": top_scores.cpu().numpy().ravel().astype(np.float64),
                    }
                )
            )
    lists = pd.concat(parts, ignore_index=True)
    lists["user_id"] = lists["user_id"].astype(str)
    lists["item_id"] = lists["item_id"].astype(str)
    return lists.sort_values(["user_id", "rank"], kind="stable").reset_index(drop=True)


def export_topk(
    model: str,
    params: dict,
    checkpoint,
    data_dir,
    dataset: str,
    workdir,
    training: Training,
    fairness: dict | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Reload a trained grid point from its checkpoint (no retraining; KNN models rebuild
    their neighbourhoods from the same train split) and return (lists, RecBole test metrics).

    ``fairness``: keyword arguments of :func:`userfair.recbole.add_metrics` (``names``,
    ``settings``): the fairness metrics join RecBole's test evaluation, and their values
    join the returned metrics under the measure keys (``SD-P``, ..., ``PUF-NDCG-Jacc``)."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    checkpoint = Path(checkpoint).resolve()
    if not checkpoint.is_file():
        raise InputError(f"{checkpoint}: checkpoint not found")
    with contextlib.chdir(workdir):
        run = prepare(model, params, data_dir, dataset, workdir, training)
        state = torch.load(checkpoint, map_location=run.config["device"], weights_only=False)
        run.model.load_state_dict(state["state_dict"])
        run.model.load_other_parameter(state.get("other_parameter"))
        if fairness is not None:
            recbole_metrics.add_metrics(run.trainer, run.train, **fairness)
        result = run.trainer.evaluate(run.test, load_best_model=False, show_progress=False)
        lists = _ranked_lists(run, training.k)
    metrics = external_metrics(result, training.k)
    if fairness is not None:
        metrics.update(recbole_metrics.measure_values(result, training.k))
    return lists, metrics


def write_topk(lists: pd.DataFrame, path) -> None:
    with atomic_path(path) as tmp:
        lists.to_parquet(tmp, index=False)
