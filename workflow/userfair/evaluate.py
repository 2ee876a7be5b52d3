"""Every effectiveness and fairness measure of one top-k list, with each measure's time."""

from __future__ import annotations

import logging
import time

from userfair.engine import generic_routes, warmup
from userfair.engine import route as route_
from userfair.engine._backend import resolve
from userfair.files.inputs import Inputs
from userfair.formulas import effectiveness, fairness, spread
from userfair.formulas import groups as user_groups
from userfair.measures import (
    EFF,
    FAIR_GROUP,
    NAMES,
    OPT_IN,
    conventions,
    envy_measures,
    fused,
    generic,
    plugin_names,
    statistics,
    unserved,
)
from userfair.opt_in import variants
from userfair.similarity import pairwise
from userfair.streamed import estimate, streaming

log = logging.getLogger(__name__)


class _Clock:
    """Collects wall seconds of named steps."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def run(self, names, function, *args, **kwargs):
        """Call ``function``; credit its wall time to each of ``names``."""
        names = [names] if isinstance(names, str) else list(names)
        log.info("computing %s ...", ", ".join(names))
        start = time.perf_counter()
        value = function(*args, **kwargs)
        elapsed = time.perf_counter() - start
        for name in names:
            self.seconds[name] = elapsed
        log.info("%s: %.3f s", ", ".join(names), elapsed)
        return value


def evaluate(
    inputs: Inputs,
    k: int = 10,
    epsilon: float = 0.05,
    gamma: float = 1.0,
    similarities: dict[str, pairwise.Similarity] | None = None,
    block_size: int = 2048,
    device: str = "auto",
    envy_utility: str = "precision",
    route: str = "auto",
    extra_similarities=(),
    user_vectors=None,
    groups: user_groups.Groups | None = None,
    sample_users: float | None = None,
    seed: int = 0,
) -> dict:
    """The 18 measures (``userfair.measures.NAMES``; floats, NaN allowed), ``seconds`` and
    ``conventions``.

    ``seconds`` has one entry per measure plus ``similarity-cos`` and ``similarity-jacc``,
    each the computation only: the first call in a process first runs every step on tiny
    inputs, untimed, so that loading the compiled kernels is not counted
    (``userfair.engine.warmup``).
    The six effectiveness measures come from one vectorised pass, and ME, MME and PEU from
    one pass over the pairs: each of them is credited that pass's time. PUF and UF times
    exclude the cosine/Jaccard computation (reported on its own); UF includes building
    sim_UF (the mix, and the genre similarity unless it is given) when gamma < 1.

    PUF reads the min-max normalised cosine and Jaccard, UF the raw Jaccard (mixed with the
    genre similarity 1 - JS when gamma < 1). ``envy_utility``: ``precision`` (P@k, default)
    or ``ideal`` (``fairness.envy``).

    ``similarities``: optional precomputed :class:`userfair.similarity.pairwise.Similarity` objects
    ``{"cos", "jacc"}`` (and ``"genre"``, used by UF when gamma < 1) of ``inputs.users`` in
    canonical order, e.g. the similarity files; their stored seconds are reported. Missing
    ones are computed here, one at a time.
    gamma < 1 needs ``inputs.genres`` or a given ``"genre"`` similarity.

    ``route``: ``dense`` (the (m, m) similarity matrices, above), ``stream``
    (``userfair.streamed.streaming.stream_evaluate``: the same numbers in row passes that never hold
    m x m, on ``device`` too: numba on the CPU, or torch blocks; ``similarities`` are not
    used) or ``auto`` (default), decided by ``userfair.engine.route.choose_route``: dense when
    ``similarities`` are given, streamed with ``sample_users``, else stream when the dense
    matrices would exceed half the available memory or m > 20,000.

    Opt-in (``userfair.opt_in.variants``, after the 18 measures, same route): with grades in
    ``inputs`` (``load_inputs(grade=...)``) gNDCG, SD-gNDCG, Gini-gNDCG and PUF over
    {P, NDCG, gNDCG} x {Cos, Jacc, RCos}; ``extra_similarities`` (registry names of
    ``userfair.similarity.registry``: ``rcos``, ``vec``, ``genre``) add PUF-{P,NDCG[,gNDCG]}-SIM;
    ``user_vectors``: the (m, d) vectors ``vec`` reads.

    The generic engine (``userfair.engine.generic_routes``): the built-in pair measures
    declared with a term (``userfair.formulas.pair_terms``) and every plugin measure loaded
    in this process (``userfair.plugins``, docs/plugins.md) follow, on the same route.

    ``groups``: a :class:`userfair.formulas.groups.Groups` of ``inputs.users`` adds the group
    measures ``UserMAD-P`` and ``UserMAD-NDCG`` (``userfair.measures.FAIR_GROUP``) and the
    record ``groups`` (``userfair.formulas.groups.record``: each group's size and mean P, NDCG), on
    either route (a grouped mean of the per-user P and NDCG).

    ``sample_users`` (a share in (0, 1]): the pair measures ``userfair.streamed.estimate.ESTIMATED``
    estimated from a uniform sample of that share of the users (``seed``) against all users,
    with a standard error and an interval in the record ``estimate``
    (``userfair.streamed.estimate.stream_estimate``, docs/method.md#estimate); the streamed route
    only (``route`` auto or stream, no ``similarities``).
    """
    route = route_.choose_route(
        len(inputs.users), gamma, route, given=bool(similarities), sampled=sample_users is not None
    )
    device = "cpu" if resolve(device) is None else device  # import torch once, untimed
    extra = {"names": tuple(extra_similarities), "vectors": user_vectors}
    if envy_utility not in fairness.ENVY_UTILITIES:
        raise ValueError(
            f"unknown envy utility {envy_utility!r}; expected one of {fairness.ENVY_UTILITIES}"
        )
    if route == "stream":
        log.info("streamed route for %d users", len(inputs.users))
        stats = streaming.stats_of(inputs, gamma, block_size, device)
        if sample_users is None:
            result = streaming.stream_evaluate(
                inputs, k=k, epsilon=epsilon, gamma=gamma, envy_utility=envy_utility,
                block_size=block_size, device=device, stats=stats,
            )  # fmt: skip
        else:
            result = estimate.stream_estimate(
                inputs, sample_users, seed, k=k, epsilon=epsilon, gamma=gamma,
                envy_utility=envy_utility, block_size=block_size, stats=stats,
            )  # fmt: skip
        result = _with_variants(result, inputs, k, "stream", block_size, **extra, device=device)
        result = with_generic(result, inputs, k, "stream", block_size, user_vectors, stats=stats)
        return add_groups(result, inputs, k, groups, route="stream")
    if gamma < 1.0 and inputs.genres is None and (similarities or {}).get("genre") is None:
        raise ValueError(
            f"gamma={gamma} < 1 needs item genres: load the inputs with item_features "
            "(--item-features on the command line)"
        )
    warmup.once(  # kernels loaded before any clock starts
        ("evaluate", device, gamma < 1.0, envy_utility),
        lambda: evaluate(
            warmup.tiny_inputs(), k=3, epsilon=epsilon, gamma=gamma, device=device,
            envy_utility=envy_utility, route="dense",
        ),
    )  # fmt: skip
    similarities = dict(similarities or {})
    clock = _Clock()
    scores: dict[str, float] = {}
    m = len(inputs.users)
    log.info("evaluating %d users, %d items, k=%d, device=%s", m, len(inputs.items), k, device)

    per_user = clock.run(EFF, effectiveness.per_user, inputs.topk, inputs.relevant, k)
    for name in EFF:
        scores[name] = float(per_user[name].mean()) if m else float("nan")
    for measure in statistics(("P", "NDCG"), "dense"):  # SD, Gini: their declarations
        scores[measure.name] = clock.run(
            measure.name, spread.of(measure).value, per_user[measure.effectiveness]
        )
    scores.update(
        clock.run(
            tuple(m.name for m in envy_measures("dense")),
            fairness.envy,
            inputs.topk,
            inputs.relevant,
            k=k,
            epsilon=epsilon,
            block_size=block_size,
            device=device,
            utility=envy_utility,
        )
    )

    rows = inputs.train_of_evaluated()
    blocked = {"block_size": block_size, "device": device}
    for kind, label in (("cos", "Cos"), ("jacc", "Jacc")):
        sim = similarities.pop(kind, None)
        owned = sim is None  # computed here: UF may turn it into the raw values in place
        if owned:
            log.info("computing similarity-%s ...", kind)
            sim = pairwise.compute(kind, rows, inputs.users, block_size=block_size)
        elif sim.sim.shape != (m, m):
            raise ValueError(f"similarities[{kind!r}] must be ({m}, {m}), got {sim.sim.shape}")
        clock.seconds[f"similarity-{kind}"] = float(sim.seconds)
        for name in ("P", "NDCG"):
            key = f"PUF-{name}-{label}"
            scores[key] = clock.run(key, fairness.puf, per_user[name], sim.sim, **blocked)
        if kind == "jacc":
            scores["UF"] = clock.run(
                "UF", _uf, inputs, rows, sim, similarities.get("genre"), gamma, k, owned, **blocked
            )
        del sim

    result = {
        **{key: scores[key] for key in fused(NAMES)},
        "seconds": clock.seconds,
        "conventions": conventions(envy_utility, epsilon, gamma),
    }
    result = _with_variants(result, inputs, k, "dense", block_size, **extra)
    result = with_generic(result, inputs, k, "dense", block_size, user_vectors, per_user)
    return add_groups(result, inputs, k, groups, per_user, route="dense")


def with_generic(
    result, inputs, k, route, block_size, vectors=None, per_user=None, stats=None
) -> dict:  # fmt: skip
    """``result`` with the measures of the generic engine (``userfair.measures.generic``:
    the built-in pair measures declared with a term, then the plugins loaded in this
    process) after the others, each with its seconds (none: ``result`` as it is). On the
    streamed route, ``stats``: pass one's (the similarity ranges); with a sampled
    ``estimate`` in ``result``, the pair plugins with a compiled term are estimated from
    the same sample, their SE and interval added to its record."""
    if not generic():
        return result
    sample = result.get("estimate") if route == "stream" else None
    values, seconds, estimated = generic_routes.evaluate_generic(
        inputs, k, per_user=per_user, route=route, block_size=block_size, vectors=vectors,
        stats=stats, sample=sample,
    )  # fmt: skip
    out = {**result, **values, "seconds": {**result["seconds"], **seconds}}
    if estimated:
        out["estimate"] = {
            **sample, "measures": {**sample["measures"], **estimated}
        }  # fmt: skip
    return out


def _with_variants(result, inputs, k, route, block_size, names, vectors, device="cpu") -> dict:
    """``result`` with the opt-in measures after the 18 (none unless asked for); on the
    streamed route the cosine PUF by the items runs on ``device`` as the 18's does."""
    if inputs.grades is None and not names:
        return result
    values, seconds = variants.evaluate_variants(
        inputs, k, names, vectors, route, block_size, device=resolve(device)
    )
    return {
        **{key: result[key] for key in fused(NAMES)},
        **values,
        "seconds": {**result["seconds"], **seconds},
        "conventions": result["conventions"],
        **({"estimate": result["estimate"]} if "estimate" in result else {}),
    }


def add_groups(
    result: dict, inputs: Inputs, k: int, groups, per_user=None, route: str = "dense"
) -> dict:
    """``result`` with the group measures that ``route`` serves and the ``groups`` record of
    ``groups`` (none when None); ``per_user``: the effectiveness of ``inputs`` at k,
    computed when not given."""
    if groups is None:
        return result
    if len(groups.labels) != len(inputs.users):
        raise ValueError(f"groups has {len(groups.labels)} users, inputs {len(inputs.users)}")
    start = time.perf_counter()
    if per_user is None:
        per_user = effectiveness.per_user(inputs.topk, inputs.relevant, k)
    unserved(route, FAIR_GROUP, "not computed")
    values = user_groups.measures(per_user, groups, route)
    result.update(values)
    result["groups"] = user_groups.record(per_user, groups)
    elapsed = time.perf_counter() - start
    result["seconds"].update({name: elapsed for name in values})
    return result


def _uf(inputs: Inputs, rows, jaccard, genre, gamma, k, inplace, block_size, device) -> float:
    """UF with sim_UF = gamma * raw Jaccard + (1 - gamma) * genre similarity (computed here
    unless ``genre`` is given); ``inplace``: restore the raw Jaccard in ``jaccard.sim``'s
    memory (the caller is done with the normalised values)."""
    genre_sim = None
    if gamma < 1.0:
        if genre is None:
            genre = pairwise.compute("genre", rows, inputs.users, inputs.genres, block_size)
        genre_sim = genre.raw()
    sim_uf = pairwise.uf_similarity(jaccard.raw(inplace), genre_sim, gamma)
    return fairness.uf(inputs.topk, inputs.train, sim_uf, k=k, block_size=block_size, device=device)


def as_json(result: dict) -> dict:
    """``result`` with NaN kept as float NaN (written as NaN by userfair.files.io.write_json)."""
    out = {
        **{
            key: float(result[key])
            for key in NAMES + OPT_IN + FAIR_GROUP + plugin_names()
            if key in result
        },
        "seconds": {name: float(value) for name, value in result["seconds"].items()},
        "conventions": dict(result["conventions"]),
    }
    for record in ("groups", "estimate"):
        if record in result:
            out[record] = result[record]
    return out
