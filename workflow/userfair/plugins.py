"""Bring your own measure (docs/plugins.md): the plugin interface, its loading and the
checks every plugin passes before it computes anything.

A plugin is a class the user installs or names; nothing is ever loaded from a data or
results file. Three kinds::

    from userfair.plugins import UserMeasure, PairMeasure, UserSimilarity

    class Atkinson(UserMeasure):               # a statistic of the per-user scores
        name = "Atkinson-P"; effectiveness = "P"; better = "lower"; bounds = (0, 1)
        def compute(self, scores, weights):   # float arrays over the evaluated users;
            ...                               # weights: bootstrap multiplicities (ones otherwise)

    class SquaredPUF(PairMeasure):             # the mean over unordered pairs of a term
        name = "PUF2-P-Cos"; effectiveness = "P"; similarity = "Cos"; better = "lower"
        def terms(self, s_u, s_v, sim):       # arrays over pairs; sim min-max normalised
            return sim ** 2 * abs(s_u - s_v)

    class Overlap(UserSimilarity):             # a user similarity PairMeasures may read
        name = "overlap"; label = "Overlap"
        def block(self, data, start, stop):   # raw similarities of users start:stop with all
            ...                               # (stop - start, m), dense or scipy.sparse

They are found three ways, all through :func:`load`: installed packages' entry points in the
group ``userfair.measures`` (each names a class or a list of classes), the workflow's
``measures.plugins`` list and ``userfair evaluate --measure`` (``module:Class``, repeatable).
Each class is checked (:func:`check`) and its declaration joins the registry
(:func:`userfair.measures.register`); a failing one stops the run with one line naming the
plugin and what to fix (:class:`PluginError`).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import math
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata

import numpy as np

from userfair import measures
from userfair.measures.base import Measure
from userfair.similarity import registry

log = logging.getLogger(__name__)

#: The entry-point group installed packages declare their plugins in.
ENTRY_POINT_GROUP = "userfair.measures"
#: The per-user scores a plugin measure may read (``userfair.formulas.effectiveness`` and gNDCG).
SCORES = ("HR", "MRR", "P", "MAP", "R", "NDCG", "gNDCG")
#: Random inputs of the load-time checks: how many users, pairs and draws.
CHECK_USERS, CHECK_SEED = 40, 20261128


class PluginError(ValueError):
    """A plugin that cannot be used, in one line naming it and what to fix."""


class UserMeasure:
    """A statistic of the per-user scores (kind ``statistic``). Subclasses set ``name``,
    ``effectiveness`` (one of :data:`SCORES`), ``better`` and optionally ``bounds`` (the
    theoretical range, checked on random inputs) and ``text``, and define :meth:`compute`.
    """

    name: str = ""
    effectiveness: str = "P"
    better: str = "lower"
    bounds: tuple[float, float] = (-math.inf, math.inf)
    text: str = ""
    kind = "statistic"

    def compute(self, scores: np.ndarray, weights: np.ndarray) -> float:
        """The measure of the users with per-user ``scores`` where user u counts
        ``weights[u]`` times (bootstrap multiplicities; all ones outside the bootstrap)."""
        raise NotImplementedError


class PairMeasure:
    """The mean over unordered pairs of distinct users of a pair term (kind ``pair``).
    Subclasses set ``name``, ``effectiveness``, ``similarity`` (a label of
    ``userfair.similarity.registry``: Cos, Jacc, RCos, Vec, Genre, or a plugin similarity's),
    ``better``, optionally ``bounds`` and ``text``, and define :meth:`terms`."""

    name: str = ""
    effectiveness: str = "P"
    similarity: str = "Cos"
    better: str = "lower"
    bounds: tuple[float, float] = (-math.inf, math.inf)
    text: str = ""
    kind = "pair"
    #: Optional: the term of one pair as a scalar function compiled with numba
    #: (``term = numba.njit(lambda s_u, s_v, sim: ...)``; docs/plugins.md#a-compiled-term).
    #: The streamed route then runs it inside its compiled row loops (similarity Cos or
    #: Jacc), and :meth:`terms` defaults to it.
    term = None

    def terms(self, s_u: np.ndarray, s_v: np.ndarray, sim: np.ndarray) -> np.ndarray:
        """The term of each pair: the two users' scores and their similarity, min-max
        normalised over the unordered pairs as PUF's (arrays of one length). Default: the
        compiled :attr:`term` applied pair by pair."""
        compiled = compiled_term(self)
        if compiled is None:
            raise NotImplementedError
        from userfair.streamed._plugin_kernels import apply_term  # numba: only to compute

        as_float = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
        return apply_term(compiled, as_float(s_u), as_float(s_v), as_float(sim))


def compiled_term(plugin):
    """The plugin PairMeasure's compiled scalar ``term`` (a numba dispatcher), else None.
    numba's own test (``numba.extending.is_jitted``) without importing numba, which every
    process that loads this module would pay for (0.3 s): a dispatcher exists only once
    numba's dispatcher module is loaded."""
    raw = inspect.getattr_static(type(plugin), "term", None)
    if isinstance(raw, staticmethod):
        raw = raw.__func__
    dispatcher = sys.modules.get("numba.core.dispatcher")
    jitted = dispatcher is not None and isinstance(raw, dispatcher.Dispatcher)
    return raw if jitted else None


class UserSimilarity:
    """A user similarity (``name``: its key, ``label``: the ``similarity`` a PairMeasure
    names; optional ``needs``: ``grades``, ``vectors`` or ``genres``). :meth:`block` gives
    the raw similarities of the users ``start:stop`` with every evaluated user; the engines
    min-max normalise them over the unordered pairs."""

    name: str = ""
    label: str = ""
    needs: str | None = None
    kind = "similarity"

    def block(self, data, start: int, stop: int):
        """(stop - start, m) raw similarities, dense or scipy.sparse (unstored: 0), of a
        :class:`userfair.similarity.registry.SimilarityData`."""
        raise NotImplementedError


#: Loaded plugin measures of this process, by name: (declaration, instance).
_loaded: dict[str, tuple[Measure, UserMeasure | PairMeasure]] = {}
#: Whether the term of a loaded pair measure is 0 wherever the similarity is 0.
_zero_at_zero: dict[str, bool] = {}


def loaded() -> tuple[UserMeasure | PairMeasure, ...]:
    """The plugin measures loaded in this process, in load order."""
    return tuple(instance for _, instance in _loaded.values())


def instance(name: str) -> UserMeasure | PairMeasure:
    """The loaded plugin measure ``name``, or the PairMeasure of a built-in pair measure
    declared with a term (:func:`builtin_pair`): what the generic engine computes."""
    if name in _loaded:
        return _loaded[name][1]
    if measures.is_known(name) and measures.get(name).term is not None:
        return builtin_pair(measures.get(name))
    raise KeyError(f"no plugin measure {name!r} is loaded")


#: The PairMeasures of the built-in pair measures declared with a term, by name.
_builtin: dict[str, PairMeasure] = {}


def builtin_pair(declaration: Measure) -> PairMeasure:
    """A built-in pair measure declared with a term (``userfair.formulas.pair_terms``) as the
    PairMeasure the generic engine reads: its declaration's fields and its compiled term."""
    if declaration.name not in _builtin:
        from userfair.formulas import pair_terms  # numba: only to compute

        fields = {
            "name": declaration.name, "effectiveness": declaration.effectiveness,
            "similarity": declaration.similarity, "better": declaration.better,
            "bounds": declaration.bounds, "text": declaration.text,
            "term": staticmethod(pair_terms.TERMS[declaration.term].term),
        }  # fmt: skip
        _builtin[declaration.name] = type(declaration.name, (PairMeasure,), fields)()
    return _builtin[declaration.name]


def zero_at_zero(name: str) -> bool:
    """Whether the pair measure ``name``'s term vanishes where the similarity is 0 (a
    plugin's checked on random inputs at load, a built-in's declared with its term): then
    the row passes visit only the pairs whose raw similarity is stored (e.g. that share an
    item)."""
    if name not in _zero_at_zero and measures.is_known(name):
        from userfair.formulas import pair_terms  # numba: only to compute

        term = measures.get(name).term
        return term is not None and pair_terms.TERMS[term].zero_at_zero
    return _zero_at_zero.get(name, False)


def clear() -> None:
    """Forget every plugin of this process (tests, a notebook)."""
    for name in list(_loaded):
        measures.unregister(name)
    _loaded.clear()
    _zero_at_zero.clear()


def resolve(spec: str):
    """The object ``module:attribute`` names (``module.attribute`` also accepted)."""
    if not isinstance(spec, str) or not spec.strip():
        raise PluginError(f"plugin {spec!r}: expected 'module:Class', e.g. mypkg.measures:Atkinson")
    module_name, sep, attribute = spec.partition(":")
    if not sep:
        module_name, _, attribute = spec.rpartition(".")
    if not module_name or not attribute:
        raise PluginError(f"plugin {spec!r}: expected 'module:Class', e.g. mypkg.measures:Atkinson")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # the plugin's own import failing is the user's to fix
        raise PluginError(
            f"plugin {spec}: cannot import {module_name} ({type(error).__name__}: {error}); "
            "install its package in this environment or fix the name"
        ) from None
    target = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise PluginError(f"plugin {spec}: {module_name} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def _classes(obj, spec: str) -> list[type]:
    """The plugin classes ``obj`` is (a class) or holds (a list or tuple of classes)."""
    found = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    for item in found:
        if not (isinstance(item, type) and issubclass(item, (UserMeasure, PairMeasure,
                                                              UserSimilarity))):  # fmt: skip
            raise PluginError(
                f"plugin {spec}: {item!r} is not a subclass of userfair.plugins.UserMeasure, "
                "PairMeasure or UserSimilarity"
            )
    return found


def entry_point_specs() -> list[tuple[str, object]]:
    """(``module:attr``, loaded object) of every installed entry point in
    :data:`ENTRY_POINT_GROUP`."""
    out = []
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = point.load()
        except Exception as error:
            raise PluginError(
                f"plugin {point.value} (entry point {point.name!r} of "
                f"{getattr(point.dist, 'name', '?')}): cannot load it "
                f"({type(error).__name__}: {error}); fix or uninstall that package"
            ) from None
        out.append((point.value, obj))
    return out


def load(specs: Sequence[str] = (), entry_points: bool = True) -> list[Measure]:
    """Load, check and register the plugins of the installed entry points (unless
    ``entry_points`` is False) and of ``specs`` (``module:Class``); the declarations of the
    plugin measures, in load order. Loading the same class twice is harmless."""
    found: list[tuple[str, type]] = []
    if entry_points:
        for spec, obj in entry_point_specs():
            found += [(spec, cls) for cls in _classes(obj, spec)]
    for spec in specs:
        found += [(spec, cls) for cls in _classes(resolve(spec), spec)]
    # similarities first: a pair measure may read one loaded beside it
    found.sort(key=lambda item: 0 if issubclass(item[1], UserSimilarity) else 1)
    declared = []
    for spec, cls in found:
        source = f"{cls.__module__}:{cls.__qualname__}"
        if issubclass(cls, UserSimilarity):
            _register_similarity(cls, source)
        else:
            declared.append(_register_measure(cls, source))
    return declared


def _construct(cls, source):
    try:
        return cls()
    except Exception as error:
        raise PluginError(
            f"plugin {source}: cannot construct it without arguments ({type(error).__name__}: "
            f"{error})"
        ) from None


def _attribute(obj, source: str, key: str, allowed=None):
    value = getattr(obj, key, None)
    if not isinstance(value, str) or not value:
        raise PluginError(f"plugin {source}: set the class attribute {key!r} (a string)")
    if allowed is not None and value not in allowed:
        raise PluginError(f"plugin {source}: {key} = {value!r}; expected one of {list(allowed)}")
    return value


def _register_similarity(cls, source: str) -> None:
    plugin = _construct(cls, source)
    name = _attribute(plugin, source, "name")
    label = _attribute(plugin, source, "label")
    held = registry.REGISTRY.get(name)
    if held is not None and getattr(held.blocks, "plugin_source", None) != source:
        raise PluginError(f"plugin {source}: the similarity name {name!r} is taken; rename it")
    if held is None and label in {e.label for e in registry.REGISTRY.values()}:
        raise PluginError(f"plugin {source}: the similarity label {label!r} is taken; rename it")
    if type(plugin).block is UserSimilarity.block:
        raise PluginError(f"plugin {source}: define block(self, data, start, stop)")

    def blocks(data, plugin=plugin):
        def block(start, stop):
            return call(source, "block", plugin.block, data, start, stop)

        return block

    blocks.plugin_source = source
    registry.REGISTRY.pop(name, None)
    registry.register(name, label, plugin.needs)(blocks)


def _register_measure(cls, source: str) -> Measure:
    plugin = _construct(cls, source)
    name = _attribute(plugin, source, "name")
    if name in _loaded and _loaded[name][0].source == source:
        return _loaded[name][0]
    score = _attribute(plugin, source, "effectiveness", SCORES)
    better = _attribute(plugin, source, "better", ("lower", "higher"))
    bounds = getattr(plugin, "bounds", (-math.inf, math.inf))
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise PluginError(f"plugin {source}: bounds must be (low, high), got {bounds!r}") from None
    pair = isinstance(plugin, PairMeasure)
    label = None
    if pair:
        labels = {entry.label for entry in registry.REGISTRY.values()}
        label = _attribute(plugin, source, "similarity", sorted(labels))
        term = inspect.getattr_static(type(plugin), "term", None)
        if term is not None and compiled_term(plugin) is None:
            raise PluginError(
                f"plugin {source}: term must be a scalar function compiled with numba "
                "(term = numba.njit(function of s_u, s_v, sim)), or leave it unset"
            )
        if type(plugin).terms is PairMeasure.terms and term is None:
            raise PluginError(
                f"plugin {source}: define terms(self, s_u, s_v, sim) or a compiled term"
            )
    elif type(plugin).compute is UserMeasure.compute:
        raise PluginError(f"plugin {source}: define compute(self, scores, weights)")
    routes = {"dense", "stream", "bootstrap", "recbole"} | ({"decompose"} if pair else set())
    if pair and compiled_term(plugin) is not None:  # numba is loaded: the plugin compiled
        from userfair.streamed._plugin_kernels import COMPILED

        if label in COMPILED:
            routes.add("sample")  # its row sums in the compiled loops (generic_routes)
    if score in ("HR", "MRR", "P", "MAP", "R", "NDCG"):
        routes.add("experiments")  # Figs. 2-4 draw binary relevance lists
    group = "Eff (plugins)" if better == "higher" else "Fair (plugins)"
    try:
        declaration = Measure(
            name=name, kind=plugin.kind, better=better, family="plugin", group=group,
            effectiveness=score, similarity=label, bounds=(low, high), routes=routes,
            source=source, text=_text(plugin, source),
        )  # fmt: skip
    except ValueError as error:
        raise PluginError(f"plugin {source}: {error}") from None
    zero = check(plugin, declaration)
    try:
        measures.register(declaration)
    except ValueError as error:
        raise PluginError(str(error)) from None
    _loaded[name] = (declaration, plugin)
    _zero_at_zero[name] = zero
    log.info("plugin measure %s (%s, %s) from %s", name, plugin.kind, score, source)
    return declaration


def _text(plugin, source: str) -> str:
    """The plugin's ``text``, else its docstring's first line, else where it comes from."""
    text = str(getattr(plugin, "text", "") or "").strip()
    doc = (type(plugin).__doc__ or "").strip()
    return text or (doc.splitlines()[0] if doc else f"plugin measure {source}")


def call(source: str, what: str, function, *args):
    """``function(*args)``, a plugin's code: what it raises becomes one line naming the
    plugin (:class:`PluginError`)."""
    try:
        return function(*args)
    except PluginError:
        raise
    except Exception as error:
        raise PluginError(
            f"plugin {source}: {what} raised {type(error).__name__}: {error}"
        ) from None


def value_of(declaration: Measure, raw) -> float:
    """A plugin's returned value as a float, checked: finite (NaN only where the scores are
    degenerate is the plugin's to avoid) and within the declared bounds."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise PluginError(
            f"plugin {declaration.source}: {declaration.name} returned {raw!r}, not a number"
        ) from None
    low, high = declaration.bounds
    if not math.isfinite(value):
        raise PluginError(
            f"plugin {declaration.source}: {declaration.name} returned {value} (not finite)"
        )
    tolerance = 1e-9 * max(1.0, abs(value))
    if value < low - tolerance or value > high + tolerance:
        raise PluginError(
            f"plugin {declaration.source}: {declaration.name} = {value!r} is outside its "
            f"declared bounds [{low}, {high}]"
        )
    return value


def check(plugin, declaration: Measure) -> bool:
    """Check a plugin measure on random inputs before it computes anything: finite values
    within its bounds; a UserMeasure's weights as multiplicities (``compute(x, w)`` equals
    ``compute`` of x with user u repeated w_u times); a PairMeasure's term symmetric in the
    two users and one value per pair. Returns whether a pair term is 0 wherever the
    similarity is 0 (the streamed route then visits only the stored pairs)."""
    rng = np.random.default_rng(CHECK_SEED)
    source = declaration.source
    scores = rng.random(CHECK_USERS)
    scores[:5] = 0.0
    if isinstance(plugin, UserMeasure):
        ones = np.ones(CHECK_USERS)
        value_of(declaration, call(source, "compute", plugin.compute, scores, ones))
        weights = rng.integers(0, 3, CHECK_USERS).astype(np.float64)
        weights[0] = 2.0
        weighted = value_of(declaration, call(source, "compute", plugin.compute, scores, weights))
        repeated = np.repeat(scores, weights.astype(np.int64))
        plain = value_of(
            declaration, call(source, "compute", plugin.compute, repeated, np.ones(repeated.size))
        )
        if not math.isclose(weighted, plain, rel_tol=1e-9, abs_tol=1e-12):
            raise PluginError(
                f"plugin {source}: compute(scores, weights) = {weighted!r} but {plain!r} with "
                "each user repeated weights[u] times: treat the weights as multiplicities"
            )
        return False
    s_u, s_v = rng.random(200), rng.random(200)
    s_u[:20] = s_v[:20]
    sim = rng.random(200)
    sim[::7] = 0.0
    forward = checked_terms(plugin, declaration, s_u, s_v, sim)
    backward = checked_terms(plugin, declaration, s_v, s_u, sim)
    compiled = compiled_term(plugin)
    if compiled is not None and type(plugin).terms is not PairMeasure.terms:
        from userfair.streamed._plugin_kernels import apply_term  # numba is loaded: compiled

        scalar = call(source, "term", apply_term, compiled, s_u, s_v, sim)
        if not np.allclose(scalar, forward, rtol=1e-9, atol=1e-12):
            raise PluginError(
                f"plugin {source}: its compiled term and terms() disagree on random pairs; "
                "make them the same function (or drop terms: it defaults to the term)"
            )
    if not np.allclose(forward, backward, rtol=1e-12, atol=1e-15):
        raise PluginError(
            f"plugin {source}: terms(s_u, s_v, sim) != terms(s_v, s_u, sim); a pair term "
            "must be symmetric in the two users"
        )
    value_of(declaration, forward.mean())
    zeros = checked_terms(plugin, declaration, s_u, s_v, np.zeros_like(sim))
    return bool(np.all(zeros == 0.0))


def checked_terms(plugin, declaration, s_u, s_v, sim) -> np.ndarray:
    """A PairMeasure's terms of the pairs (s_u, s_v, sim) as float64, checked: one finite
    value per pair (what it raises: one line naming it)."""
    out = np.asarray(call(declaration.source, "terms", plugin.terms, s_u, s_v, sim), dtype=float)
    if out.shape != s_u.shape:
        raise PluginError(
            f"plugin {declaration.source}: terms returned shape {out.shape} for {s_u.shape[0]} "
            "pairs; return one value per pair"
        )
    if not np.all(np.isfinite(out)):
        raise PluginError(f"plugin {declaration.source}: terms returned a value that is not finite")
    return out


def describe(names: Iterable[str] | None = None) -> list[str]:
    """One line per loaded plugin measure: name, kind, what it reads, its source."""
    lines = []
    for name, (decl, _) in _loaded.items():
        if names is not None and name not in names:
            continue
        reads = decl.effectiveness + (f" x {decl.similarity}" if decl.similarity else "")
        lines.append(f"{name}: {decl.kind} of {reads}, {decl.better} is better ({decl.source})")
    return lines
