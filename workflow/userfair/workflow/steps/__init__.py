"""The workflow's rule steps, one module per stage (workflow/rules/STAGE.smk), one function
per rule: rule ``R`` of stage ``S`` runs workflow/scripts/R.py, which makes one call,
``userfair.workflow.steps.S.R(...)``, with plain values (the paths of the rule's named inputs and
outputs) and small frozen ones (:class:`MeasureSettings`: what a measure computes, the rule's
params; :class:`Speed`: how fast, from the config; :class:`Route`: the route and its files;
:class:`SideFiles`: the optional files a job reads besides its split and top-k lists).
A step reads its inputs, calls the library functions that do the work (named in its
docstring), logs what it did and writes its outputs atomically. The route of the measures
(dense or streamed) is decided once, by the workflow (rules/common/route.smk,
measure_route), and reaches the steps as a :class:`Route`: neither a step nor a script
re-derives it from which files the rule gave. The steps are workflow code: the measures
themselves live in the library modules they call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from userfair import plugins
from userfair.files.io import InputError, read_inter, read_parquet
from userfair.similarity.registry import read_user_vectors
from userfair.workflow import layout

Path = str | os.PathLike

#: The field of the split frames that holds each interaction's grade once :func:`graded_splits`
#: has joined the grades file (rule grades) onto them: ``load_inputs(grade=GRADE)``.
GRADE = "grade"

#: The ``measures:`` settings that change how fast a job runs, never what it writes. They are
#: never rule params (a changed param reruns the job and everything after it): each rule
#: script that needs them reads them from the config with :func:`speed`, and a job's
#: threads come from the rule's ``threads:`` (docs/cluster.md#what-re-runs-after-a-change).
SPEED_KEYS = ("block_size", "device")


def speed(config: Mapping) -> dict:
    """The speed-only settings (:data:`SPEED_KEYS`) of the workflow's config."""
    return {key: config["measures"][key] for key in SPEED_KEYS}


@dataclass(frozen=True)
class Speed:
    """How fast a measures job runs, never what it writes: the config's speed-only settings
    (:data:`SPEED_KEYS`; never rule params, so changing them reruns nothing). The job's
    threads are the rule's ``threads:`` (config measures.threads), which Snakemake gives
    the job's process."""

    block_size: int = 2048
    device: str = "auto"

    @classmethod
    def of(cls, config: Mapping) -> Speed:
        """The speed settings of the workflow's config."""
        return cls(**speed(config))


class _Settings:
    """A frozen settings value read from a rule's params."""

    @classmethod
    def of(cls, params: Mapping, besides: Sequence = ()):
        """The value of the params named like its fields; every other param must be named
        in ``besides`` (a param name, or a settings class whose fields it takes), so that a
        param no step reads is an error, not silently dropped."""
        names = {f.name for f in fields(cls)}
        others = set()
        for other in besides:
            others |= {f.name for f in fields(other)} if isinstance(other, type) else {other}
        unknown = sorted(set(params.keys()) - names - others)
        if unknown:
            raise ValueError(f"params {unknown}: no field of {cls.__name__} nor {sorted(others)}")
        return cls(**{name: params[name] for name in params.keys() if name in names})


@dataclass(frozen=True)
class MeasureSettings(_Settings):
    """What a measures job computes: the rule's params of rules/common/params.smk
    (measure_settings, opt_in_params, the seed), each of which reruns the job when it
    changes. The defaults are the library's (userfair.evaluate.evaluate) and the opt-in
    measures off."""

    k: int = 10
    epsilon: float = 0.05
    envy_utility: str = "precision"
    gamma: float = 1.0
    graded: bool = False
    extra_similarities: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    estimate: Mapping | None = None
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "extra_similarities", tuple(self.extra_similarities))
        object.__setattr__(self, "plugins", tuple(self.plugins))


@dataclass(frozen=True)
class WhoSettings(_Settings):
    """What the users job adds to the measures (config ``who:``): the declared user
    features, how many worst cases of which measure, with how many neighbours."""

    features: tuple[str, ...] = ()
    worst: int = 10
    worst_measure: str = "PUF-P-Cos"
    neighbours: int = 10

    def __post_init__(self):
        object.__setattr__(self, "features", tuple(self.features))


#: The routes of the measures the workflow decides between (rules/common/route.smk,
#: measure_route; the answers of userfair.engine.route.choose_route).
ROUTES = ("dense", "stream")
#: The named inputs that belong to a route: the similarity files (dense) or pass one and
#: the parts of pass two (stream).
ROUTE_FILES = ("cos", "jacc", "genre", "pairs", "sums")


@dataclass(frozen=True)
class Route:
    """The route of a dataset's measures as the workflow decided it, once
    (rules/common/route.smk, measure_route; a job's ``route`` param), with the files of
    that route the rule gave: the similarity files ``cos``, ``jacc``[, ``genre``] (dense)
    or pass one ``pairs`` and pass two's parts ``sums`` (stream). A step asks
    :attr:`streamed`, never which files it got."""

    name: str
    cos: Path | None = None
    jacc: Path | None = None
    genre: Sequence[Path] = ()
    pairs: Path | None = None
    sums: Sequence[Path] = field(default_factory=tuple)

    def __post_init__(self):
        if self.name not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES}, got {self.name!r}")

    @property
    def streamed(self) -> bool:
        return self.name == "stream"

    def require(
        self, dense: Sequence[str] = ("cos", "jacc"), stream: Sequence[str] = ("pairs", "sums")
    ) -> Route:
        """This route, after checking that the rule gave the files it reads (``dense`` or
        ``stream``, by name); a ValueError names the missing ones."""
        missing = [name for name in (stream if self.streamed else dense) if not getattr(self, name)]
        if missing:
            raise ValueError(f"route {self.name!r}: the rule gave no input {missing}")
        return self


def route_of(name: str, inputs: Mapping) -> Route:
    """The :class:`Route` ``name`` of a job (its ``route`` param: the workflow's decision)
    with that route's files among its named ``inputs`` (:func:`named`)."""
    return Route(name, **named(inputs, keys=ROUTE_FILES))


#: The optional named inputs of a measures job, besides its split and top-k lists: the item
#: genres (rule genres), the user vectors (rule user_vectors), the grades (rule grades) and
#: the raw file the declared user features are read from.
SIDE_FILES = ("item", "vectors", "grades", "raw")


@dataclass(frozen=True)
class SideFiles:
    """The optional files of one job, as one value (:data:`SIDE_FILES`): ``item`` (the item
    genres: UF at gamma < 1, the genre similarity, the streamed route), ``vectors`` (the
    user vectors of ``embedding:MODEL``), ``grades`` (graded relevance), ``raw`` (the raw
    file of the declared user features). Each is a path or None: the rule gave none. A step
    asks the value for what it reads, never which inputs the rule had."""

    item: Path | None = None
    vectors: Path | None = None
    grades: Path | None = None
    raw: Path | None = None

    def __post_init__(self):
        for name in SIDE_FILES:  # a rule's optional input is a list of none or one path
            object.__setattr__(self, name, only(getattr(self, name)))

    @classmethod
    def of(cls, inputs: Mapping) -> SideFiles:
        """The side files among a rule's named ``inputs``."""
        return cls(**named(inputs, keys=SIDE_FILES))

    def item_features(self, needed: bool = True) -> Path | None:
        """The item genres file when ``needed`` (else None: the inputs load without them)."""
        return self.item if needed else None

    def user_vectors(self, extra_similarities: Sequence[str], users) -> np.ndarray | None:
        """The user vectors of ``vec`` in the order of ``users`` (None without ``vec`` among
        ``extra_similarities``), after checking that the opt-in similarities' files were
        given: a ValueError names the missing one."""
        if "genre" in extra_similarities and not self.item:
            raise ValueError("the genre similarity (measures.similarities) needs the item genres")
        if "vec" not in extra_similarities:
            return None
        if not self.vectors:
            raise ValueError("embedding:MODEL (measures.similarities) needs the user vectors file")
        return read_user_vectors(self.vectors, users)


#: The ``training:`` settings that change how fast (and in how much memory) a training or
#: export job runs, never what it writes: RecBole's full-sort evaluation scores the same
#: users against the same items in batches of any size. Never rule params, as
#: :data:`SPEED_KEYS`: the scripts of recbole_dataset, tune, topk, user_vectors and
#: replicate add them with :func:`with_training_speed`. (``training.threads`` is the rules'
#: ``threads:`` and ``training.checkpoint_every`` is read by the tune and replicate scripts.)
TRAINING_SPEED_KEYS = ("eval_batch_size",)


def with_training_speed(training: Mapping, config: Mapping) -> dict:
    """The training settings a job's step receives: the rule's ``training`` param and the
    speed-only settings (:data:`TRAINING_SPEED_KEYS`) of the workflow's config."""
    return {**training, **{key: config["training"][key] for key in TRAINING_SPEED_KEYS}}


def load_plugins(config: Mapping) -> list[str]:
    """Load and check the plugin measures of ``config`` (``measures.plugins`` and, unless
    ``measures.entry_points`` is false, the installed entry points; userfair.plugins.load)
    in this process; ``NAME=module:Class`` of each, in load order. A bad plugin raises
    userfair.plugins.PluginError, one line naming it."""
    settings = config.get("measures", {}) if isinstance(config, Mapping) else {}
    declared = plugins.load(
        list(settings.get("plugins", [])), entry_points=bool(settings.get("entry_points", True))
    )
    return [f"{measure.name}={measure.source}" for measure in declared]


def read_optional_csv(path: Path | None) -> pd.DataFrame | None:
    """The table of an optional named input: ``None`` without one, an empty frame when the
    file was written with no column (a stage that had nothing to tabulate)."""
    if path is None:
        return None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def only(paths: Sequence[Path] | Path | None) -> Path | None:
    """The one path of an optional named input: ``None`` when the rule gave none."""
    if paths is None or isinstance(paths, (str, os.PathLike)):
        return paths
    if len(paths) > 1:
        raise ValueError(f"expected at most one path, got {list(paths)}")
    return paths[0] if len(paths) else None


def named(
    inputs: Mapping[str, object], *, prefix: str | None = None, keys: Sequence[str] = ()
) -> dict:
    """A rule's named inputs as plain values: those whose name starts with ``prefix``, keyed
    by the rest of the name (``"measures:D/M"`` -> ``"D/M"``; rules/common/paths.smk's per_run and
    per_model), or those of ``keys`` the rule has (a list input stays a list)."""
    if prefix is not None:
        return {
            name[len(prefix) :]: str(path)
            for name, path in inputs.items()
            if name.startswith(prefix)
        }
    return {
        name: (str(value) if isinstance(value, (str, os.PathLike)) else [str(v) for v in value])
        for name, value in inputs.items()
        if name in keys
    }


def graded_splits(
    train: Path, test: Path, grades: Sequence[Path] | Path | None, graded: bool
) -> tuple[object, object, str | None]:
    """The train and test splits as the library reads them, with graded relevance
    (config measures.relevance has graded, ``graded``): each split's (user_id, item_id)
    frame with the grade of its interaction from ``grades`` (rule grades'
    results/D/data/grades.parquet: user_id, item_id, grade for every kept interaction) in
    column :data:`GRADE`, and that column's name; without it the paths as given and None.
    An interaction the grades file lacks is an InputError naming both files.

    The grades file is keyed once for both splits (:class:`GradeLookup`): at ML-20M size
    (20 M interactions) this takes 18 s and 2.5 GiB where a pandas merge of each split on
    the two id columns took 74 s and 3.7 GiB
    (docs/performance.md#graded-relevance-at-ml-20m-size)."""
    grades = only(grades)
    if not graded:
        return train, test, None
    if grades is None:
        raise ValueError(
            "measures.relevance has graded but the rule gave no grades file "
            f"({layout.output('grades')}, rule grades)"
        )
    table = read_parquet(grades, dtype_backend="pyarrow")  # ids as Arrow text, not objects
    missing = [c for c in ("user_id", "item_id", GRADE) if c not in table.columns]
    if missing:
        raise InputError(f"{grades}: no column {missing} (expected user_id, item_id, {GRADE})")
    lookup = GradeLookup(table, grades)
    return lookup.join(train), lookup.join(test), GRADE


def _factorized(ids: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """The codes of the ids ``ids`` (read as text) and the distinct ids, as Python strings
    like the split files' (pandas factorises Arrow text in C, without a Python string per
    row)."""
    if not pd.api.types.is_string_dtype(ids.dtype):
        ids = ids.astype(str)
    codes, uniques = pd.factorize(ids)
    return codes, pd.Index(np.asarray(uniques, dtype=object))


class GradeLookup:
    """The grades file keyed for lookups: the users and the items factorised once (ids as
    text, as the split files are read) and each interaction an integer key, user code x
    number of items + item code, in a hash index; a split's interactions are then looked up
    by integer, with no merge on two text columns."""

    def __init__(self, table: pd.DataFrame, path: Path):
        self.path = path
        user_codes, self.users = _factorized(table["user_id"])
        item_codes, self.items = _factorized(table["item_id"])
        self.keys = pd.Index(self._key(user_codes, item_codes))
        if not self.keys.is_unique:
            raise InputError(
                f"{path}: a (user_id, item_id) appears twice; rebuild it: snakemake --force {path}"
            )
        self.grades = table[GRADE].to_numpy(dtype="float64")

    def _key(self, user_codes: np.ndarray, item_codes: np.ndarray) -> np.ndarray:
        """Each (user code, item code) pair as one int64; -1 where either is -1 (unknown)."""
        keys = user_codes.astype(np.int64) * len(self.items) + item_codes
        keys[(user_codes < 0) | (item_codes < 0)] = -1
        return keys

    def join(self, split: Path) -> pd.DataFrame:
        """The (user_id, item_id) interactions of the split file ``split`` with their grades
        in column :data:`GRADE`, in the split's order."""
        frame = read_inter(split)[["user_id", "item_id"]].reset_index(drop=True)
        users = self.users.get_indexer(frame["user_id"])
        items = self.items.get_indexer(frame["item_id"])
        at = self.keys.get_indexer(self._key(users, items))  # -1: not in the grades file
        lacking = at < 0
        if lacking.any():
            user, item = frame.loc[lacking, ["user_id", "item_id"]].iloc[0]
            raise InputError(
                f"{self.path}: no grade for user {user!r} item {item!r} of {split} "
                f"({int(lacking.sum())} interactions of it lack one): both must come from the "
                f"same data; rebuild it: snakemake --force {self.path}"
            )
        frame[GRADE] = self.grades[at]
        return frame
