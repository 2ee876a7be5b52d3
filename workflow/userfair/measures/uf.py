"""Declaration of UF (docs/method.md#uf): the similarity-weighted list distance over the
similar pairs (raw sim_UF >= mean + SD), on a log scale. Computed by
``userfair.formulas.fairness.uf`` and the streamed passes."""

from __future__ import annotations

import math

from userfair.measures.base import ROUTES, declare

#: UF <= 1 (sim_UF and the list distance are at most 1); below 0 when the sum is < 1.
MEASURES = (
    declare("UF", "uf", "lower", "uf", "Fair (existing)", similarity="Jacc", default=True,
            routes=ROUTES, bounds=(-math.inf, 1.0),
            text="log of the similarity-weighted list distance of similar pairs"),
)  # fmt: skip
