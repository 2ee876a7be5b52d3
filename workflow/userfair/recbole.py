"""The 12 fairness measures as RecBole 1.2.1 metrics (docs/recbole.md).

    from userfair.recbole import register
    register()  # before recbole.quick_start is imported
    from recbole.quick_start import run_recbole
    run_recbole(model=..., dataset=..., config_dict={"metrics": ["NDCG", "PUF_P_Cos", "UF"]})

(a complete script: examples/recbole_puf.py).

:func:`register` adds ``SD_P``, ``SD_NDCG``, ``Gini_P``, ``Gini_NDCG``, ``ME``, ``MME``,
``PEU``, ``UF``, ``PUF_P_Cos``, ``PUF_P_Jacc``, ``PUF_NDCG_Cos`` and ``PUF_NDCG_Jacc``
(:data:`METRICS`; case-insensitive, as RecBole's own names), the group measures
(:data:`GROUP_METRICS`) and the opt-in ones (:data:`OPT_IN_METRICS`: gNDCG, SD_gNDCG,
Gini_gNDCG and the PUF variants such as PUF_gNDCG_RCos, computed with ``userfair_grade``,
``userfair_user_vectors``, ``userfair_item_features``; docs/recbole.md#opt-in-measures) to
RecBole's metric registry, marks the fairness ones lower-is-better (so ``valid_metric:
PUF_P_Cos@10`` stops early and ranks ``run_hyper`` trials on the smallest value) and
applies the runtime fixes RecBole 1.2.1 needs (:mod:`userfair.recbole_patches`, the one
place for them).

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
``userfair.engine.route.DENSE_MAX_USERS`` evaluated users or when the dense matrices would not
fit in memory). UF uses gamma = 1 (the raw Jaccard).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

from userfair import plugins as plugin_loader  # noqa: E402
from userfair import recbole_patches  # noqa: E402  (after the check, which names the extra)
from userfair.measures import (  # noqa: E402
    FAIR,
    FAIR_GROUP,
    OPT_IN,
    higher_is_better,
    plugin_names,
    served,
)
from userfair.recbole_collector import (  # noqa: E402
    NEED_POSITIVE,
    NEED_TRAIN,
    NEED_USERS,
    patch_collector,
)
from userfair.recbole_measures import SETTINGS, compute  # noqa: E402  (what they compute)
from userfair.similarity import registry as registry_  # noqa: E402

log = logging.getLogger(__name__)

#: The RecBole version this module registers against.
RECBOLE_VERSION = "1.2.1"
#: RecBole metric name -> measure key: every measure of ``userfair.measures.FAIR`` whose
#: declaration lists the ``recbole`` route, in Table 2's order (``SD_P``, ..., ``PUF_NDCG_Jacc``).
METRICS = {key.replace("-", "_"): key for key in served("recbole", FAIR)}
#: The group measures (``userfair.measures.FAIR_GROUP``) as RecBole metrics: registered
#: with the 12, computed only with ``userfair_user_groups`` in the config.
GROUP_METRICS = {key.replace("-", "_"): key for key in FAIR_GROUP}
#: The opt-in measures (``userfair.measures.OPT_IN``: gNDCG, SD_gNDCG, Gini_gNDCG and the
#: PUF variants, e.g. PUF_gNDCG_RCos) as RecBole metrics: registered with the 12, computed
#: with what they need in the config (``userfair_grade``, ``userfair_user_vectors``,
#: ``userfair_item_features``). gNDCG is higher-is-better, the others lower.
OPT_IN_METRICS = {key.replace("-", "_"): key for key in OPT_IN}
#: Every metric :func:`register` adds, RecBole name -> measure key.
ALL_METRICS = {**METRICS, **GROUP_METRICS, **OPT_IN_METRICS}
#: What each kind of opt-in measure needs, the config key that gives it.
OPT_IN_NEEDS = {
    "grades": "userfair_grade",
    "vectors": "userfair_user_vectors",
    "genres": "userfair_item_features",
}
_classes: dict[str, type] = {}


class RecBoleVersionError(RuntimeError):
    """The installed RecBole is not the version the plugin was written for."""


# --- the metrics -------------------------------------------------------------------------


def _settings(config) -> dict:
    def get(key):
        value = config[key]
        return SETTINGS[key] if value is None else value

    return {key: get(key) for key in SETTINGS}


def metric_names() -> dict[str, str]:
    """RecBole metric name -> measure key of every metric :func:`register` adds: the
    built-ins (:data:`ALL_METRICS`) and the plugin measures loaded in this process
    (docs/plugins.md; ``PUF2-P-Cos`` -> ``PUF2_P_Cos``)."""
    return {**ALL_METRICS, **{key.replace("-", "_"): key for key in plugin_names()}}


def _wanted(config) -> list[str]:
    """The measure keys of the fairness metrics in ``config["metrics"]``."""
    lower = {name.lower(): key for name, key in metric_names().items()}
    return [lower[m.lower()] for m in config["metrics"] if m.lower() in lower]


def _topk(config) -> list[int]:
    topk = config["topk"]
    return [topk] if isinstance(topk, int) else list(topk)


def opt_in_needs(measure: str) -> list[str]:
    """What an opt-in measure needs beyond the lists: ``grades`` (gNDCG and its spread,
    PUF with gNDCG or RCos), ``vectors`` (Vec), ``genres`` (Genre)."""
    needs = []
    if "gNDCG" in measure or measure.endswith("-RCos"):
        needs.append("grades")
    if measure.startswith("PUF-"):
        need = registry_.entry(measure.rsplit("-", 1)[1]).needs
        if need not in (None, "grades"):
            needs.append(need)
    return needs


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
        for measure in set(self.wanted) & set(OPT_IN):
            for need in opt_in_needs(measure):
                if not self.settings[OPT_IN_NEEDS[need]]:
                    raise ValueError(
                        f"{measure.replace('-', '_')} needs {need}: set the config key "
                        f"{OPT_IN_NEEDS[need]} (docs/recbole.md#opt-in-measures)"
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


def _metric_classes() -> dict[str, type]:
    """One subclass of RecBole's AbstractMetric per measure, named as the metric (made
    once: a second :func:`register` registers the same classes, and the plugins loaded
    since)."""
    from recbole.evaluator.base_metric import AbstractMetric
    from recbole.utils import EvaluatorType

    for name, key in metric_names().items():
        if name in _classes:
            continue
        better = "higher is better" if higher_is_better(key) else "lower is fairer"
        _classes[name] = type(
            name,
            (FairnessMetric, AbstractMetric),
            {
                "measure": key,
                "metric_type": EvaluatorType.RANKING,
                "smaller": not higher_is_better(key),
                "__module__": __name__,
                "__doc__": f"{key} (docs/method.md) as a RecBole metric; {better}.",
            },
        )
        globals()[name] = _classes[name]  # importable by name (pickling, ray workers)
    return dict(_classes)


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
        for name, key in metric_names().items()
        if f"{name.lower()}@{k}" in result
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


def register(plugins: Sequence[str] = (), entry_points: bool = True) -> list[str]:
    """Add the 12 metrics, the 2 group metrics (:data:`GROUP_METRICS`, computed when
    the config sets ``userfair_user_groups``) to RecBole's registry (idempotent) and
    apply the runtime fixes; return the metric names. Call it before
    ``recbole.quick_start`` is imported (that import needs the fixes) and in every process
    that builds a RecBole Config.

    Plugin measures (docs/plugins.md) become metrics too: those of the installed entry
    points (unless ``entry_points`` is False), of ``plugins`` (``module:Class``) and any
    loaded before, named with ``_`` for ``-`` (``PUF2-P-Cos`` -> ``PUF2_P_Cos``)."""
    import recbole

    plugin_loader.load(plugins, entry_points=entry_points)

    check_version(recbole.__version__)
    recbole_patches.apply()
    recbole_patches.apply_plugin_fixes()
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
        if cls.smaller and lower not in registry.smaller_metrics:
            registry.smaller_metrics.append(lower)
    patch_collector()
    return list(classes)
