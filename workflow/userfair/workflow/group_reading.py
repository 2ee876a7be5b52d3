"""What the group figure of one dataset shows, in words read from the run's tables
(docs/analyses.md#groups): the report's caption of ``results/figures/groups/D.png``
includes the text :func:`reading` writes, so the caption says this run's result, not a
fixed one.

Per grouping: the model pairs the group measure separates (paired comparison, Holm), the
pairs PUF separates, whether the two model orderings agree (Kendall tau with its
interval), and "groups look fair while individuals are not" only when some model is among
the fairest to the groups (no model is fairer by the group measure after Holm) and yet
less fair to individuals than another model (PUF, after Holm).

Inputs are the tables as the workflow writes them, models labelled (``U-KNN``): the paired
comparisons have ``measure, model_a, model_b, difference`` (B - A) and ``significant``;
the group ones a ``by`` column too; the tau rows ``by, measure_a, measure_b, tau`` and,
with the bootstrap, ``low, high, excludes_zero``.
"""

from __future__ import annotations

import math

import pandas as pd

from userfair.measures import higher_is_better


def separated(tests: pd.DataFrame, measure: str) -> list[tuple[str, str]]:
    """The pairs of models a measure separates (``significant`` after Holm), each as
    (better, worse) by the measure's direction (lower is fairer)."""
    rows = tests[(tests["measure"] == measure) & tests["significant"].astype(bool)]
    higher = higher_is_better(measure)
    pairs = []
    for row in rows.itertuples():
        a_better = (row.difference < 0) if higher else (row.difference > 0)
        pairs.append((row.model_a, row.model_b) if a_better else (row.model_b, row.model_a))
    return pairs


def fairest(models: list[str], pairs: list[tuple[str, str]]) -> list[str]:
    """The models no other model beats in ``pairs`` ((better, worse), as :func:`separated`):
    the fairest, up to what the data can tell."""
    beaten = {worse for _, worse in pairs}
    return [m for m in models if m not in beaten]


def _pairs_text(pairs: list[tuple[str, str]], total: int) -> str:
    listed = "; ".join(f"{a} fairer than {b}" for a, b in pairs)
    if total == 1:
        return f"separates the one pair of models ({listed})" if pairs else (
            "does not separate the one pair of models"
        )  # fmt: skip
    if not pairs:
        return f"separates none of the {total} pairs of models"
    return f"separates {len(pairs)} of the {total} pairs of models ({listed})"


def bounds_text(low: float, high: float, digits: int = 2) -> str:
    """``[low, high]`` with ``digits`` decimals, more where a bound of an interval that
    excludes 0 would round to 0 (``[0.00, 0.91]`` for an interval above 0 reads as if it
    held 0): up to 6."""
    excludes = low > 0 or high < 0
    while digits < 6 and excludes and any(round(b, digits) == 0 for b in (low, high)):
        digits += 1
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _tau_text(taus: pd.DataFrame, by: str, measure: str, against: str) -> str:
    rows = taus[(taus["by"] == by) & (taus["measure_a"] == measure)]
    rows = rows[rows["measure_b"] == against]
    if rows.empty or not math.isfinite(float(rows["tau"].iloc[0])):
        return "the Kendall tau of the two model orderings is undefined (a measure ties the models)"
    row = rows.iloc[0]
    tau = float(row["tau"])
    if "low" not in row.index or not math.isfinite(float(row["low"])):
        verdict = "agree" if tau > 0 else "are reversed" if tau < 0 else "are unrelated"
        return f"the two model orderings {verdict} (Kendall tau {tau:.2f}, no interval)"
    low, high = float(row["low"]), float(row["high"])
    interval = f"Kendall tau {tau:.2f} {bounds_text(low, high)}"
    if low > 0:
        return f"the two model orderings agree ({interval})"
    if high < 0:
        return f"the two model orderings are reversed ({interval})"
    return f"the data cannot tell whether the two model orderings agree ({interval} covers 0)"


def reading(
    dataset: str,
    models: list[str],
    group_tests: pd.DataFrame,
    tests: pd.DataFrame,
    taus: pd.DataFrame,
    *,
    measure: str = "UserMAD-P",
    against: str = "PUF-P-Cos",
    source: str = "the evaluated users",
    tau_source: str = "the evaluated users",
) -> str:
    """reStructuredText: one paragraph on ``against`` and one bullet per grouping of
    ``group_tests`` (the rows of ``dataset``) on ``measure``. ``models``: the labels, in
    table order; ``source``, ``tau_source``: what the paired comparisons and the tau
    intervals resample (said in the text)."""
    group_tests = group_tests[group_tests["dataset"] == dataset]
    tests = tests[tests["dataset"] == dataset]
    taus = taus[taus["dataset"] == dataset] if "dataset" in taus else taus
    total = len(models) * (len(models) - 1) // 2
    individual = separated(tests, against)
    lines = [
        f"**What this run shows on {dataset}** (paired comparisons with Holm's correction "
        f"over {source}; tau intervals over {tau_source}): the individual measure {against} "
        f"{_pairs_text(individual, total)}.",
        "",
    ]
    for by in dict.fromkeys(group_tests["by"]):
        group = separated(group_tests[group_tests["by"] == by], measure)
        text = (
            f"- Groups by ``{by}``: {measure} {_pairs_text(group, total)}; "
            f"{_tau_text(taus, by, measure, against)}."
        )
        looks_fair = [
            (a, better)
            for a in fairest(models, group)
            for better, worse in individual
            if worse == a
        ]
        if looks_fair and not group:
            # every model is "among the fairest" only because none is separated: say that
            cases = "; ".join(f"{a} less fair to individuals than {b}" for a, b in looks_fair)
            text += (
                f" {measure} shows no model fairer to these groups than another, while "
                f"{against} finds {cases}."
            )
        elif looks_fair:
            cases = "; ".join(
                f"{a} is among the fairest to these groups (no model is shown fairer to "
                f"them) but less fair to individuals than {b}"
                for a, b in looks_fair
            )
            text += f" Groups look fair while individuals are not: {cases}."
        else:
            text += (
                " No model that looks fairest to these groups is shown less fair to "
                "individuals than another."
            )
        lines.append(text)
    if len(lines) == 2:
        lines.append("- No grouping has a paired comparison (the bootstrap is off).")
    return "\n".join(lines) + "\n"
