"""Training, tuning and top-k export with RecBole (docs/method.md#recommenders).

One grid point is trained by :func:`train_point` in its own working directory (RecBole
writes logs, tensorboard files and checkpoints into the current directory); the winner is
chosen by :func:`userfair.tuning.select_best`; :func:`export_topk` reloads the winner's
checkpoint and writes the top-k lists exactly as RecBole's full-sort test evaluation ranks
them, together with RecBole's own test metrics.

The RecBole dataset of a split is built once (:func:`build_shared`, rule recbole_dataset) and
every training and export job of that dataset loads it (``shared=``): the dataset, its
train/valid/test parts, the negative sampler and the full-sort valid/test loaders, i.e. all
that does not depend on the grid point. The train loader (batch size, negative sampling) is
built per job. Training resumes from ``resume.pth`` (userfair.workflow.resume).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from userfair import models, recbole_patches  # noqa: E402
from userfair.workflow import recbole_fast  # noqa: E402

recbole_patches.apply()
recbole_fast.apply()  # leaner model internals at paper scale (docs/training.md)

from recbole.config import Config  # noqa: E402  (after the patches)
from recbole.data import create_dataset, data_preparation  # noqa: E402
from recbole.data.dataloader import FullSortEvalDataLoader  # noqa: E402
from recbole.data.utils import create_samplers, get_dataloader  # noqa: E402
from recbole.utils import get_model, get_trainer, init_seed  # noqa: E402
from recbole.utils.argument_list import dataset_arguments  # noqa: E402

from userfair import recbole as recbole_metrics  # noqa: E402
from userfair.io import InputError, atomic_path, read_pth  # noqa: E402
from userfair.workflow import resume  # noqa: E402
from userfair.workflow.userknn import ItemKNN, UserKNN  # noqa: E402

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


# --- the dataset, built once per split (rule recbole_dataset) --------------------------------

# The model whose config builds the shared parts: a general recommender with uniform negative
# sampling, so that the sampler is built too (a job re-targets it to its own distribution).
REFERENCE_MODEL = "BPR"
SHARED_FORMAT = 1
# The config keys the shared parts depend on: RecBole's own dataset arguments (those its
# create_dataset compares before reusing a saved dataset), the evaluation's split, sampling
# and batch. A grid point that changes one of them builds its own dataset (with a log line).
SHARED_KEYS = [
    *dataset_arguments,
    "seed",
    "repeatable",
    "eval_args",
    "eval_batch_size",
    "valid_neg_sample_args",
    "test_neg_sample_args",
    "transform",
    "worker",
    "single_spec",
]


def _dataset_class(config) -> str:
    """The name of the RecBole dataset class create_dataset picks for ``config``."""
    import recbole.data.dataset as module

    if hasattr(module, config["model"] + "Dataset"):
        return config["model"] + "Dataset"
    sequential = config["MODEL_TYPE"].name == "SEQUENTIAL"
    knowledge = config["MODEL_TYPE"].name == "KNOWLEDGE"
    return (
        "SequentialDataset" if sequential else "KnowledgeBasedDataset" if knowledge else "Dataset"
    )


def _shared_settings(config) -> dict:
    return {key: config[key] for key in SHARED_KEYS}


def _pack_sets(sets: np.ndarray) -> dict:
    """An array of sets of ints (a sampler's used item ids per user) as two int64 arrays:
    pickled set by set, ML-20M's 21M numpy integers take minutes; these take milliseconds."""
    lengths = np.fromiter((len(one) for one in sets), dtype=np.int64, count=len(sets))
    values = np.fromiter(
        (int(v) for one in sets for v in one), dtype=np.int64, count=int(lengths.sum())
    )
    return {"packed": "sets", "lengths": lengths, "values": values}


def _unpack_sets(packed: dict) -> np.ndarray:
    values = packed["values"].tolist()
    ends = np.cumsum(packed["lengths"]).tolist()
    sets = np.empty(len(ends), dtype=object)
    start = 0
    for user, end in enumerate(ends):
        sets[user] = set(values[start:end])
        start = end
    return sets


def _pack_tensors(tensors: np.ndarray) -> dict:
    """An array of 1-d tensors or None (a full-sort loader's items per user) as one tensor."""
    present = np.array([t is not None for t in tensors], dtype=bool)
    parts = [t for t in tensors if t is not None]
    return {
        "packed": "tensors",
        "present": present,
        "lengths": np.array([len(t) for t in parts], dtype=np.int64),
        "values": torch.cat(parts) if parts else torch.empty(0, dtype=torch.int64),
    }


def _unpack_tensors(packed: dict) -> np.ndarray:
    tensors = np.array([None] * len(packed["present"]))
    parts = torch.split(packed["values"], packed["lengths"].tolist())
    for user, part in zip(np.flatnonzero(packed["present"]), parts):
        tensors[user] = part
    return tensors


TENSOR_FIELDS = ("uid2positive_item", "uid2history_item")


def _item_counts(built) -> dict:
    """The items of the train, valid and test parts in order of first occurrence, with their
    counts: what RecBole's popularity sampler builds its alias table from. Its order depends
    on the order of the parts' rows, which the full-sort loaders change (they sort by user)."""
    items = np.concatenate([part.inter_feat[part.iid_field].numpy() for part in built])
    keys, first, counts = np.unique(items, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return {"keys": keys[order], "counts": counts[order]}


def build_shared(data_dir, dataset: str, workdir, training: Training) -> dict:
    """Build what every training and export job of ``dataset`` shares: RecBole's dataset, its
    train/valid/test parts, the train negative sampler and the full-sort valid and test
    loaders, ready to save (their per-user sets and tensors packed into flat arrays). Save it
    with :func:`write_shared`; jobs load it with ``shared=PATH``."""
    torch.set_num_threads(training.threads)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir).resolve()
    with contextlib.chdir(workdir):
        data_path = link_split(data_dir, dataset, workdir)
        config = Config(
            model=model_class(REFERENCE_MODEL),
            dataset=recbole_name(dataset),
            config_dict=recbole_settings(REFERENCE_MODEL, {}, data_path, workdir, training),
        )
        init_seed(config["seed"], config["reproducibility"])
        data = create_dataset(config)
        log.info("%s", data)
        built = data.build()
        train_sampler, valid_sampler, test_sampler = create_samplers(config, data, built)
        popularity = _item_counts(built)  # before the evaluation loaders sort their parts
        valid = get_dataloader(config, "valid")(config, built[1], valid_sampler, shuffle=False)
        test = get_dataloader(config, "test")(config, built[2], test_sampler, shuffle=False)
    for loader in (valid, test):
        loader.generator = None  # a torch.Generator does not pickle; each job seeds its own
        loader._sampler = None  # a full-sort loader uses its sampler only while it is built
        for field in TENSOR_FIELDS:
            setattr(loader, field, _pack_tensors(getattr(loader, field)))
    if train_sampler is not None:
        train_sampler.used_ids = _pack_sets(train_sampler.used_ids)
    shared = {
        "format": SHARED_FORMAT,
        "settings": _shared_settings(config),
        "dataset_class": type(data).__name__,
        "dataset": data,
        "built": built,
        "sampler": train_sampler,
        "popularity": popularity,
        "valid": valid,
        "test": test,
    }
    return shared


def write_shared(shared: dict, path) -> None:
    with atomic_path(path) as tmp:
        torch.save(shared, tmp, pickle_protocol=4)


def read_shared(path) -> dict:
    """The content of a file of :func:`write_shared`; an error names the file (as given), the
    rule that writes it and the command that rebuilds it."""
    parts = read_pth(path, rule="recbole_dataset")
    if not isinstance(parts, dict) or parts.get("format") != SHARED_FORMAT:
        raise InputError(
            f"{path}: not a dataset file of this version; rebuild it: snakemake --force {path}"
        )
    parts["path"] = str(path)
    return parts


def load_shared(parts: dict, config):
    """(dataset, train, valid, test loaders) for ``config`` from :func:`read_shared`, or None
    when the job's settings differ from those it was built with (the job builds its own)."""
    path = parts["path"]
    own = _shared_settings(config)
    changed = sorted(k for k in SHARED_KEYS if parts["settings"].get(k) != own[k])
    if changed or parts["dataset_class"] != _dataset_class(config):
        log.info(
            "%s: built with other settings (%s); this job builds its own dataset",
            path,
            ", ".join(changed) or "dataset class",
        )
        return None
    data, built = parts["dataset"], parts["built"]
    for part in (data, *built):
        part.config = config
    for loader in (parts["valid"], parts["test"]):
        for field in TENSOR_FIELDS:
            if isinstance(getattr(loader, field), dict):  # packed (not yet loaded by a job)
                setattr(loader, field, _unpack_tensors(getattr(loader, field)))
    neg = config["train_neg_sample_args"]
    sampler = None
    if neg["distribution"] != "none":  # the used items per user, unpacked only when sampled
        sampler = copy.copy(parts["sampler"])
        sampler.used_ids = _unpack_sets(sampler.used_ids)
        if neg["distribution"] != "uniform":  # popularity: the items in their first order
            candidates = np.repeat(parts["popularity"]["keys"], parts["popularity"]["counts"])
            sampler._get_candidates_list = lambda: list(candidates)
        sampler.alpha = neg["alpha"]
        sampler.set_distribution(neg["distribution"])
    train = get_dataloader(config, "train")(config, built[0], sampler, shuffle=config["shuffle"])
    for loader in (parts["valid"], parts["test"]):
        loader.config = config
        loader.generator = torch.Generator()
        loader.generator.manual_seed(config["seed"])
    log.info("loaded the dataset from %s", path)
    return data, train, parts["valid"], parts["test"]


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
        epoch = torch.load(workdir / CHECKPOINT, map_location="cpu", weights_only=False)["epoch"]
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
