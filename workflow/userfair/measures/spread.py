"""Declarations of the spread family (docs/method.md#fairness): a statistic of the
per-user scores, SD (population standard deviation) and Gini. Each declaration carries its
formulas by name (``userfair.formulas.spread.STATISTICS``: the value, the value in every
bootstrap resample, the per-user shares), which every route calls; this module stays data
only."""

from __future__ import annotations

from userfair.measures.base import ROUTES, declare

_GRADED = frozenset({"dense", "stream", "bootstrap", "recbole"})
#: A statistic of the per-user scores is exact on a sampled run too (no sampled route).
_EXACT = frozenset(ROUTES) - {"sample"}


def _spread(stat: str, score: str, group: str, routes, bounds):
    text = {"SD": "population standard deviation", "Gini": "Gini coefficient"}[stat]
    return declare(f"{stat}-{score}", "statistic", "lower", "spread", group,
                   effectiveness=score, default=group == "Fair (existing)", routes=routes,
                   bounds=bounds, text=f"{text} of the per-user {score}",
                   statistic=stat)  # fmt: skip


#: Scores in [0, 1] have SD in [0, 0.5]; Gini lies in [0, 1).
SD_BOUNDS, GINI_BOUNDS = (0.0, 0.5), (0.0, 1.0)
MEASURES = (
    _spread("SD", "P", "Fair (existing)", _EXACT, SD_BOUNDS),
    _spread("SD", "NDCG", "Fair (existing)", _EXACT, SD_BOUNDS),
    _spread("Gini", "P", "Fair (existing)", _EXACT, GINI_BOUNDS),
    _spread("Gini", "NDCG", "Fair (existing)", _EXACT, GINI_BOUNDS),
    _spread("SD", "gNDCG", "Fair (graded)", _GRADED, SD_BOUNDS),
    _spread("Gini", "gNDCG", "Fair (graded)", _GRADED, GINI_BOUNDS),
)
