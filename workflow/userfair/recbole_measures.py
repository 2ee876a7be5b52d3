"""What the RecBole metrics compute (userfair.recbole registers them; docs/recbole.md): the
inputs of a RecBole evaluation (its users, their positive items, RecBole's top-k, the
training matrix, the grades), and the fairness measures of those inputs as
:func:`userfair.evaluate.evaluate` computes them (gamma = 1), only those asked for; the
user similarities of the evaluated users are kept between the epochs of one training."""

from __future__ import annotations

import logging
from dataclasses import replace

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy.sparse as sp  # noqa: E402

from userfair.engine import generic_routes  # noqa: E402
from userfair.engine import route as route_  # noqa: E402
from userfair.engine._backend import binary_csr, blocks  # noqa: E402
from userfair.files.inputs import Inputs, read_genre_matrix  # noqa: E402
from userfair.formulas import effectiveness, fairness, spread  # noqa: E402
from userfair.formulas import groups as user_groups  # noqa: E402
from userfair.measures import FAIR_GROUP, OPT_IN, envy_measures, generic, statistics  # noqa: E402
from userfair.opt_in import variants  # noqa: E402
from userfair.recbole_collector import (  # noqa: E402
    NEED_GRADES,
    NEED_POSITIVE,
    NEED_TRAIN,
    NEED_USERS,
    TrainMatrix,
)
from userfair.similarity import pairwise  # noqa: E402
from userfair.similarity import registry as registry_  # noqa: E402
from userfair.similarity.registry import read_user_vectors  # noqa: E402
from userfair.streamed import streaming  # noqa: E402

log = logging.getLogger(__name__)

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
#: The user similarities of the last evaluated population are kept (the valid users are
#: the same at every epoch) when both matrices take at most this many bytes.
CACHE_BYTES = 1 << 30

_cache: dict = {}


def clear_cache() -> None:
    """Forget the kept user similarities (a benchmark times every evaluation afresh)."""
    _cache.clear()


def collected_inputs(dataobject, k: int) -> Inputs:
    """The :class:`userfair.files.inputs.Inputs` of a RecBole evaluation at ``k``: its users (in
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
    RecBole .item file of external ids; ``userfair.files.inputs.read_genre_matrix``)."""
    tokens = train.item_tokens
    order = np.argsort(tokens)  # the reader takes the ids sorted
    genres = read_genre_matrix(settings["userfair_item_features"], tokens[order])
    return genres[np.argsort(order)].tocsr()


def recbole_groups(inputs: Inputs, train: TrainMatrix, settings: dict):
    """The :class:`userfair.formulas.groups.Groups` of ``userfair_user_groups`` over the evaluated
    users, named by their external ids (a user-groups file and the ``.user`` file name
    RecBole's tokens; activity ties go by those ids, as in ``userfair evaluate``)."""
    named = replace(inputs, users=train.user_tokens[inputs.train_rows])
    spec = settings["userfair_user_groups"]
    features = None
    if user_groups.parse_spec(spec)[0] == "feature":
        features = user_groups.read_user_features(settings["user_file"])
    return user_groups.groups_of(named, spec, features, settings.get("user_file", ""))


def cached_similarities(inputs: Inputs, kinds: list[str], block_size: int, cache_key) -> dict:
    """The min-max normalised similarities ``kinds`` (``cos``, ``jacc``) of the evaluated
    users, as :func:`userfair.similarity.pairwise.compute` gives them, from one sparse product of
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
    }  # as userfair.similarity.pairwise.cosine and jaccard
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
        lo, hi = pairwise.pair_range(raw[kind], block_size)
        sim = pairwise.min_max(raw[kind], block_size, inplace=True)
        found[kind] = pairwise.Similarity(inputs.users, sim, 0.0, lo, hi)
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
    :class:`userfair.formulas.groups.Groups` the group measures read. ``user_tokens``: the external
    id of each internal user id (the user vectors file names them)."""
    options = {**SETTINGS, **(settings or {})}
    wanted = list(wanted)
    m = len(inputs.users)
    route = route_.choose_route(m, 1.0, options["userfair_route"])
    opt_in = [name for name in wanted if name in OPT_IN]
    plugged = [name for name in wanted if name in generic()]
    builtin = [n for n in wanted if n not in OPT_IN and n not in plugged]
    scores = default_measures(inputs, k, builtin, options, route, cache_key, groups)
    if plugged:  # the plugins (docs/plugins.md) and pair terms, on the same route
        values, _, _ = generic_routes.evaluate_generic(
            inputs, k, plugged, route=route, block_size=int(options["userfair_block_size"])
        )
        scores.update(values)
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


def default_measures(inputs, k, wanted, options, route, cache_key, groups) -> dict:
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
            result.update(user_groups.measures(per_user, groups, "recbole"))
        return {name: float(result[name]) for name in wanted}
    scores: dict[str, float] = {}
    per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    if set(wanted) & set(FAIR_GROUP):
        scores.update(user_groups.measures(per_user, groups, "recbole"))
    for measure in statistics(("P", "NDCG"), "recbole"):  # SD, Gini: their declarations
        if measure.name in wanted:
            scores[measure.name] = spread.of(measure).value(per_user[measure.effectiveness])
    if {m.name for m in envy_measures("recbole")} & set(wanted):  # their declarations
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
    sims = cached_similarities(inputs, kinds, block_size, cache_key) if kinds else {}
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
