"""The 12 fairness measures as RecBole 1.2.1 metrics (docs/recbole.md).

    from userfair.recbole import register
    register()  # before recbole.quick_start is imported
    from recbole.quick_start import run_recbole
    run_recbole(model=..., dataset=..., config_dict={"metrics": ["NDCG", "PUF_P_Cos", "UF"]})

(a complete script: examples/recbole_puf.py).

:func:`register` adds ``SD_P``, ``SD_NDCG``, ``Gini_P``, ``Gini_NDCG``, ``ME``, ``MME``,
``PEU``, ``UF``, ``PUF_P_Cos``, ``PUF_P_Jacc``, ``PUF_NDCG_Cos`` and ``PUF_NDCG_Jacc``
(:data:`METRICS`; case-insensitive, as RecBole's own names) to RecBole's metric registry,
marks them lower-is-better (so ``valid_metric: PUF_P_Cos@10`` stops early and ranks
``run_hyper`` trials on the smallest value) and applies the runtime fixes RecBole 1.2.1 needs
(:mod:`userfair.recbole_patches`, plus numpy's ``bool8`` for the ray 2.6.3 that
``recbole.quick_start`` imports, and a numpy Generator for the exhaustive search of
RecBole's ``HyperTuning`` on hyperopt >= 0.2.7).

The values are those of :func:`userfair.evaluate.evaluate` with its defaults
(docs/method.md): the evaluated users are the users of RecBole's full-sort evaluation (the
users of the valid or test split, in RecBole's order), the lists are the first k items of
RecBole's own ``torch.topk`` (history masked as RecBole masks it), the relevant items are
RecBole's positive items, and the user similarities and UF's item columns come from the
training interactions. RecBole's collector gathers neither the users of a batch, nor their
positive items, nor the training matrix: :func:`register` wraps
``recbole.evaluator.Collector`` so that it also keeps those three, only when a fairness
metric is configured, and leaves everything RecBole's own metrics read untouched.

Settings (optional RecBole config keys, defaults of ``userfair evaluate``):
``userfair_epsilon`` (0.05), ``userfair_envy_utility`` (``precision``),
``userfair_block_size`` (2048), ``userfair_device`` (``auto``) and ``userfair_route``
(``auto``: the dense blockwise route, the streamed one above
``userfair.streaming.DENSE_MAX_USERS`` evaluated users or when the dense matrices would not
fit in memory). UF uses gamma = 1 (the raw Jaccard).
"""

from __future__ import annotations

import itertools
import logging
import os
import types
from dataclasses import dataclass, replace

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402

from userfair import effectiveness, fairness, recbole_patches, similarity, streaming  # noqa: E402
from userfair import groups as user_groups  # noqa: E402
from userfair._backend import binary_csr, blocks  # noqa: E402
from userfair.inputs import Inputs  # noqa: E402
from userfair.measures import FAIR, FAIR_GROUP, conventions  # noqa: E402

log = logging.getLogger(__name__)

#: The RecBole version this module registers against.
RECBOLE_VERSION = "1.2.1"
#: RecBole metric name -> measure key (``userfair.measures.FAIR``), in Table 2's order.
METRICS = {
    "SD_P": "SD-P",
    "SD_NDCG": "SD-NDCG",
    "Gini_P": "Gini-P",
    "Gini_NDCG": "Gini-NDCG",
    "ME": "ME",
    "MME": "MME",
    "PEU": "PEU",
    "UF": "UF",
    "PUF_P_Cos": "PUF-P-Cos",
    "PUF_P_Jacc": "PUF-P-Jacc",
    "PUF_NDCG_Cos": "PUF-NDCG-Cos",
    "PUF_NDCG_Jacc": "PUF-NDCG-Jacc",
}
#: The group measures (``userfair.measures.FAIR_GROUP``) as RecBole metrics: registered
#: with the 12, computed only with ``userfair_user_groups`` in the config.
GROUP_METRICS = {key.replace("-", "_"): key for key in FAIR_GROUP}
#: What the fairness metrics need beyond RecBole's ``rec.items`` (the collected top-k):
#: the user ids and positive items of each evaluated user, and the training matrix.
NEED_USERS = "userfair.users"
NEED_POSITIVE = "userfair.positive"
NEED_TRAIN = "userfair.train"
#: Settings read from the RecBole config, with the defaults of ``userfair evaluate``.
SETTINGS = {
    "userfair_epsilon": 0.05,
    "userfair_envy_utility": "precision",
    "userfair_block_size": 2048,
    "userfair_device": "auto",
    "userfair_route": "auto",
    "userfair_user_groups": None,
}
#: The user similarities of the last evaluated population are kept (the valid users are
#: the same at every epoch) when both matrices take at most this many bytes.
CACHE_BYTES = 1 << 30

_serial = itertools.count()
_cache: dict = {}
_classes: dict[str, type] = {}


class RecBoleVersionError(RuntimeError):
    """The installed RecBole is not the version the plugin was written for."""


@dataclass(frozen=True, eq=False)
class TrainMatrix:
    """The binary (users, items) training matrix in RecBole's internal ids, as the
    collector keeps it: shared, never copied (``deepcopy`` and ``cpu`` return it)."""

    matrix: sp.csr_matrix
    serial: int
    user_tokens: np.ndarray | None = None  # external user id of each internal one

    def cpu(self):  # Collector.get_data_struct calls .cpu() on everything it holds
        return self

    def __deepcopy__(self, memo):
        return self


def train_matrix(dataset) -> TrainMatrix:
    """The binarised training interactions of a RecBole dataset (rows: internal user ids,
    columns: internal item ids, padding 0 included and empty)."""
    matrix = dataset.inter_matrix(form="csr").astype(np.float64)
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    matrix.eliminate_zeros()
    matrix.sort_indices()
    tokens = np.asarray(dataset.field2id_token[dataset.uid_field]).astype(str)
    return TrainMatrix(matrix.tocsr(), next(_serial), tokens)


# --- the metrics -------------------------------------------------------------------------


def _settings(config) -> dict:
    def get(key):
        value = config[key]
        return SETTINGS[key] if value is None else value

    return {key: get(key) for key in SETTINGS}


def _wanted(config) -> list[str]:
    """The measure keys of the fairness metrics in ``config["metrics"]``."""
    lower = {name.lower(): key for name, key in {**METRICS, **GROUP_METRICS}.items()}
    return [lower[m.lower()] for m in config["metrics"] if m.lower() in lower]


def _topk(config) -> list[int]:
    topk = config["topk"]
    return [topk] if isinstance(topk, int) else list(topk)


class FairnessMetric:
    """Base of the 12 metrics. Every metric of one evaluation shares one computation (kept
    in the DataStruct RecBole hands to each metric in turn), which computes exactly the
    configured fairness measures at every ``topk``."""

    measure: str = ""  # the measure key, set by each subclass
    metric_need = ["rec.items", NEED_USERS, NEED_POSITIVE, NEED_TRAIN]
    smaller = True

    def __init__(self, config):
        self.decimal_place = config["metric_decimal_place"]
        self.topk = _topk(config)
        self.wanted = _wanted(config)
        self.settings = _settings(config)
        if set(self.wanted) & set(FAIR_GROUP) and not self.settings["userfair_user_groups"]:
            raise ValueError(
                f"{'/'.join(GROUP_METRICS)} need the config key userfair_user_groups "
                "(activity:P, feature:NAME of the dataset's .user file, or a user-groups file)"
            )
        self.settings["user_file"] = os.path.join(
            str(config["data_path"]), f"{config['dataset']}.user"
        )

    def calculate_metric(self, dataobject) -> dict:
        key = "userfair.results"
        if key not in dataobject:
            dataobject[key] = compute(dataobject, self.topk, self.wanted, self.settings)
        results = dataobject[key]
        name = type(self).__name__.lower()
        return {
            f"{name}@{k}": round(results[k][self.measure], self.decimal_place) for k in self.topk
        }


def collected_inputs(dataobject, k: int) -> Inputs:
    """The :class:`userfair.inputs.Inputs` of a RecBole evaluation at ``k``: its users (in
    RecBole's order), their positive items, the first ``k`` items of RecBole's top-k and
    the training matrix, in RecBole's internal ids."""
    train = dataobject[NEED_TRAIN] if NEED_TRAIN in dataobject else None
    if not isinstance(train, TrainMatrix):
        raise RuntimeError(
            "the userfair metrics found no training matrix: RecBole's Trainer.fit collects it "
            "(Collector.data_collect); to evaluate without fit, call "
            "trainer.eval_collector.data_collect(train_data) first"
        )
    users = dataobject.get(NEED_USERS).numpy().astype(np.int64)
    positive = dataobject.get(NEED_POSITIVE).numpy().astype(np.int64)
    items = dataobject.get("rec.items").numpy().astype(np.int64)
    m, n = len(users), train.matrix.shape[1]
    if len(np.unique(users)) != m:
        raise ValueError(
            "the userfair metrics need each user evaluated once (full-sort evaluation of a "
            "general recommender)"
        )
    relevant = sp.csr_matrix(
        (np.ones(len(positive)), (positive[:, 0], positive[:, 1])), shape=(m, n)
    )
    relevant.sum_duplicates()
    relevant.data[:] = 1.0
    relevant.sort_indices()
    return Inputs(
        users=users.astype(str),
        items=np.arange(n).astype(str),
        train=train.matrix,
        train_rows=users,
        relevant=relevant,
        topk=np.ascontiguousarray(items[:, :k]),
        genres=None,
    )


def compute(dataobject, topk: list[int], wanted: list[str], settings: dict) -> dict:
    """``{k: {measure: value}}`` of the ``wanted`` measures at every ``k`` of ``topk``."""
    results = {}
    groups = None
    for k in topk:
        inputs = collected_inputs(dataobject, k)
        train = dataobject.get(NEED_TRAIN)
        if groups is None and set(wanted) & set(FAIR_GROUP):
            groups = recbole_groups(inputs, train, settings)
        results[k] = measures(inputs, k, wanted, settings, cache_key=train.serial, groups=groups)
    return results


def recbole_groups(inputs: Inputs, train: TrainMatrix, settings: dict):
    """The :class:`userfair.groups.Groups` of ``userfair_user_groups`` over the evaluated
    users, named by their external ids (a user-groups file and the ``.user`` file name
    RecBole's tokens; activity ties go by those ids, as in ``userfair evaluate``)."""
    named = replace(inputs, users=train.user_tokens[inputs.train_rows])
    spec = settings["userfair_user_groups"]
    features = None
    if user_groups.parse_spec(spec)[0] == "feature":
        features = user_groups.read_user_features(settings["user_file"])
    return user_groups.groups_of(named, spec, features, settings.get("user_file", ""))


def _similarities(inputs: Inputs, kinds: list[str], block_size: int, cache_key) -> dict:
    """The min-max normalised similarities ``kinds`` (``cos``, ``jacc``) of the evaluated
    users, as :func:`userfair.similarity.compute` gives them, from one sparse product of
    the train rows (the intersections both read); cached for the same users and training
    matrix (every epoch's valid evaluation)."""
    users = inputs.users.tobytes()
    found = {kind: _cache.get((cache_key, kind, users)) for kind in kinds}
    missing = [kind for kind, sim in found.items() if sim is None]
    if not missing:
        return found
    rows = binary_csr(inputs.train_of_evaluated())
    degrees = np.asarray(rows.sum(axis=1)).ravel()
    columns = rows.T.tocsr()
    m = rows.shape[0]
    raw = {kind: np.zeros((m, m), dtype=np.float64) for kind in missing}
    formulas = {
        "cos": lambda inter, du, dv: inter / np.sqrt(du * dv),
        "jacc": lambda inter, du, dv: inter / (du + dv - inter),
    }  # as userfair.similarity.cosine and jaccard
    for start, stop in blocks(m, block_size):
        inter = (rows[start:stop] @ columns).tocoo()
        u, v = inter.row.astype(np.int64) + start, inter.col.astype(np.int64)
        off_diagonal = u != v
        u, v, counts = u[off_diagonal], v[off_diagonal], inter.data[off_diagonal]
        for kind in missing:
            with np.errstate(divide="ignore", invalid="ignore"):
                values = formulas[kind](counts, degrees[u], degrees[v])
            raw[kind].reshape(-1)[u * m + v] = np.nan_to_num(
                values, nan=0.0, posinf=0.0, neginf=0.0
            )
    keep = cache_key is not None and 8 * m * m * len(kinds) <= CACHE_BYTES
    if keep:
        for old in [old for old in _cache if old[0] != cache_key or old[2] != users]:
            del _cache[old]
    for kind in missing:
        lo, hi = similarity.pair_range(raw[kind], block_size)
        sim = similarity.min_max(raw[kind], block_size, inplace=True)
        found[kind] = similarity.Similarity(inputs.users, sim, 0.0, lo, hi)
        if keep:
            _cache[(cache_key, kind, users)] = found[kind]
    return found


def measures(
    inputs: Inputs,
    k: int,
    wanted: list[str],
    settings: dict | None = None,
    cache_key=None,
    groups=None,
) -> dict:
    """The fairness measures ``wanted`` (keys of ``userfair.measures.FAIR``) of ``inputs``
    at ``k``, as :func:`userfair.evaluate.evaluate` computes them (gamma = 1), computing
    only what they need. ``settings``: :data:`SETTINGS` (the defaults when None).
    ``groups``: the :class:`userfair.groups.Groups` the group measures read."""
    options = {**SETTINGS, **(settings or {})}
    epsilon = float(options["userfair_epsilon"])
    utility = options["userfair_envy_utility"]
    block_size = int(options["userfair_block_size"])
    device = options["userfair_device"]
    wanted = list(wanted)
    m = len(inputs.users)
    route = streaming.choose_route(m, 1.0, options["userfair_route"])
    if route == "stream":
        log.info("userfair metrics: streamed route for %d users", m)
        result = streaming.stream_evaluate(
            inputs, k=k, epsilon=epsilon, gamma=1.0, envy_utility=utility,
            block_size=block_size, device=device,
        )  # fmt: skip
        if set(wanted) & set(FAIR_GROUP):
            per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
            result.update(user_groups.measures(per_user, groups))
        return {name: float(result[name]) for name in wanted}
    scores: dict[str, float] = {}
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    if set(wanted) & set(FAIR_GROUP):
        scores.update(user_groups.measures(per_user, groups))
    for name in ("P", "NDCG"):
        if f"SD-{name}" in wanted:
            scores[f"SD-{name}"] = fairness.sd(per_user[name])
        if f"Gini-{name}" in wanted:
            scores[f"Gini-{name}"] = fairness.gini(per_user[name])
    if {"ME", "MME", "PEU"} & set(wanted):
        scores.update(
            fairness.envy(
                inputs.topk, inputs.relevant, k=k, epsilon=epsilon, block_size=block_size,
                device=device, utility=utility,
            )
        )  # fmt: skip
    labels = {"cos": "Cos", "jacc": "Jacc"}
    kinds = [kind for kind, label in labels.items() if any(n.endswith(label) for n in wanted)]
    if "UF" in wanted and "jacc" not in kinds:
        kinds.append("jacc")  # UF reads the raw Jaccard
    sims = _similarities(inputs, kinds, block_size, cache_key) if kinds else {}
    for kind, label in labels.items():
        for name in ("P", "NDCG"):
            key = f"PUF-{name}-{label}"
            if key in wanted:
                scores[key] = fairness.puf(
                    per_user[name], sims[kind].sim, block_size=block_size, device=device
                )
    if "UF" in wanted:
        raw = sims["jacc"].raw()
        scores["UF"] = fairness.uf(
            inputs.topk, inputs.train, raw, k=k, block_size=block_size, device=device
        )
    return {name: float(scores[name]) for name in wanted}


def _metric_classes() -> dict[str, type]:
    """One subclass of RecBole's AbstractMetric per measure, named as the metric (made
    once: a second :func:`register` registers the same classes)."""
    if _classes:
        return dict(_classes)
    from recbole.evaluator.base_metric import AbstractMetric
    from recbole.utils import EvaluatorType

    for name, key in {**METRICS, **GROUP_METRICS}.items():
        _classes[name] = type(
            name,
            (FairnessMetric, AbstractMetric),
            {
                "measure": key,
                "metric_type": EvaluatorType.RANKING,
                "__module__": __name__,
                "__doc__": f"{key} (docs/method.md) as a RecBole metric; lower is fairer.",
            },
        )
        globals()[name] = _classes[name]  # importable by name (pickling, ray workers)
    return dict(_classes)


# --- the collector -----------------------------------------------------------------------


def _data_collect(original):
    def data_collect(self, train_data):
        original(self, train_data)
        if self.register.need(NEED_TRAIN):
            self.data_struct.set(NEED_TRAIN, train_matrix(train_data.dataset))

    data_collect.userfair = True
    return data_collect


def _eval_batch_collect(original):
    def eval_batch_collect(self, scores_tensor, interaction, positive_u, positive_i):
        original(self, scores_tensor, interaction, positive_u, positive_i)
        if not self.register.need(NEED_USERS):
            return
        if scores_tensor.dim() != 2 or scores_tensor.shape[0] != len(interaction):
            raise ValueError(
                "the userfair metrics need full-sort evaluation (eval_args mode: full)"
            )
        import torch

        users = interaction[self.config["USER_ID_FIELD"]].detach().cpu()
        offset = len(self.data_struct[NEED_USERS]) if NEED_USERS in self.data_struct else 0
        positive = torch.stack(
            (positive_u.detach().cpu().long() + offset, positive_i.detach().cpu().long()), dim=1
        )
        self.data_struct.update_tensor(NEED_USERS, users)
        self.data_struct.update_tensor(NEED_POSITIVE, positive)

    eval_batch_collect.userfair = True
    return eval_batch_collect


def _get_data_struct(original):
    def get_data_struct(self):
        struct = original(self)
        for key in (NEED_USERS, NEED_POSITIVE):  # per evaluation, as RecBole's rec.* keys
            if key in self.data_struct:
                del self.data_struct[key]
        return struct

    get_data_struct.userfair = True
    return get_data_struct


class _SharedTopkTorch(types.ModuleType):
    """``torch`` as seen by recbole.evaluator.collector: ``topk`` of the very tensor and
    arguments of the previous call returns that call's result. The collector sorts each
    batch's scores once for ``rec.items`` (what the fairness metrics read) and again for
    ``rec.topk`` (RecBole's ranking metrics): the second sort is the first one's result,
    the same tensors, so RecBole's metrics do not change and the plugin costs no second
    sort."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module
        self._last = None

    def __getattr__(self, name):
        return getattr(self._module, name)

    def topk(self, tensor, *args, **kwargs):
        last = self._last
        key = (tensor._version, args, kwargs)  # _version: bumped by in-place changes
        if last is not None and last[0] is tensor and last[1] == key:
            return last[2]
        result = self._module.topk(tensor, *args, **kwargs)
        self._last = (tensor, key, result)
        return result


def _patch_collector() -> None:
    import recbole.evaluator.collector as collector
    from recbole.evaluator.collector import Collector

    if not isinstance(collector.torch, _SharedTopkTorch):
        collector.torch = _SharedTopkTorch(collector.torch)

    for name, wrap in (
        ("data_collect", _data_collect),
        ("eval_batch_collect", _eval_batch_collect),
        ("get_data_struct", _get_data_struct),
    ):
        method = getattr(Collector, name)
        if not getattr(method, "userfair", False):
            setattr(Collector, name, wrap(method))


# --- the config ------------------------------------------------------------------------


def _valid_metric_fix(original):
    """RecBole 1.2.1's default ``valid_metric`` is MRR@10; with a ``metrics`` list
    without MRR (``["NDCG", "PUF_P_Cos", "UF"]``) its trainer fails after the first epoch
    (KeyError 'mrr@10'). Add the valid metric to the evaluated metrics instead (a
    ranking metric to ranking metrics only), so the model is still selected on it."""

    def set_default_parameters(self):
        settings = self.final_config_dict
        metrics = settings.get("metrics")
        metrics = [metrics] if isinstance(metrics, str) else list(metrics or [])
        valid = str(settings.get("valid_metric") or "").split("@")[0]
        from recbole.evaluator.register import metric_types

        lower = [m.lower() for m in metrics]
        types = {metric_types.get(m) for m in lower}
        if valid and valid.lower() not in lower and types == {metric_types.get(valid.lower())}:
            log.warning("valid_metric %s is not among metrics %s: added", valid, metrics)
            settings["metrics"] = metrics + [valid]
        original(self)

    set_default_parameters.userfair = True
    return set_default_parameters


def _patch_config() -> None:
    from recbole.config.configurator import Config

    method = Config._set_default_parameters
    if not getattr(method, "userfair", False):
        Config._set_default_parameters = _valid_metric_fix(method)


def add_metrics(trainer, train_data, names=None, settings: dict | None = None) -> list[str]:
    """Add the fairness metrics ``names`` (default: all 12) to an existing RecBole
    trainer's evaluation (its config's ``metrics``, collector and evaluator) and collect
    the training matrix, for an evaluation without ``fit`` (e.g. of a reloaded
    checkpoint). ``settings``: :data:`SETTINGS` keys to set in the config. Returns the
    metric names added."""
    register()
    from recbole.evaluator import Collector, Evaluator

    config = trainer.config
    for key, value in (settings or {}).items():
        if key not in SETTINGS:
            raise ValueError(f"unknown setting {key!r}; expected one of {list(SETTINGS)}")
        config[key] = value
    names = list(METRICS) if names is None else list(names)
    present = {m.lower() for m in config["metrics"]}
    added = [name for name in names if name.lower() not in present]
    config["metrics"] = list(config["metrics"]) + added
    trainer.eval_collector = Collector(config)
    trainer.evaluator = Evaluator(config)
    trainer.eval_collector.data_collect(train_data)
    return added


def measure_values(result: dict, k: int) -> dict:
    """RecBole's ``{'puf_p_cos@10': ...}`` -> ``{'PUF-P-Cos': ...}`` for the fairness
    metrics present in ``result``, in :data:`METRICS` order, then :data:`GROUP_METRICS`."""
    return {
        key: float(result[f"{name.lower()}@{k}"])
        for name, key in {**METRICS, **GROUP_METRICS}.items()
        if f"{name.lower()}@{k}" in result
    }


def workflow_settings(measures: dict) -> dict:
    """The :func:`add_metrics` arguments of the workflow's ``measures:`` settings (``k``,
    ``epsilon``, ``envy_utility``, ``gamma``, ``block_size``, ``device``): every metric,
    UF only with gamma = 1 (the plugin has no item genres)."""
    names = [n for n in METRICS if n != "UF" or float(measures.get("gamma", 1.0)) == 1.0]
    keys = ("epsilon", "envy_utility", "block_size", "device")
    return {
        "names": names,
        "settings": {f"userfair_{key}": measures[key] for key in keys if key in measures},
    }


def fairness_record(metrics: dict, measures: dict) -> dict:
    """What the topk job writes to recbole_fairness.json: the measures RecBole's test
    evaluation reported (``metrics``, measure keys) and their conventions."""
    return {
        "k": int(measures["k"]),
        **{key: float(metrics[key]) for key in FAIR if key in metrics},
        "conventions": conventions(measures["envy_utility"], measures["epsilon"], 1.0),
    }


# --- registration ------------------------------------------------------------------------


def check_version(version: str) -> None:
    """Raise :class:`RecBoleVersionError` unless ``version`` is :data:`RECBOLE_VERSION`."""
    if version != RECBOLE_VERSION:
        raise RecBoleVersionError(
            f"userfair.recbole supports RecBole {RECBOLE_VERSION} only (its metric registry "
            f"and collector are patched); the installed RecBole is {version}. Install "
            f"recbole=={RECBOLE_VERSION} (pip install 'userfair[recbole]')"
        )


def _ray_fixes() -> None:
    """ray 2.6.3 (the newest RecBole 1.2.1 allows; imported by recbole.quick_start) reads
    ``np.bool8``, which numpy 2 removed."""
    if "bool8" not in np.__dict__:
        np.bool8 = np.bool_


class _GeneratorRandom(types.ModuleType):
    """``numpy`` as seen by recbole.trainer.hyper_tuning, whose exhaustive search seeds
    ``np.random.RandomState``: hyperopt >= 0.2.7 samples with ``rng.integers``, which only
    numpy's Generator has. Everything else is numpy itself."""

    def __init__(self):
        super().__init__("numpy")
        self.random = types.SimpleNamespace(RandomState=np.random.default_rng)

    def __getattr__(self, name):
        return getattr(np, name)


def _hyperopt_fixes() -> None:
    import recbole.trainer.hyper_tuning as hyper_tuning

    if not isinstance(hyper_tuning.np, _GeneratorRandom):
        hyper_tuning.np = _GeneratorRandom()


def register() -> list[str]:
    """Add the 12 metrics and the 2 group metrics (:data:`GROUP_METRICS`, computed when
    the config sets ``userfair_user_groups``) to RecBole's registry (idempotent) and
    apply the runtime fixes; return the metric names. Call it before
    ``recbole.quick_start`` is imported (that import needs the fixes) and in every process
    that builds a RecBole Config."""
    import recbole

    check_version(recbole.__version__)
    recbole_patches.apply()
    _ray_fixes()
    _hyperopt_fixes()
    from recbole.evaluator import register as registry

    classes = _metric_classes()
    for name, cls in classes.items():
        lower = name.lower()
        existing = registry.metrics_dict.get(lower)
        if existing is not None and not issubclass(existing, FairnessMetric):
            raise RuntimeError(
                f"RecBole already has a metric named {lower!r} ({existing!r}); "
                "userfair.recbole would shadow it"
            )
        registry.metrics_dict[lower] = cls
        registry.metric_information[lower] = cls.metric_need
        registry.metric_types[lower] = cls.metric_type
        if lower not in registry.smaller_metrics:
            registry.smaller_metrics.append(lower)
    _patch_collector()
    _patch_config()
    return list(classes)
