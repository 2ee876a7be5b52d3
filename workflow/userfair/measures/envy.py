"""Declarations of the envy family (docs/method.md#envy): envy(u, v) = max(phi_u(L_v) -
phi_u(L_u), 0) over the pairs of users; ME its mean over ordered pairs, MME the mean of
each user's maximum, PEU the share of users whose maximum exceeds epsilon. Computed by
``userfair.formulas.fairness.envy`` (dense), the streamed passes and the bootstrap's kernels."""

from __future__ import annotations

from userfair.measures.base import ROUTES, declare

MEASURES = (
    declare("ME", "envy", "lower", "envy", "Fair (existing)", default=True, routes=ROUTES,
            text="mean envy over ordered pairs of users"),
    declare("MME", "envy", "lower", "envy", "Fair (existing)", default=True, routes=ROUTES,
            text="mean over users of their maximum envy"),
    declare("PEU", "envy", "lower", "envy", "Fair (existing)", default=True, routes=ROUTES,
            text="share of users whose maximum envy exceeds epsilon"),
)  # fmt: skip
