"""Declarations of the envy family (docs/method.md#envy): envy(u, v) = max(phi_u(L_v) -
phi_u(L_u), 0) over the pairs of users; ME its mean over ordered pairs, MME the mean of
each user's maximum, PEU the share of users whose maximum exceeds epsilon. Every route
reduces the envy rows to the same totals (``userfair.formulas.fairness.envy`` dense, the
streamed passes, the bootstrap's kernels, the decomposition); each declaration names its
``reduction`` of them in ``userfair.formulas.envy_reductions.REDUCTIONS``, which turns the
totals into its value and its per-user shares."""

from __future__ import annotations

from userfair.measures.base import ROUTES, declare


def _envy(name: str, reduction: str, text: str):
    return declare(name, "envy", "lower", "envy", "Fair (existing)", default=True,
                   routes=ROUTES, reduction=reduction, text=text)  # fmt: skip


MEASURES = (
    _envy("ME", "mean", "mean envy over ordered pairs of users"),
    _envy("MME", "max", "mean over users of their maximum envy"),
    _envy("PEU", "over", "share of users whose maximum envy exceeds epsilon"),
)
