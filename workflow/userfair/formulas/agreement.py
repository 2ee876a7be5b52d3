"""Agreement between measures (Fig. 1, docs/method.md#analyses): Kendall's tau-b between the model
orderings that two measures give, per dataset.

An ordering runs from the best model to the worst, so a measure where lower is better is
negated before correlating: two measures that agree on which model is best get tau = +1
whatever their directions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from userfair.measures import NAMES, higher_is_better

EQUIVALENT = 0.9  # |tau| >= this counts as equivalent orderings (the paper's threshold)


def oriented(measure: str, values) -> np.ndarray:
    """Scores where larger means better for ``measure``."""
    values = np.asarray(values, dtype=float)
    return values if higher_is_better(measure) else -values


def kendall_tau_b(a, b) -> float:
    """tau-b over the models where both scores are finite; NaN with fewer than 2 such
    models or when either side is constant (tau-b is undefined then)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    # imported here: scipy.stats costs about a second, and every Snakemake start imports
    # this module (through userfair.bootstrap.inference) without computing a tau
    from scipy.stats import kendalltau

    return float(kendalltau(a, b, variant="b").statistic)


def agreement_matrix(scores: pd.DataFrame, measures=NAMES) -> pd.DataFrame:
    """Tau-b between every pair of ``measures``; ``scores`` has one row per model and one
    column per measure (raw values, directions handled here)."""
    measures = list(measures)
    missing = [m for m in measures if m not in scores.columns]
    if missing:
        raise ValueError(f"scores lack the measures {missing}")
    matrix = pd.DataFrame(np.nan, index=measures, columns=measures)
    for i, first in enumerate(measures):
        for second in measures[i:]:
            tau = kendall_tau_b(oriented(first, scores[first]), oriented(second, scores[second]))
            matrix.loc[first, second] = matrix.loc[second, first] = tau
    return matrix


def agreement_long(long_scores: pd.DataFrame, measures=NAMES) -> pd.DataFrame:
    """Per dataset, tau-b of every measure pair, from the long (dataset, model, measure,
    value) frame of :func:`userfair.workflow.tables.scores_frame`. Columns: dataset, measure_a,
    measure_b, tau, equivalent."""
    frames = []
    for dataset, group in long_scores.groupby("dataset", sort=False):
        wide = group.pivot(index="model", columns="measure", values="value")
        matrix = agreement_matrix(wide, measures)
        frame = (
            matrix.rename_axis(index="measure_a", columns="measure_b")
            .stack(future_stack=True)
            .rename("tau")
            .reset_index()
        )
        frame.insert(0, "dataset", dataset)
        frames.append(frame)
    result = pd.concat(frames, ignore_index=True)
    result["equivalent"] = result["tau"].abs() >= EQUIVALENT
    return result
