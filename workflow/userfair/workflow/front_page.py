"""The report's first page (reStructuredText, included by workflow/report/workflow.rst):
what ran, the verdicts (the paper's claims on this run, the paper gap) and the fairest
model of every measure with its interval. Every sentence is built from the run's tables
(docs/analyses.md#claims); nothing here is a fixed statement about the results."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from userfair import measures
from userfair.workflow import claims as checks
from userfair.workflow import properties
from userfair.workflow.tables import model_label

MARK = {checks.HOLDS: "✔", checks.FAILS: "✘", checks.UNDECIDED: "?", checks.UNTESTABLE: "–"}


def cell(text) -> str:
    """One list-table cell: never empty (docutils drops a row of empty cells' meaning)."""
    text = " ".join(str(text).split())
    return text.replace("*", r"\*").replace("`", r"\`").replace("|", r"\|") or "–"


def list_table(title: str, header: Sequence[str], rows: Sequence[Sequence], widths=None) -> str:
    lines = [f".. list-table:: {title}", "   :header-rows: 1"]
    if widths:
        lines.append("   :widths: " + " ".join(str(w) for w in widths))
    lines.append("")
    for row in [header, *rows]:
        lines.append(f"   * - {cell(row[0])}")
        lines += [f"     - {cell(value)}" for value in row[1:]]
    return "\n".join(lines) + "\n"


def number(x) -> str:
    return "NaN" if x is None or not np.isfinite(x) else f"{x:.4g}"


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def what_ran(runs: Sequence[properties.DatasetRun], run: Mapping) -> str:
    datasets = ", ".join(f"{r.dataset} ({plural(r.users, 'evaluated user')})" for r in runs)
    models = [model_label(m) for m in runs[0].models] if runs else []
    replicates = int(run.get("replicates", 1))
    resamples = int(run.get("resamples", 0))
    text = (
        f"**What ran.** {plural(len(runs), 'dataset')}: {datasets}; "
        f"{plural(len(models), 'model')}: {', '.join(models)}; seed {run.get('seed')}; "
        f"{plural(replicates, 'training replicate')}; "
    )
    text += (
        f"{plural(resamples, 'bootstrap resample')} of the users (intervals at level "
        f"{run.get('level')})"
        if resamples
        else "no bootstrap resamples (no intervals: every verdict reads the point values)"
    )
    text += f"; grid ``{run.get('grid')}``, at most {plural(int(run.get('epochs', 0)), 'epoch')}."
    return text + "\n"


def claims_section(verdicts: pd.DataFrame, across: pd.DataFrame) -> str:
    counts = verdicts["verdict"].value_counts()
    summary = ", ".join(f"{int(counts[v])} {v}" for v in checks.VERDICTS if v in counts)
    out = [
        "**The paper's claims on this run** (sections 4.2-4.5, one check each; thresholds "
        f"beside each, docs/analyses.md#claims): {summary}.\n"
    ]
    rows = [
        (
            r.claim, r.dataset, f"{MARK[r.verdict]} {r.verdict}", r.evidence,
            f"{r.threshold} (the paper: {r.paper})",
        )
        for r in verdicts.itertuples()
    ]  # fmt: skip
    out.append(
        list_table(
            "The paper's claims, checked on this run",
            ["claim", "dataset", "verdict", "evidence", "threshold (the paper's numbers)"],
            rows,
            [14, 8, 10, 42, 26],
        )
    )
    if verdicts["dataset"].nunique() > 1:
        out.append(
            list_table(
                "Each claim across the datasets",
                ["claim", "across the datasets"],
                [(r.claim, r.line) for r in across.itertuples()],
            )
        )
    return "\n".join(out)


def paper_gap_section(paper_gap: pd.DataFrame | None) -> str:
    if paper_gap is None or paper_gap.empty:
        return ""
    lines = "\n".join(f"- {cell(line)}" for line in paper_gap["line"])
    return f"**The paper's numbers** (Table 2 beside the run's):\n\n{lines}\n"


def fairest(run: properties.DatasetRun, name: str) -> tuple[str, float, float, float, str]:
    """The best model of a measure (fairest, or most effective), its value and interval,
    and the runner-up's share of the draws in which it does better (how settled)."""
    values = run.values(name)
    oriented = values if properties.is_eff(name) else -values
    if not np.isfinite(oriented).any():
        return "–", math.nan, math.nan, math.nan, "undefined for every model"
    best = int(np.nanargmax(oriented))
    drawn = run.drawn(name)
    low, high = properties.interval(None if drawn is None else drawn[:, best], run.level)
    settled = "one model: none to compare" if len(run.models) == 1 else "no draws"
    if drawn is not None and len(run.models) > 1:
        flip = drawn if properties.is_eff(name) else -drawn
        others = np.delete(flip, best, axis=1)
        with np.errstate(invalid="ignore"):
            wins = np.mean(flip[:, best] >= np.nanmax(others, axis=1))
        settled = f"best in {wins:.0%} of {len(drawn)} draws"
    return model_label(run.models[best]), float(values[best]), low, high, settled


def fairest_section(runs: Sequence[properties.DatasetRun]) -> str:
    out = []
    for run in runs:
        rows = []
        for name in run.measure_names():
            model, value, low, high, settled = fairest(run, name)
            interval = f"[{number(low)}, {number(high)}]" if np.isfinite(low) else "–"
            rows.append((name, model, number(value), interval, settled))
        out.append(
            list_table(
                f"The best model per measure on {run.dataset} (fairest for Fair, most "
                f"effective for Eff), interval at level {run.level}",
                ["measure", "best model", "value", "interval", "how settled"],
                rows,
            )
        )
    return "\n".join(out)


def _answer(condition) -> str:
    return "not measured here" if condition is None else ("yes" if condition else "no")


def advantages(row: Mapping) -> list[tuple[str, str]]:
    """PUF's advantages the paper claims (sections 4.2-4.5), asked of one measure's row of
    ``measure_properties.csv``: each as (the advantage, yes / no / not measured here)."""
    shape, trend = row["relevance_shape"], row["similarity_trend"]
    effect = None if shape in ("not measured", "not in the experiment") else shape == "inverted U"
    similar = False if trend.startswith("flat") else (trend in ("falls", "rises") or None)
    fair_max, power = row["extreme_mostfair_max"], row["discriminative_power"]
    cost = row["seconds_per_1000_users"]
    return [
        ("sensitive to effectiveness disparity (an inverted U over Fig. 2)", _answer(effect)),
        ("sensitive to the similarity distribution (Fig. 3)", _answer(similar)),
        (
            "near 0 in the MostFair case (Fig. 4)",
            _answer(None if math.isnan(fair_max) else fair_max <= properties.NEAR_ZERO),
        ),
        ("separates models (discriminative power above 0)",
         _answer(None if math.isnan(power) else power > 0)),
        ("seconds per 1,000 users", "not measured here" if math.isnan(cost) else f"{cost:.3g}"),
    ]  # fmt: skip


def new_measures_section(props: pd.DataFrame) -> str:
    """PUF's claimed advantages asked of every Fair measure the paper never saw."""
    new = props[(props["group"] == "Fair") & ~props["measure"].isin(measures.NAMES)]
    if new.empty:
        return ""
    rows = []
    for row in new.to_dict("records"):
        answers = "; ".join(f"{what}: {answer}" for what, answer in advantages(row))
        rows.append((row["measure"], row["dataset"], answers))
    return list_table(
        "Measures the paper never saw: which of PUF's claimed advantages they share",
        ["measure", "dataset", "in the paper's terms"],
        rows,
    )


def render(
    runs: Sequence[properties.DatasetRun],
    props: pd.DataFrame,
    verdicts: pd.DataFrame,
    across: pd.DataFrame,
    run: Mapping,
    paper_gap: pd.DataFrame | None = None,
) -> str:
    """The first page: what ran, the claims, the paper gap, new measures, the best models."""
    parts = [
        what_ran(runs, run),
        claims_section(verdicts, across),
        paper_gap_section(paper_gap),
        new_measures_section(props),
        fairest_section(runs),
    ]
    return "\n".join(part for part in parts if part)
