"""Declarations of PUF (docs/method.md#puf): the mean over unordered pairs of users of the
min-max normalised similarity times the absolute difference of their per-user scores.
The four of Table 2 (P or NDCG, cosine or Jaccard) and the opt-in variants (gNDCG, and
the similarities RCos, Vec, Genre). Computed by ``userfair.formulas.fairness.puf`` (dense), the
streamed passes, ``userfair.opt_in.variants`` (the opt-in ones) and the bootstrap."""

from __future__ import annotations

from userfair.measures.base import ROUTES, declare

#: The per-user scores PUF may read, and the labels of the user similarities
#: (``userfair.similarity.registry.REGISTRY``), in table order.
PUF_SCORES = ("P", "NDCG", "gNDCG")
PUF_SIMILARITIES = ("Cos", "Jacc", "RCos", "Vec", "Genre")
#: The four of Table 2.
DEFAULT = (("P", "Cos"), ("P", "Jacc"), ("NDCG", "Cos"), ("NDCG", "Jacc"))
_VARIANT_ROUTES = frozenset({"dense", "stream", "bootstrap", "recbole"})


def puf_name(score: str, label: str) -> str:
    """``PUF-{S}-{SIM}``: PUF with the per-user score ``S`` and the similarity ``SIM``."""
    return f"PUF-{score}-{label}"


def _puf(score: str, label: str):
    default = (score, label) in DEFAULT
    # the experiments of Figs. 2-4 read the Jaccard (Fig. 2) or sampled similarities
    # the cosine PUF is exact by the items, cheaper than any sample (no sampled route)
    routes = set(ROUTES) - (set() if label == "Jacc" else {"experiments", "sample"})
    return declare(puf_name(score, label), "pair", "lower", "puf",
                   "Fair (PUF)" if default else "Fair (PUF variants)", effectiveness=score,
                   similarity=label, default=default, fused=True,
                   routes=routes if default else _VARIANT_ROUTES,
                   text=f"PUF over {label} similarity and per-user {score}")  # fmt: skip


#: Table 2's four, then the variants by similarity, score within.
MEASURES = tuple(_puf(s, label) for s, label in DEFAULT) + tuple(
    _puf(score, label)
    for label in PUF_SIMILARITIES
    for score in PUF_SCORES
    if (score, label) not in DEFAULT
)
