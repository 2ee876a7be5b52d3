"""Declarations of the UF kind (docs/method.md#uf): the similarity-weighted list distance
over the similar pairs (raw similarity >= mean + SD), on a log scale. The paper's UF (the
raw Jaccard mixed with the genre similarity by gamma) is ``fused``: computed by
``userfair.formulas.fairness.uf`` and the streamed passes. A variant over another raw
similarity is one more declaration here (``similarity="Cos"``, any registered label),
which the generic UF engine (``userfair.engine.uf_engine``) serves on every route."""

from __future__ import annotations

import math

from userfair.measures.base import ROUTES, declare

#: UF <= 1 (sim_UF and the list distance are at most 1); below 0 when the sum is < 1.
MEASURES = (
    declare("UF", "uf", "lower", "uf", "Fair (existing)", similarity="Jacc", default=True,
            fused=True, routes=ROUTES, bounds=(-math.inf, 1.0),
            text="log of the similarity-weighted list distance of similar pairs"),
)  # fmt: skip
