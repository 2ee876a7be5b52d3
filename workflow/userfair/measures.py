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
#: Opt-in (docs/measures.md#opt-in-measures): never in a measures file unless asked for.
#: Graded effectiveness: NDCG with linear gains equal to the test grade.
EFF_GRADED = ("gNDCG",)
#: The spread of gNDCG over the users.
FAIR_GRADED = ("SD-gNDCG", "Gini-gNDCG")
#: The per-user scores PUF may read, and the labels of the user similarities
#: (``userfair.similarities.REGISTRY``), in table order.
PUF_SCORES = ("P", "NDCG", "gNDCG")
PUF_SIMILARITIES = ("Cos", "Jacc", "RCos", "Vec", "Genre")
#: The per-user scores the group measures read (docs/method.md#groups); a new score S
#: (e.g. graded NDCG) adds ``UserMAD-S`` here and nowhere else.
GROUP_SCORES = ("P", "NDCG")


def group_measure(score: str) -> str:
    """The name of the group measure of a per-user score: ``UserMAD-<score>``."""
    return f"UserMAD-{score}"


#: The group fairness measures, opt-in (``userfair evaluate --user-groups``): not in
#: ``NAMES``, so the measures files stay as they are; lower is fairer.
FAIR_GROUP = tuple(group_measure(score) for score in GROUP_SCORES)
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


def puf_name(score: str, label: str) -> str:
    """``PUF-{S}-{SIM}``: PUF with the per-user score ``S`` and the similarity ``SIM``."""
    return f"PUF-{score}-{label}"


#: Every opt-in name, in table order (graded effectiveness, its spread, then PUF by
#: similarity, score within).
OPT_IN = (
    EFF_GRADED
    + FAIR_GRADED
    + tuple(
        name
        for label in PUF_SIMILARITIES
        for score in PUF_SCORES
        if (name := puf_name(score, label)) not in FAIR_PUF
    )
)


#: Every registered measure name: the 18 defaults, the opt-in graded measures and PUF
#: variants, the opt-in group measures.
KNOWN = NAMES + OPT_IN + FAIR_GROUP


#: The opt-in groups, in table order (each after the default group it extends).
OPT_IN_GROUPS = {
    "Eff (graded)": EFF_GRADED,
    "Fair (graded)": FAIR_GRADED,
    "Fair (PUF variants)": OPT_IN[len(EFF_GRADED + FAIR_GRADED) :],
}


def optional_names(graded: bool, labels=()) -> tuple[str, ...]:
    """The opt-in names a result holds beyond :data:`NAMES`: with ``graded`` gNDCG, its SD
    and Gini and PUF with gNDCG; PUF with P, NDCG (and gNDCG) over the similarity
    ``labels`` (e.g. ``("RCos", "Vec")``; Cos and Jacc come with ``graded``)."""
    scores = PUF_SCORES if graded else PUF_SCORES[:2]
    chosen = set(labels) | ({"Cos", "Jacc"} if graded else set())
    unknown = set(labels) - set(PUF_SIMILARITIES)
    if unknown:
        raise ValueError(f"unknown similarity {sorted(unknown)}; expected {PUF_SIMILARITIES}")
    wanted = set(EFF_GRADED + FAIR_GRADED) if graded else set()
    wanted |= {puf_name(s, label) for label in chosen for s in scores}
    return tuple(name for name in OPT_IN if name in wanted)


def higher_is_better(name: str) -> bool:
    """Effectiveness: higher is better; every fairness measure: lower is fairer."""
    if name not in KNOWN:
        raise ValueError(f"unknown measure {name!r}; expected one of {list(KNOWN)}")
    return name in EFF or name in EFF_GRADED
