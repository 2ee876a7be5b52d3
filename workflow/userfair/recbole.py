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
``userfair.route.DENSE_MAX_USERS`` evaluated users or when the dense matrices would not
fit in memory). UF uses gamma = 1 (the raw Jaccard).
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402

from userfair import (  # noqa: E402
    effectiveness,
    fairness,
    recbole_patches,
    similarity,
    streaming,
    variants,
)
from userfair import groups as user_groups  # noqa: E402
from userfair import route as route_  # noqa: E402
from userfair import similarities as registry_  # noqa: E402
from userfair._backend import binary_csr, blocks  # noqa: E402
from userfair.inputs import Inputs, read_genre_matrix  # noqa: E402
from userfair.measures import FAIR_GROUP, OPT_IN, higher_is_better  # noqa: E402
from userfair.recbole_collector import (  # noqa: E402
    NEED_GRADES,
    NEED_POSITIVE,
    NEED_TRAIN,
    NEED_USERS,
    TrainMatrix,
    patch_collector,
)
from userfair.similarities import read_user_vectors  # noqa: E402

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
#: The opt-in measures (``userfair.measures.OPT_IN``: gNDCG, SD_gNDCG, Gini_gNDCG and the
#: PUF variants, e.g. PUF_gNDCG_RCos) as RecBole metrics: registered with the 12, computed
#: with what they need in the config (``userfair_grade``, ``userfair_user_vectors``,
#: ``userfair_item_features``). gNDCG is higher-is-better, the others lower.
OPT_IN_METRICS = {key.replace("-", "_"): key for key in OPT_IN}
#: Every metric :func:`register` adds, RecBole name -> measure key.
ALL_METRICS = {**METRICS, **GROUP_METRICS, **OPT_IN_METRICS}
#: Settings read from the RecBole config, with the defaults of ``userfair evaluate``.
SETTINGS = {
    "userfair_epsilon": 0.05,
    "userfair_envy_utility": "precision",
    "userfair_block_size": 2048,
    "userfair_device": "auto",
    "userfair_route": "auto",
    "userfair_user_groups": None,
    "userfair_grade": None,
    "userfair_user_vectors": None,
    "userfair_item_features": None,
}
#: What each kind of opt-in measure needs, the config key that gives it.
OPT_IN_NEEDS = {
    "grades": "userfair_grade",
    "vectors": "userfair_user_vectors",
    "genres": "userfair_item_features",
}
#: The user similarities of the last evaluated population are kept (the valid users are
#: the same at every epoch) when both matrices take at most this many bytes.
CACHE_BYTES = 1 << 30

_cache: dict = {}
_classes: dict[str, type] = {}


class RecBoleVersionError(RuntimeError):
    """The installed RecBole is not the version the plugin was written for."""


# --- the metrics -------------------------------------------------------------------------


def _settings(config) -> dict:
    def get(key):
        value = config[key]
        return SETTINGS[key] if value is None else value

    return {key: get(key) for key in SETTINGS}


def _wanted(config) -> list[str]:
    """The measure keys of the fairness metrics in ``config["metrics"]``."""
    lower = {name.lower(): key for name, key in ALL_METRICS.items()}
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
    train_grades = grades = None
    if train.grades is not None:
        if NEED_GRADES not in dataobject:
            raise RuntimeError(
                "the userfair metrics found no grades of the evaluated split: evaluate with "
                "recbole's Trainer.evaluate after userfair.recbole.register()"
            )
        evaluated = dataobject[NEED_GRADES].matrix
        rows, columns = relevant.nonzero()
        values = np.asarray(evaluated[users[rows], columns]).ravel()
        grades = sp.csr_matrix((values, (rows, columns)), shape=(m, n))
        grades.sort_indices()
        train_grades = train.grades
    return Inputs(
        users=users.astype(str),
        items=np.arange(n).astype(str),
        train=train.matrix,
        train_rows=users,
        relevant=relevant,
        topk=np.ascontiguousarray(items[:, :k]),
        genres=None,
        train_grades=train_grades,
        grades=grades,
    )


def compute(dataobject, topk: list[int], wanted: list[str], settings: dict) -> dict:
    """``{k: {measure: value}}`` of the ``wanted`` measures at every ``k`` of ``topk``."""
    results = {}
    groups = genres = None
    for k in topk:
        inputs = collected_inputs(dataobject, k)
        train = dataobject.get(NEED_TRAIN)
        if groups is None and set(wanted) & set(FAIR_GROUP):
            groups = recbole_groups(inputs, train, settings)
        if settings.get("userfair_item_features"):  # read once per evaluation
            genres = item_genres(settings, train) if genres is None else genres
            inputs = replace(inputs, genres=genres)
        results[k] = measures(
            inputs, k, wanted, settings, cache_key=train.serial, groups=groups,
            user_tokens=train.user_tokens,
        )  # fmt: skip
    return results


def item_genres(settings: dict, train: TrainMatrix) -> sp.csr_matrix:
    """(items, g) genres of RecBole's internal item ids from ``userfair_item_features`` (a
    RecBole .item file of external ids; ``userfair.inputs.read_genre_matrix``)."""
    tokens = train.item_tokens
    order = np.argsort(tokens)  # the reader takes the ids sorted
    genres = read_genre_matrix(settings["userfair_item_features"], tokens[order])
    return genres[np.argsort(order)].tocsr()


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
    user_tokens=None,
) -> dict:
    """The fairness measures ``wanted`` (keys of ``userfair.measures.FAIR``, the group and
    the opt-in measures) of ``inputs`` at ``k``, as :func:`userfair.evaluate.evaluate`
    computes them (gamma = 1), computing only what they need. ``settings``:
    :data:`SETTINGS` (the defaults when None). ``groups``: the
    :class:`userfair.groups.Groups` the group measures read. ``user_tokens``: the external
    id of each internal user id (the user vectors file names them)."""
    options = {**SETTINGS, **(settings or {})}
    wanted = list(wanted)
    m = len(inputs.users)
    route = route_.choose_route(m, 1.0, options["userfair_route"])
    opt_in = [name for name in wanted if name in OPT_IN]
    scores = _default_measures(inputs, k, [n for n in wanted if n not in OPT_IN], options, route,
                               cache_key, groups)  # fmt: skip
    if opt_in:
        vectors = None
        if options["userfair_user_vectors"]:
            ids = inputs.users if user_tokens is None else user_tokens[inputs.train_rows]
            vectors = read_user_vectors(options["userfair_user_vectors"], ids)
        labels = {name.rsplit("-", 1)[1] for name in opt_in if name.startswith("PUF-")}
        names = [registry_.entry(label).name for label in labels]
        values, _ = variants.evaluate_variants(
            inputs, k, names, vectors, route, int(options["userfair_block_size"]), only=opt_in
        )
        scores.update(values)
    return {name: float(scores[name]) for name in wanted}


def _default_measures(inputs, k, wanted, options, route, cache_key, groups) -> dict:
    """The measures of :func:`measures` that are not opt-in."""
    epsilon = float(options["userfair_epsilon"])
    utility = options["userfair_envy_utility"]
    block_size = int(options["userfair_block_size"])
    device = options["userfair_device"]
    m = len(inputs.users)
    if not wanted:
        return {}
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

    for name, key in ALL_METRICS.items():
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
        for name, key in ALL_METRICS.items()
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


def register() -> list[str]:
    """Add the 12 metrics, the 2 group metrics (:data:`GROUP_METRICS`, computed when
    the config sets ``userfair_user_groups``) to RecBole's registry (idempotent) and
    apply the runtime fixes; return the metric names. Call it before
    ``recbole.quick_start`` is imported (that import needs the fixes) and in every process
    that builds a RecBole Config."""
    import recbole

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
