"""What a measure declaration is (:class:`Measure`): its name, direction, kind, the
per-user effectiveness it reads, the user similarity of a pair measure, its theoretical
range and the routes that serve it. Every measure, built-in or plugin, is one such value
in the registry of :mod:`userfair.measures`; every route reads its list from there.

This module is data only: it imports nothing of the engines, so the family modules
(:mod:`userfair.measures.effectiveness`, ``.spread``, ``.envy``, ``.uf``, ``.puf``,
``.groups``) can be loaded by every engine without a circle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: The kinds of measure (docs/method.md#measure-kinds):
#: ``mean``: the mean over the evaluated users of a per-user score (the effectiveness);
#: ``statistic``: a statistic of the per-user scores (SD, Gini, a plugin's UserMeasure);
#: ``pair``: the mean over unordered user pairs of a pair term (PUF, a plugin's PairMeasure);
#: ``envy``: a reduction of the envy rows (their sums, maxima; ME, MME, PEU), declared by name;
#: ``uf``: the UF construction over a raw user similarity (similar pairs above mean + SD,
#: list distances, log scale), the similarity declared by name;
#: ``group``: a statistic of the groups' mean per-user scores (UserMAD), declared by name.
KINDS = ("mean", "statistic", "pair", "envy", "uf", "group")

#: The routes a measure can be served on (docs/architecture.md#routes):
#: ``dense``: ``userfair.evaluate`` on the (m, m) similarities;
#: ``stream``: the row passes that never hold m x m (``userfair.streamed.streaming`` and the
#: workflow's scattered parts);
#: ``bootstrap``: every measure recomputed on resampled users (``userfair.bootstrap.uncertainty``);
#: ``decompose``: the per-user shares (``userfair.decomposition.decompose``, the who tables);
#: ``recbole``: a RecBole metric (``userfair.recbole``);
#: ``experiments``: the relevance, similarity and extreme-case experiments (Figs. 2-4);
#: ``sample``: estimated from a uniform sample of users against all users, with a standard
#: error and an interval (``userfair.streamed.estimate``); on such a run every other measure
#: is exact.
ROUTES = ("dense", "stream", "bootstrap", "decompose", "recbole", "experiments", "sample")

#: Where a built-in comes from (a plugin's source is its ``module:Class``).
BUILTIN = "userfair"


@dataclass(frozen=True)
class Measure:
    """One measure, declared once.

    ``better``: ``higher`` or ``lower``. ``kind``: one of :data:`KINDS`. ``family``: the
    module of ``userfair.measures`` that declares it (``plugin`` for a plugin).
    ``effectiveness``: the per-user score it reads (``P``, ``NDCG``, ``gNDCG``; None for
    the envy and UF measures, which read the lists). ``similarity``: the user similarity
    of a pair measure (``Cos``, ``Jacc``, ... or a plugin similarity's name). ``group``:
    its group in Table 2. ``default``: one of the 18 of every measures file (the others
    are opt-in). ``bounds``: its theoretical range (``-inf``/``inf`` where unbounded).
    ``routes``: the routes of :data:`ROUTES` that serve it; the others say so once, by
    measure and route (:func:`userfair.measures.unserved`). ``source``: ``userfair`` or
    the plugin's ``module:Class``. ``text``: one line on what it is. ``statistic``: for a
    built-in ``statistic``, the name of its formulas in
    ``userfair.formulas.spread.STATISTICS`` (its value, its value in every bootstrap
    resample, its per-user shares), which every route calls (``spread.of(measure)``); for a
    ``group`` measure, the name of its statistic of the groups' means in
    ``userfair.formulas.groups.GROUP_STATISTICS`` (``groups.of(measure)``); None for every
    other kind and for a plugin (``userfair.plugins``). ``term``: for a built-in
    ``pair`` measure, the name of its pair term in ``userfair.formulas.pair_terms.TERMS``;
    the generic pair engine (``userfair.engine.generic_routes``, the one that serves the
    plugins) then serves it on every route, so the measure is that term and this
    declaration. None for PUF's own declarations, which its fused kernels serve.
    ``reduction``: for a built-in ``envy`` measure, the name of its reduction of the envy
    rows in ``userfair.formulas.envy_reductions.REDUCTIONS`` (its value from the rows'
    totals, its per-user shares), which every route calls (``envy_reductions.of(measure)``);
    None for every other kind. ``fused``: served by its family's own kernels on every route
    (PUF's declarations without a term, the paper's UF); every other pair or UF declaration
    is served by the generic engines (``userfair.engine.generic_routes``, and
    ``userfair.engine.uf_engine`` for the ``uf`` kind: the UF construction over the raw
    similarity it names).
    """

    name: str
    kind: str
    better: str
    family: str
    group: str
    effectiveness: str | None = None
    similarity: str | None = None
    default: bool = False
    bounds: tuple[float, float] = (0.0, 1.0)
    routes: frozenset[str] = field(default_factory=lambda: frozenset(ROUTES))
    source: str = BUILTIN
    text: str = ""
    statistic: str | None = None
    term: str | None = None
    reduction: str | None = None
    fused: bool = False

    def __post_init__(self):
        if not self.name or any(c.isspace() for c in self.name) or "/" in self.name:
            raise ValueError(f"measure name {self.name!r}: non-empty, no spaces, no '/'")
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")
        if self.better not in ("higher", "lower"):
            raise ValueError(
                f"{self.name}: better must be 'higher' or 'lower', not {self.better!r}"
            )
        unknown = set(self.routes) - set(ROUTES)
        if unknown:
            raise ValueError(f"{self.name}: unknown routes {sorted(unknown)}; expected {ROUTES}")
        if self.kind == "statistic" and self.source == BUILTIN and self.statistic is None:
            raise ValueError(f"{self.name}: a built-in statistic declares its formulas")
        if self.kind == "group" and self.statistic is None:
            raise ValueError(f"{self.name}: a group measure declares its statistic of the means")
        if self.statistic is not None and self.kind not in ("statistic", "group"):
            raise ValueError(f"{self.name}: only a statistic or a group measure names a statistic")
        if self.kind == "group" and not self.effectiveness:
            raise ValueError(f"{self.name}: a group measure declares the per-user score it reads")
        if self.kind == "envy" and self.reduction is None:
            raise ValueError(f"{self.name}: an envy measure declares its reduction of the rows")
        if self.reduction is not None and self.kind != "envy":
            raise ValueError(f"{self.name}: only an envy measure declares a reduction")
        if self.kind == "pair" and not self.similarity:
            raise ValueError(f"{self.name}: a pair measure declares its similarity")
        if self.term is not None and (self.kind != "pair" or self.source != BUILTIN):
            raise ValueError(f"{self.name}: only a built-in pair measure declares a term")
        if self.term is not None and not self.default:
            raise ValueError(
                f"{self.name}: a built-in pair measure with a term is one of every measures "
                "file (default=True); an opt-in pair measure is a plugin (docs/plugins.md)"
            )
        if self.fused and (self.kind not in ("pair", "uf") or self.source != BUILTIN):
            raise ValueError(f"{self.name}: only a built-in pair or UF measure is fused")
        if self.fused and self.term is not None:
            raise ValueError(f"{self.name}: a fused measure has no term (its kernels serve it)")
        if self.kind == "pair" and self.source == BUILTIN and not self.term and not self.fused:
            raise ValueError(
                f"{self.name}: a built-in pair measure declares its term "
                "(userfair.formulas.pair_terms.TERMS); only PUF's own have fused kernels"
            )
        if self.kind == "uf" and not self.similarity:
            raise ValueError(f"{self.name}: a UF measure declares the raw similarity it reads")
        low, high = self.bounds
        if not (low <= high) or math.isnan(low) or math.isnan(high):
            raise ValueError(f"{self.name}: bounds {self.bounds} must be low <= high")
        object.__setattr__(self, "routes", frozenset(self.routes))

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def builtin(self) -> bool:
        return self.source == BUILTIN


def declare(name: str, kind: str, better: str, family: str, group: str, **fields) -> Measure:
    """A built-in :class:`Measure` (the family modules' one-line declarations)."""
    return Measure(name=name, kind=kind, better=better, family=family, group=group, **fields)


def formulas_of(measure: Measure, kind: str, field: str, table: dict, where: str):
    """The entry of ``table`` (a family's formulas by name, e.g.
    ``userfair.formulas.spread.STATISTICS``) that the declaration ``measure`` of ``kind``
    names in its ``field``; a ValueError naming the measure, the name and ``where`` when
    the measure is of another kind or the name is not there."""
    name = getattr(measure, field)
    found = table.get(name)
    if measure.kind != kind or found is None:
        raise ValueError(f"{measure.name}: no {field} {name!r} in {where} (known: {sorted(table)})")
    return found
