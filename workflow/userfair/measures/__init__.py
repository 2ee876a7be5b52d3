"""The one registry of measures: every place that lists, orders, groups, orients or routes
a measure reads it here (the measures files, Tables 2-3, the agreement, the inference, the
figures, the experiments, ``userfair evaluate``, the RecBole metrics). Order: the paper's
Table 2, then the opt-in measures, then the plugins in the order they were loaded.

Each measure is declared once, as a :class:`userfair.measures.base.Measure`, in the module
of its family (:mod:`.effectiveness`, :mod:`.spread`, :mod:`.envy`, :mod:`.uf`,
:mod:`.puf`, :mod:`.groups`); plugin measures (:mod:`userfair.plugins`) join at run time
through :func:`register`. The name tuples below (``EFF``, ``FAIR``, ``NAMES``, ...) are
derived from those declarations and never written twice.
"""

from __future__ import annotations

import contextlib
import logging

from userfair.measures import effectiveness, envy, groups, puf, spread, uf
from userfair.measures.base import BUILTIN, KINDS, ROUTES, Measure, declare
from userfair.measures.groups import GROUP_SCORES, group_measure
from userfair.measures.puf import PUF_SCORES, PUF_SIMILARITIES, puf_name

__all__ = [
    "BUILTIN", "KINDS", "ROUTES", "Measure", "declare", "GROUP_SCORES", "group_measure",
    "PUF_SCORES", "PUF_SIMILARITIES", "puf_name",
]  # fmt: skip

log = logging.getLogger(__name__)

#: The built-in declarations, family by family, in the order of Table 2 and then the opt-in
#: groups.
BUILTINS: tuple[Measure, ...] = (
    effectiveness.MEASURES + spread.MEASURES + envy.MEASURES + uf.MEASURES + puf.MEASURES
    + groups.MEASURES
)  # fmt: skip
_BY_NAME = {measure.name: measure for measure in BUILTINS}
if len(_BY_NAME) != len(BUILTINS):  # pragma: no cover - a declaration error
    raise RuntimeError("two built-in measures share a name")


def _names(group: str, default: bool | None = None) -> tuple[str, ...]:
    return tuple(
        m.name for m in BUILTINS if m.group == group and (default is None or m.default == default)
    )


#: Effectiveness at k (docs/method.md#effectiveness); higher is better.
EFF = _names("Eff")
#: The fairness measures PUF is compared with (docs/method.md#fairness); lower is fairer.
FAIR_EXISTING = _names("Fair (existing)")
#: PUF with P or NDCG as effectiveness and cosine or Jaccard as similarity; lower is fairer.
FAIR_PUF = _names("Fair (PUF)")
#: Every fairness measure.
FAIR = FAIR_EXISTING + FAIR_PUF
#: The 18 measure keys of a measures file (results/D/measures/M.json), in table order.
NAMES = EFF + FAIR
#: Opt-in (docs/measures.md#opt-in-measures): never in a measures file unless asked for.
#: Graded effectiveness: NDCG with linear gains equal to the test grade.
EFF_GRADED = _names("Eff (graded)")
#: The spread of gNDCG over the users.
FAIR_GRADED = _names("Fair (graded)")
#: The group fairness measures, opt-in (``userfair evaluate --user-groups``): not in
#: ``NAMES``, so the measures files stay as they are; lower is fairer.
FAIR_GROUP = _names("Fair (groups)")
#: The groups of Table 2, in order.
GROUPS = {"Eff": EFF, "Fair (existing)": FAIR_EXISTING, "Fair (PUF)": FAIR_PUF}
#: The once-per-dataset similarity times a measures file records beside the measures.
SIMILARITY_TIMES = ("similarity-cos", "similarity-jacc")
#: The keys of a measures file's ``conventions`` (built by :func:`conventions`).
CONVENTION_KEYS = ("envy_utility", "epsilon", "gamma", "uf_similarity", "puf_similarity")
#: Every opt-in name, in table order (graded effectiveness, its spread, then PUF by
#: similarity, score within).
OPT_IN = EFF_GRADED + FAIR_GRADED + _names("Fair (PUF variants)")
#: Every built-in measure name: the 18 defaults, the opt-in graded measures and PUF
#: variants, the opt-in group measures.
KNOWN = NAMES + OPT_IN + FAIR_GROUP
#: The opt-in groups, in table order (each after the default group it extends).
OPT_IN_GROUPS = {
    "Eff (graded)": EFF_GRADED,
    "Fair (graded)": FAIR_GRADED,
    "Fair (PUF variants)": OPT_IN[len(EFF_GRADED + FAIR_GRADED) :],
}
#: The Table 2 groups of plugin measures (after every built-in group).
PLUGIN_GROUPS = ("Eff (plugins)", "Fair (plugins)")

#: Plugin declarations registered in this process (:func:`register`), in load order.
_plugins: dict[str, Measure] = {}
#: (measure, route) pairs already reported by :func:`unserved`.
_said: set[tuple[str, str]] = set()


def conventions(envy_utility: str, epsilon: float, gamma: float) -> dict:
    """The settled choices a result was computed with (docs/method.md#conventions): the
    ``conventions`` record of every measures file, ``userfair evaluate --json`` and the
    bootstrap's frames."""
    return {
        "envy_utility": envy_utility,
        "epsilon": float(epsilon),
        "gamma": float(gamma),
        "uf_similarity": "raw",
        "puf_similarity": "min-max",
    }


def optional_names(graded: bool, labels=()) -> tuple[str, ...]:
    """The opt-in names a result holds beyond :data:`NAMES`: with ``graded`` gNDCG, its SD
    and Gini and PUF with gNDCG; PUF with P, NDCG (and gNDCG) over the similarity
    ``labels`` (e.g. ``("RCos", "Vec")``; Cos and Jacc come with ``graded``)."""
    scores = PUF_SCORES if graded else PUF_SCORES[:2]
    chosen = set(labels) | ({"Cos", "Jacc"} if graded else set())
    unknown = set(labels) - set(PUF_SIMILARITIES)
    if unknown:
        raise ValueError(f"unknown similarity {sorted(unknown)}; expected {PUF_SIMILARITIES}")
    wanted = set(EFF_GRADED + FAIR_GRADED) if graded else set()
    wanted |= {puf_name(s, label) for label in chosen for s in scores}
    return tuple(name for name in OPT_IN if name in wanted)


def register(measure: Measure) -> Measure:
    """Add a plugin's declaration to the registry of this process (idempotent for the same
    declaration). ValueError when its name is a built-in's or another plugin's."""
    if measure.builtin:
        raise ValueError(f"{measure.name}: a plugin declaration needs its source (module:Class)")
    if measure.name in _BY_NAME:
        raise ValueError(
            f"plugin {measure.source}: the name {measure.name!r} is a built-in measure's; "
            "give the plugin another name"
        )
    held = _plugins.get(measure.name)
    if held is not None and held != measure:
        raise ValueError(
            f"plugin {measure.source}: the name {measure.name!r} is already the plugin "
            f"{held.source}'s; give one of them another name"
        )
    _plugins[measure.name] = measure
    return measure


def unregister(name: str) -> None:
    """Remove a plugin from the registry of this process (tests, a notebook)."""
    _plugins.pop(name, None)


@contextlib.contextmanager
def builtins_only():
    """The registry without its plugins while the block runs, then with them again: the
    warm-up on tiny inputs (``userfair.engine.warmup``), which lack what a plugin may read."""
    global _plugins
    held, _plugins = _plugins, {}
    try:
        yield
    finally:
        _plugins = held


def plugin_names() -> tuple[str, ...]:
    """The names of the plugins registered in this process, in load order."""
    return tuple(_plugins)


def declared() -> tuple[Measure, ...]:
    """Every declaration: the built-ins, then the plugins registered in this process."""
    return BUILTINS + tuple(_plugins.values())


def get(name: str) -> Measure:
    """The declaration of ``name``; ValueError naming the known measures otherwise."""
    measure = _BY_NAME.get(name) or _plugins.get(name)
    if measure is None:
        raise ValueError(
            f"unknown measure {name!r}; expected one of {list(KNOWN) + list(_plugins)}"
            " (a plugin measure must be loaded first: docs/plugins.md)"
        )
    return measure


def is_known(name: str) -> bool:
    """Whether ``name`` is a built-in or a registered plugin measure."""
    return name in _BY_NAME or name in _plugins


def statistics(scores, route: str | None = None) -> tuple[Measure, ...]:
    """The built-in statistics of the per-user ``scores`` (e.g. ``("P", "NDCG")``) that
    ``route`` serves (any route when None), in table order: each carries its formulas
    (``measure.statistic``), which the routes call instead of naming a statistic."""
    return tuple(
        m for m in BUILTINS
        if m.kind == "statistic" and m.effectiveness in scores
        and (route is None or route in m.routes)
    )  # fmt: skip


def envy_measures(route: str | None = None) -> tuple[Measure, ...]:
    """The built-in envy measures that ``route`` serves (any route when None), in table
    order: each carries its reduction of the envy rows (``measure.reduction``), which the
    routes call instead of naming an envy measure."""
    return tuple(m for m in BUILTINS if m.kind == "envy" and (route is None or route in m.routes))


def group_measures(route: str | None = None) -> tuple[Measure, ...]:
    """The built-in group measures that ``route`` serves (any route when None), in table
    order: each names its per-user score and its statistic of the groups' means
    (``measure.statistic``), which the routes call instead of naming a group measure."""
    return tuple(m for m in BUILTINS if m.kind == "group" and (route is None or route in m.routes))


def generic(names=None) -> tuple[str, ...]:
    """Among ``names`` (default: every declared measure, in registry order) those the generic
    engine serves (``userfair.engine.generic_routes``): the built-in pair measures declared
    with a ``term``, the UF-kind declarations other than the fused UF
    (``userfair.engine.uf_engine``) and every plugin. The other routes leave them to it."""
    names = [m.name for m in declared()] if names is None else names
    return tuple(name for name in names if _generic(get(name)))


def _generic(measure: Measure) -> bool:
    return (
        measure.term is not None
        or not measure.builtin
        or (measure.kind == "uf" and not measure.fused)
    )


def fused(names) -> tuple[str, ...]:
    """Among ``names`` those the family kernels serve (every built-in but the pair measures
    declared with a term): what a route computes itself before the generic engine adds
    :func:`generic`'s."""
    chosen = set(generic(names))
    return tuple(name for name in names if name not in chosen)


def served(route: str, names=None) -> tuple[str, ...]:
    """The measures among ``names`` (default: every declared one) that ``route`` serves."""
    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r}; expected one of {ROUTES}")
    names = [m.name for m in declared()] if names is None else names
    return tuple(name for name in names if route in get(name).routes)


def unserved(route: str, names, fallback: str = "not computed") -> tuple[str, ...]:
    """The measures among ``names`` that ``route`` does not serve, each said once per
    process at WARNING, by measure and route (``Atkinson-P: no streamed route; computed
    dense``): ``fallback`` is what happens instead."""
    missing = tuple(name for name in names if route not in get(name).routes)
    for name in missing:
        if (name, route) not in _said:
            _said.add((name, route))
            log.warning("%s: no %s route; %s", name, ROUTE_WORDS.get(route, route), fallback)
    return missing


#: How a route is named in :func:`unserved`'s line.
ROUTE_WORDS = {
    "dense": "dense",
    "stream": "streamed",
    "bootstrap": "bootstrap",
    "decompose": "per-user decomposition",
    "recbole": "RecBole metric",
    "experiments": "experiment (Figs. 2-4)",
    "sample": "sampled",
}


def higher_is_better(name: str) -> bool:
    """Effectiveness (and a plugin declared ``better = "higher"``): higher is better; every
    fairness measure: lower is fairer."""
    return get(name).higher_is_better
