"""The RecBole dataset of a split, built once (rule recbole_dataset, :func:`build_shared`)
and loaded by every training and export job of that dataset (:func:`read_shared`,
:func:`load_shared`; ``recommenders.prepare(..., shared=...)``): the dataset, its
train/valid/test parts, the negative sampler and the full-sort valid/test loaders, i.e. all
that does not depend on the grid point, in the format of :mod:`userfair.files.safe_pth`
(docs/training.md#dataset).
"""

from __future__ import annotations

import contextlib
import copy
import logging
from pathlib import Path

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch", "recbole")
require("workflow", NEEDS, __name__)

# recbole_setup first: importing it applies the RecBole fixes that RecBole's own modules need
from userfair.workflow.recbole_setup import (  # noqa: E402
    Training,
    link_split,
    model_class,
    recbole_name,
    recbole_settings,
)

# isort: split
import numpy as np  # noqa: E402
import torch  # noqa: E402
from recbole.config import Config  # noqa: E402
from recbole.data import create_dataset  # noqa: E402
from recbole.data.dataloader import FullSortEvalDataLoader  # noqa: E402
from recbole.data.dataset import Dataset as RecBoleDataset  # noqa: E402
from recbole.data.interaction import Interaction  # noqa: E402
from recbole.data.transform import Equal  # noqa: E402
from recbole.data.utils import create_samplers, get_dataloader  # noqa: E402
from recbole.sampler import Sampler  # noqa: E402
from recbole.utils import FeatureSource, FeatureType, init_seed  # noqa: E402
from recbole.utils.argument_list import dataset_arguments  # noqa: E402
from torch.utils.data import BatchSampler, SequentialSampler  # noqa: E402

from userfair.files.io import FileError, read_pth, write_pth  # noqa: E402

log = logging.getLogger(__name__)

# --- the dataset, built once per split (rule recbole_dataset) --------------------------------

# The model whose config builds the shared parts: a general recommender with uniform negative
# sampling, so that the sampler is built too (a job re-targets it to its own distribution).
REFERENCE_MODEL = "BPR"
SHARED_FORMAT = 2  # 2: userfair.files.safe_pth, objects of SHARED_CLASSES only (1: a pickle)
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
    for part in (data, *built, valid, test):
        part.config = None  # each job sets its own (load_shared); a Config is not data
    for loader in (valid, test):
        loader.generator = None  # a torch.Generator is not saved; each job seeds its own
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


def _dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


#: The classes whose objects a dataset file may hold (userfair.files.safe_pth rebuilds only these,
#: by __new__ and their attributes: no constructor or other code of the file runs), and the
#: one method it may hold.
SHARED_CLASSES = tuple(
    _dotted(cls)
    for cls in (
        RecBoleDataset,
        Interaction,
        FullSortEvalDataLoader,
        Equal,
        Sampler,
        SequentialSampler,
        BatchSampler,
        FeatureType,
        FeatureSource,
    )
) + (f"{_dotted(FullSortEvalDataLoader)}.collate_fn",)  # the loaders' collate_fn


def write_shared(shared: dict, path) -> None:
    """Write the content of :func:`build_shared` to ``path`` (userfair.files.io.write_pth)."""
    write_pth(shared, path, classes=SHARED_CLASSES)


def read_shared(path) -> dict:
    """The content of a file of :func:`write_shared`; an error names the file (as given) and,
    through :func:`userfair.workflow.layout.explain`, the rule that writes it and the command
    that rebuilds it. A file that would run code if loaded is refused without being
    loaded."""
    parts = read_pth(path, classes=SHARED_CLASSES)
    if not isinstance(parts, dict) or parts.get("format") != SHARED_FORMAT:
        raise FileError(path, f"{path}: not a dataset file of this version")
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
