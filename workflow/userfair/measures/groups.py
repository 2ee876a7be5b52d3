"""Declarations of the group family (docs/method.md#groups): UserMAD, the mean absolute
deviation of the groups' mean per-user scores. Each names its statistic of the groups'
means (``statistic="MAD"``: ``userfair.formulas.groups.GROUP_STATISTICS``), which every
route calls; opt-in (``--user-groups``, the workflow's group figures)."""

from __future__ import annotations

from userfair.measures.base import declare

#: The per-user scores the group measures read; a new score S adds ``UserMAD-S`` here.
GROUP_SCORES = ("P", "NDCG")


def group_measure(score: str) -> str:
    """The name of the group measure of a per-user score: ``UserMAD-<score>``."""
    return f"UserMAD-{score}"


MEASURES = tuple(
    declare(group_measure(score), "group", "lower", "groups", "Fair (groups)",
            effectiveness=score, statistic="MAD",
            routes={"dense", "stream", "bootstrap", "recbole"},
            text=f"mean absolute deviation of the groups' mean {score}")
    for score in GROUP_SCORES
)  # fmt: skip
