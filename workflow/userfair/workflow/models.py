"""The recommenders the workflow can train: every general recommender of RecBole 1.2.1 plus
our UserKNN. The one registry of model names that the schema checks, the rules, the SLURM
routing, the grids and the tables read.

Light on purpose (no torch, no RecBole import): the model classes are found by reading the
source of ``recbole.model.general_recommender`` and their hyper-parameters from RecBole's
``properties/model/<Model>.yaml``, so Snakemake can check a config while it builds the DAG.
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from userfair.files.io import InputError
from userfair.workflow import yamlfile

# Training settings a grid may vary for every trainable model.
TRAINING_KEYS = ("learning_rate", "weight_decay", "train_batch_size")
# Our models (userfair.workflow.userknn): UserKNN, which RecBole lacks, and a batch-wise ItemKNN.
OWN_MODELS = {"UserKNN": ("k", "shrink")}
# The paper's short names for tables and figures; other models keep their own name.
LABELS = {"UserKNN": "U-KNN", "ItemKNN": "I-KNN", "NeuMF": "NMF", "MultiVAE": "MVAE"}
# What a job's cost grows with (userfair.workflow.costs.KINDS): neighbourhoods over user or item
# pairs, one pass over the train interactions, dense user rows over all items, or the whole
# user-item graph propagated in every batch. A model not listed is costed as a graph model
# (trainable) or as user-knn (not), the costliest of their kind.
COST_KINDS = {
    "UserKNN": "user-knn",
    "ItemKNN": "item-knn",
    "BPR": "pairwise",
    "NeuMF": "pairwise",
    "MultiVAE": "autoencoder",
    **dict.fromkeys(("NGCF", "NCL", "LightGCN", "SGL", "DGCF", "GCMC", "SpectralCF"), "graph"),
}


@dataclass(frozen=True)
class Model:
    """One recommender: whether it trains for epochs (RecBole's ``ModelType.TRADITIONAL``
    models and UserKNN are built in one pass and never want a GPU) and the hyper-parameters
    a grid may set (RecBole's own parameters of the model, plus the training keys for
    trainable models)."""

    name: str
    trainable: bool
    grid_keys: tuple[str, ...]

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    @property
    def cost_kind(self) -> str:
        """What the model's jobs cost grows with (:data:`COST_KINDS`, userfair.workflow.costs)."""
        return COST_KINDS.get(self.name, "graph" if self.trainable else "user-knn")

    def gpus(self, device: str) -> int:
        """GPUs a training or export job asks for: one for a trainable model unless the
        training device is ``cpu``. The SLURM profile routes jobs by this number too."""
        return int(self.trainable and device != "cpu")


def _recbole_root() -> Path:
    spec = importlib.util.find_spec("recbole")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("RecBole is not installed: the workflow's models need recbole==1.2.1")
    return Path(spec.submodule_search_locations[0])


#: A top-level class statement (its bases may span lines) and a ``type = ...`` assignment
#: in a class body (one indentation level), in RecBole's model sources.
_CLASS = re.compile(r"^class\s+(\w+)\s*(?:\(([^)]*)\))?\s*:", re.M)
_TYPE = re.compile(r"^(?:    |\t)type\s*=\s*([\w.]+)", re.M)
_TOP_LEVEL = re.compile(r"^[^\s#]", re.M)


def _classes(text: str) -> dict[str, tuple[list[str], bool | None]]:
    """{class: (base names, traditional: True/False/None when the class does not say)} of
    the top-level classes of a module's source. A scan of the class statements, not a
    parse of the whole file: every Snakemake start reads the 34 model files, which ast took
    0.16 s for (tests/workflow/test_models.py checks the result against the imported
    classes)."""
    classes = {}
    for match in _CLASS.finditer(text):
        body_end = _TOP_LEVEL.search(text, match.end())
        body = text[match.end() : body_end.start() if body_end else len(text)]
        says = None
        for kind in _TYPE.findall(body):
            says = kind.rsplit(".", 1)[-1] == "TRADITIONAL"
        bases = [b.split("=")[-1].strip().rsplit(".", 1)[-1] for b in (match[2] or "").split(",")]
        classes[match[1]] = ([b for b in bases if b], says)
    return classes


def _general_recommenders(package: Path) -> dict[str, bool]:
    """{class name: trainable} of the classes exported by the general_recommender package
    that derive, directly or through another one, from GeneralRecommender; read from the
    source. A class is traditional when it or a base sets ``type = ModelType.TRADITIONAL``."""
    exported = set()
    for node in ast.parse((package / "__init__.py").read_text()).body:
        if isinstance(node, ast.ImportFrom):
            exported |= {alias.asname or alias.name for alias in node.names}
    classes = {}  # name -> (bases, traditional: True/False/None when the class does not say)
    for path in sorted(package.glob("*.py")):
        classes.update(_classes(path.read_text()))

    @functools.cache
    def traditional(name: str) -> bool | None:
        """Whether ``name`` is a traditional general recommender; None if not one at all."""
        if name == "GeneralRecommender":
            return False
        bases, says = classes.get(name, ((), None))
        inherited = [
            traditional(base) for base in bases if base in classes or base == "GeneralRecommender"
        ]
        inherited = [value for value in inherited if value is not None]
        if not inherited:
            return None
        return says if says is not None else inherited[0]

    return {
        name: not traditional(name)
        for name in sorted(exported)
        if name in classes and traditional(name) is not None
    }


def _recbole_keys(root: Path, name: str) -> tuple[str, ...]:
    path = root / "properties" / "model" / f"{name}.yaml"
    if not path.is_file():
        return ()
    return tuple(yamlfile.trusted(path) or {})


@functools.cache
def registry() -> dict[str, Model]:
    """Every model the workflow can train, by name (sorted)."""
    root = _recbole_root()
    models = {}
    for name, trainable in _general_recommenders(root / "model" / "general_recommender").items():
        keys = _recbole_keys(root, name) + (TRAINING_KEYS if trainable else ())
        models[name] = Model(name, trainable, tuple(dict.fromkeys(keys)))
    for name, keys in OWN_MODELS.items():
        models[name] = Model(name, False, keys)
    return dict(sorted(models.items()))


def names() -> tuple[str, ...]:
    return tuple(registry())


def get(name: str) -> Model:
    """The registry entry of ``name``; an error naming close matches for an unknown one."""
    try:
        return registry()[name]
    except KeyError:
        close = difflib.get_close_matches(name, names(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(
            f"model '{name}' is not a RecBole 1.2.1 general recommender nor UserKNN{hint} "
            f"(known: {', '.join(names())})"
        ) from None


def label(name: str) -> str:
    """The short name of ``name`` in tables and figures (the paper's, where it has one)."""
    return LABELS.get(name, name)
