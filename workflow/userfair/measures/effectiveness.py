"""Declarations of the effectiveness family (docs/method.md#effectiveness): the mean over
the evaluated users of a per-user score at k. Computed by ``userfair.formulas.effectiveness``
(binary relevance) and ``userfair.formulas.graded`` (gNDCG)."""

from __future__ import annotations

from userfair.measures.base import declare

_ALL = frozenset({"dense", "stream", "bootstrap"})


def _eff(name: str, text: str, routes=_ALL):
    return declare(name, "mean", "higher", "effectiveness", "Eff", effectiveness=name,
                   default=True, routes=routes, text=text)  # fmt: skip


#: In Table 2's order. P and NDCG also serve the experiments of Figs. 2-4.
MEASURES = (
    _eff("HR", "share of users with at least one relevant item in the top k"),
    _eff("MRR", "mean reciprocal rank of the first relevant item"),
    _eff("P", "precision at k", _ALL | {"experiments"}),
    _eff("MAP", "mean average precision at k"),
    _eff("R", "recall at k"),
    _eff("NDCG", "normalised discounted cumulative gain at k", _ALL | {"experiments"}),
    declare("gNDCG", "mean", "higher", "effectiveness", "Eff (graded)", effectiveness="gNDCG",
            routes=_ALL | {"recbole"}, text="NDCG with linear gains equal to the test grade"),
)  # fmt: skip
