"""The one registry of measure names: every place that lists, orders, groups or orients a
measure reads it here (the measures files, Tables 2-3, the agreement, the figures, the
``userfair evaluate`` command). Order: the paper's Table 2."""

from __future__ import annotations

#: Effectiveness at k (docs/method.md#effectiveness); higher is better.
EFF = ("HR", "MRR", "P", "MAP", "R", "NDCG")
#: The fairness measures PUF is compared with (docs/method.md#fairness); lower is fairer.
FAIR_EXISTING = ("SD-P", "SD-NDCG", "Gini-P", "Gini-NDCG", "ME", "MME", "PEU", "UF")
#: PUF with P or NDCG as effectiveness and cosine or Jaccard as similarity; lower is fairer.
FAIR_PUF = ("PUF-P-Cos", "PUF-P-Jacc", "PUF-NDCG-Cos", "PUF-NDCG-Jacc")
#: Every fairness measure.
FAIR = FAIR_EXISTING + FAIR_PUF
#: The 18 measure keys of a measures file (results/D/measures/M.json), in table order.
NAMES = EFF + FAIR
#: The per-user scores the group measures read (docs/method.md#groups); a new score S
#: (e.g. graded NDCG) adds ``UserMAD-S`` here and nowhere else.
GROUP_SCORES = ("P", "NDCG")


def group_measure(score: str) -> str:
    """The name of the group measure of a per-user score: ``UserMAD-<score>``."""
    return f"UserMAD-{score}"


#: The group fairness measures, opt-in (``userfair evaluate --user-groups``): not in
#: ``NAMES``, so the measures files stay as they are; lower is fairer.
FAIR_GROUP = tuple(group_measure(score) for score in GROUP_SCORES)
#: The opt-in groups of names beside ``NAMES``.
OPT_IN = {"groups": FAIR_GROUP}
#: Every registered measure name: the 18 defaults, then the opt-in ones.
KNOWN = NAMES + FAIR_GROUP
#: The groups of Table 2, in order.
GROUPS = {"Eff": EFF, "Fair (existing)": FAIR_EXISTING, "Fair (PUF)": FAIR_PUF}
#: The once-per-dataset similarity times a measures file records beside the measures.
SIMILARITY_TIMES = ("similarity-cos", "similarity-jacc")
#: The keys of a measures file's ``conventions`` (built by :func:`conventions`).
CONVENTION_KEYS = ("envy_utility", "epsilon", "gamma", "uf_similarity", "puf_similarity")


def conventions(envy_utility: str, epsilon: float, gamma: float) -> dict:
    """The settled choices a result was computed with (docs/method.md#conventions): the
    ``conventions`` record of every measures file, ``userfair evaluate --json`` and the
    bootstrap's frames."""
    return {
        "envy_utility": envy_utility,
        "epsilon": float(epsilon),
        "gamma": float(gamma),
        "uf_similarity": "raw",
        "puf_similarity": "min-max",
    }


def higher_is_better(name: str) -> bool:
    """Effectiveness: higher is better; every fairness measure: lower is fairer."""
    if name not in KNOWN:
        raise ValueError(f"unknown measure {name!r}; expected one of {list(KNOWN)}")
    return name in EFF
