"""What every RecBole run of the workflow shares (docs/training.md): the settings of a job
(:class:`Training`), the model classes (ours for UserKNN and ItemKNN), the device, the split
files linked where RecBole reads them, RecBole's config of one run and its metric names.
Importing it applies the RecBole fixes (:mod:`userfair.recbole_patches`) and the leaner
model internals (:mod:`userfair.workflow.recbole_fast`) before RecBole is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import torch  # noqa: E402  (after the check, which names the extra to install)

from userfair import recbole_patches  # noqa: E402
from userfair.workflow import models, recbole_fast  # noqa: E402

recbole_patches.apply()
recbole_fast.apply()  # leaner model internals at paper scale (docs/training.md)

from recbole.config import Config  # noqa: E402  (after the patches)
from recbole.data.dataloader import FullSortEvalDataLoader  # noqa: E402
from recbole.utils import get_model  # noqa: E402

from userfair.files.io import InputError  # noqa: E402
from userfair.workflow.userknn import ItemKNN, UserKNN  # noqa: E402

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
    passes (workflow/rules/common/params.smk, ``training_settings``), the job's threads, and the
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
