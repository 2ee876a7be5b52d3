"""Training, tuning and top-k export with RecBole (docs/method.md#recommenders).

One grid point is trained by :func:`train_point` in its own working directory (RecBole
writes logs, tensorboard files and checkpoints into the current directory); the winner is
chosen by :func:`userfair.workflow.tuning.select_best`; :func:`export_topk` reloads the winner's
checkpoint and writes the top-k lists exactly as RecBole's full-sort test evaluation ranks
them, together with RecBole's own test metrics.

The RecBole dataset of a split is built once (:mod:`userfair.workflow.shared_dataset`, rule
recbole_dataset) and every training and export job of that dataset loads it (``shared=``).
The train loader (batch size, negative sampling) is built per job. Training resumes from
``resume.pth`` (userfair.workflow.resume). What every run shares (settings, model classes,
RecBole's config) is :mod:`userfair.workflow.recbole_setup`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from userfair import recbole_patches  # noqa: E402
from userfair.workflow import recbole_fast  # noqa: E402

recbole_patches.apply()
recbole_fast.apply()  # leaner model internals at paper scale (docs/training.md)

from recbole.config import Config  # noqa: E402  (after the patches)
from recbole.data import create_dataset, data_preparation  # noqa: E402
from recbole.utils import get_trainer, init_seed  # noqa: E402

from userfair import recbole as recbole_metrics  # noqa: E402
from userfair.files.io import (  # noqa: E402
    InputError,
    atomic_path,
    read_pth,
)
from userfair.workflow import resume  # noqa: E402
from userfair.workflow.recbole_setup import (  # noqa: E402
    CHECKPOINT,
    SPLITS,
    Run,
    Training,
    external_metrics,
    link_split,
    model_class,
    recbole_name,
    recbole_settings,
)
from userfair.workflow.shared_dataset import load_shared, read_shared  # noqa: E402

log = logging.getLogger(__name__)


def prepare(
    model: str,
    params: dict,
    data_dir,
    dataset: str,
    workdir: Path,
    training: Training,
    shared=None,
) -> Run:
    """Build config, dataset, dataloaders, a fresh model and its trainer (cwd = workdir). With
    ``shared`` (the file of :func:`write_shared`, or its content: :func:`read_shared`), the
    dataset and the evaluation loaders come from it instead of being built."""
    torch.set_num_threads(training.threads)
    data_path = link_split(data_dir, dataset, workdir)
    cls = model_class(model)
    config = Config(
        model=cls,
        dataset=recbole_name(dataset),
        config_dict=recbole_settings(model, params, data_path, workdir, training),
    )
    init_seed(config["seed"], config["reproducibility"])
    if shared is not None and not isinstance(shared, dict):
        shared = read_shared(shared)
    loaded = load_shared(shared, config) if shared is not None else None
    if loaded is not None:
        data, train, valid, test = loaded
    else:
        data = create_dataset(config)
        train, valid, test = data_preparation(config, data)
    log.info("%s", data)
    if model == "NCL" and config["num_clusters"] >= data.user_num - 1:
        raise InputError(
            f"{model}: num_clusters={config['num_clusters']} must be below the "
            f"number of users ({data.user_num - 1}) of {dataset}"
        )
    init_seed(config["seed"], config["reproducibility"])
    net = cls(config, train.dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, net)
    return Run(config, data, train, valid, test, net, trainer)


# --- training ----------------------------------------------------------------------------


def resume_settings(model, params, data_dir, dataset, training, device) -> str:
    """The fingerprint a resume.pth must carry to be resumed: the model, the grid point, the
    training settings, the split files and the libraries (userfair.workflow.resume)."""
    return resume.fingerprint(
        {
            "model": model,
            "params": params,
            "training": training.__dict__,
            "splits": [
                resume.file_identity(Path(data_dir) / f"{dataset}.{split}.inter")
                for split in SPLITS
            ],
            "device": str(device),
            **resume.environment(),
        }
    )


def train_point(
    model: str,
    params: dict,
    data_dir,
    dataset: str,
    workdir,
    training: Training,
    *,
    shared=None,
    checkpoint_every: int = 1,
) -> dict:
    """Train one grid point with early stopping on valid NDCG@k; keep its best checkpoint as
    ``workdir/model.pth``. Returns the record written to valid.json: params, the valid
    metrics of the best epoch, ``best_epoch``, ``stop_epoch`` (the last epoch trained,
    0-based like RecBole's log) and ``curve``, one entry per epoch with its train loss and
    valid NDCG@k.

    Every ``checkpoint_every`` epochs and on SIGTERM the state is written to
    ``workdir/resume.pth``; a run that finds one of the same settings resumes from it
    (``resumed from epoch N`` in the log) and ends exactly as an uninterrupted run. It is
    removed when the run finishes. ``shared``: the dataset file of :func:`write_shared`."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    started = time.perf_counter()
    shared = read_shared(shared) if shared is not None else None  # before the chdir
    with contextlib.chdir(workdir):
        run = prepare(model, params, data_dir, dataset, workdir, training, shared=shared)
        log.info("training %s %s on %s (device %s)", model, params, dataset, run.config["device"])
        trainer = run.trainer
        settings = resume_settings(model, params, data_dir, dataset, training, run.config["device"])
        checkpointer = resume.Checkpointer(workdir / resume.RESUME, settings, checkpoint_every)
        state = resume.load(checkpointer.path, settings)
        curve: list[dict] = []
        best = {"checkpoint": None}  # the bytes of RecBole's best checkpoint so far
        if state is not None:
            resume.restore(trainer, run.train, state)
            curve = list(state["curve"])
            best["checkpoint"] = state["best"]
            if state["best"] is not None:
                Path(trainer.saved_model_file).write_bytes(state["best"])
            log.info("resumed from epoch %d (%s)", trainer.start_epoch, checkpointer.path)

        def record_epoch(epoch: int, valid_score: float) -> None:
            curve.append(
                {
                    "epoch": int(epoch),
                    "train_loss": float(trainer.train_loss_dict[epoch]),
                    "valid_NDCG": float(valid_score),
                }
            )
            if epoch + 1 >= trainer.epochs or trainer.cur_step > trainer.stopping_step:
                return  # the last epoch: nothing left to resume
            if trainer.cur_step == 0:  # a new best: RecBole has just saved it
                best["checkpoint"] = Path(trainer.saved_model_file).read_bytes()
            checkpointer.update(
                resume.snapshot(
                    trainer, run.train, epoch, best["checkpoint"], {"curve": list(curve)}
                )
            )

        with checkpointer.on_sigterm():
            best_score, best_result = trainer.fit(
                run.train, run.valid, saved=True, show_progress=False, callback_fn=record_epoch
            )
        saved = Path(trainer.saved_model_file)
        if not saved.is_file():
            raise RuntimeError(f"{model}: RecBole wrote no checkpoint at {saved}")
        os.replace(saved, workdir / CHECKPOINT)
        epoch = read_pth(workdir / CHECKPOINT)["epoch"]
        checkpointer.remove()
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
    *,
    shared=None,
) -> tuple[pd.DataFrame, dict]:
    """Reload a trained grid point from its checkpoint (no retraining; KNN models rebuild
    their neighbourhoods from the same train split) and return (lists, RecBole test metrics).

    ``fairness``: keyword arguments of :func:`userfair.recbole.add_metrics` (``names``,
    ``settings``): the fairness metrics join RecBole's test evaluation, and their values
    join the returned metrics under the measure keys (``SD-P``, ..., ``PUF-NDCG-Jacc``).
    ``shared``: the dataset file of :func:`write_shared`."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    shared = read_shared(shared) if shared is not None else None  # before the chdir
    state = read_pth(checkpoint)  # named as given in an error; load_state_dict moves it
    with contextlib.chdir(workdir):
        run = prepare(model, params, data_dir, dataset, workdir, training, shared=shared)
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
