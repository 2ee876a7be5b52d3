"""The analysis of the opt-in PUF variants (docs/analyses.md#variants): how the model
orderings of PUF change with the user similarity and with graded relevance, and Figs. 3
and 4 repeated with each configured similarity.

- :func:`variant_tau`: Kendall's tau-b between the model orderings of every pair of PUF
  variants ``PUF-{S}-{SIM}`` per dataset (``userfair.bootstrap.inference.tau_intervals``: on the
  full data, with the percentile interval over the uncertainty stage's resamples, the
  same resamples for every model), each pair labelled by what differs between its two
  variants (:func:`change`); :func:`tau_summary` per dataset and kind of change.
- :func:`observed_similarity` and :func:`experiment_rows`: the observed rows of Fig. 3
  (``userfair.workflow.experiments.similarity_measures``) and Fig. 4
  (``userfair.workflow.experiments.run_extreme`` with the similarity's own pair values in
  place of the Weibull(2) sample) for every similarity of the registry the run asks for.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import skew

from userfair.bootstrap.inference import tau_intervals
from userfair.files.io import atomic_path
from userfair.formulas import effectiveness
from userfair.formulas.agreement import EQUIVALENT, agreement_matrix
from userfair.measures import PUF_SCORES, PUF_SIMILARITIES
from userfair.similarity import registry
from userfair.similarity.pairwise import BLOCK_SIZE, min_max
from userfair.workflow import experiments

log = logging.getLogger(__name__)

#: The columns of the variants' tau table (results/tables/variants_tau.csv).
TAU_COLUMNS = (
    "dataset", "measure_a", "measure_b", "score_a", "similarity_a", "score_b",
    "similarity_b", "change", "tau", "low", "high", "excludes_zero",
)  # fmt: skip
#: What differs between two PUF variants, in the order of the summary.
CHANGES = ("similarity", "graded", "score", "both", "none")


def parts(name: str) -> tuple[str, str]:
    """(score, similarity label) of ``PUF-{S}-{SIM}``; ValueError for another name."""
    pieces = name.split("-")
    if len(pieces) != 3 or pieces[0] != "PUF" or pieces[1] not in PUF_SCORES:
        raise ValueError(f"{name!r} is not a PUF variant PUF-{{S}}-{{SIM}}")
    if pieces[2] not in PUF_SIMILARITIES:
        raise ValueError(f"{name!r}: unknown similarity {pieces[2]!r}")
    return pieces[1], pieces[2]


def puf_variants(names: Sequence[str]) -> list[str]:
    """The PUF variants among ``names``, score outer (P, NDCG, gNDCG) and similarity inner
    (Cos, Jacc, RCos, Vec, Genre): the variants that differ only in the similarity sit
    together."""
    found = {name: parts(name) for name in names if name.startswith("PUF-")}
    order = {
        (score, label): i
        for i, (score, label) in enumerate((s, sim) for s in PUF_SCORES for sim in PUF_SIMILARITIES)
    }
    return sorted(found, key=lambda name: order[found[name]])


def change(a: str, b: str) -> str:
    """What differs between the PUF variants ``a`` and ``b``: ``none`` (the same),
    ``similarity`` (the same score), ``graded`` (the same similarity, NDCG against gNDCG),
    ``score`` (the same similarity, another pair of scores), ``both``."""
    (score_a, sim_a), (score_b, sim_b) = parts(a), parts(b)
    if (score_a, sim_a) == (score_b, sim_b):
        return "none"
    if score_a == score_b:
        return "similarity"
    if sim_a != sim_b:
        return "both"
    return "graded" if {score_a, score_b} == {"NDCG", "gNDCG"} else "score"


def variant_tau(
    records: Mapping[tuple[str, str], Mapping[str, float]],
    resamples: Mapping[tuple[str, str], pd.DataFrame] | None,
    datasets: Sequence[str],
    models: Sequence[str],
    level: float = 0.95,
) -> pd.DataFrame:
    """Per dataset, Kendall's tau-b between the model orderings (lower is fairer, as Fig. 1)
    of every ordered pair of the PUF variants the measure files ``records`` ((dataset,
    model) -> measures) hold, on the full data (``tau``). With ``resamples`` ((dataset,
    model) -> the uncertainty stage's frame) the percentile interval ``low``, ``high`` of
    the resampled tau and ``excludes_zero`` (``userfair.bootstrap.inference.tau_intervals``);
    without (``uncertainty.resamples: 0``) those columns are NaN and False. Columns
    :data:`TAU_COLUMNS`."""
    names = puf_variants(next(iter(records.values())).keys())
    frames = []
    for dataset in datasets:
        points = {m: records[(dataset, m)] for m in models}
        if resamples is not None:
            per_model = {m: resamples[(dataset, m)] for m in models}
            frame = tau_intervals(per_model, points, level, names)
        else:
            scores = pd.DataFrame(
                {n: [_number(points[m][n]) for m in models] for n in names}, index=list(models)
            )
            matrix = agreement_matrix(scores, names)
            frame = (
                matrix.rename_axis(index="measure_a", columns="measure_b")
                .stack(future_stack=True)
                .rename("tau")
                .reset_index()
                .assign(low=math.nan, high=math.nan, excludes_zero=False)
            )
        frame.insert(0, "dataset", dataset)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    split = [parts(n) for n in table["measure_a"]], [parts(n) for n in table["measure_b"]]
    table["score_a"], table["similarity_a"] = zip(*split[0])
    table["score_b"], table["similarity_b"] = zip(*split[1])
    table["change"] = [change(a, b) for a, b in zip(table["measure_a"], table["measure_b"])]
    return table[list(TAU_COLUMNS)]


def _number(value) -> float:
    return math.nan if value is None else float(value)


def tau_summary(tau: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and kind of :func:`change` (``none`` left out) over the unordered pairs
    of variants: ``pairs``, ``defined`` (pairs with a finite tau), ``mean_tau``,
    ``equivalent`` (pairs with |tau| >= 0.9, the agreement's threshold), ``excluding_zero``
    (pairs whose interval excludes 0), and the least agreeing pair (``lowest_a``,
    ``lowest_b``, ``lowest_tau``, its interval ``lowest_low``, ``lowest_high``; among pairs
    of equal tau the one whose interval reaches lowest)."""
    rows = []
    order = {name: i for i, name in enumerate(dict.fromkeys(tau["measure_a"]))}
    upper = tau[[order[a] < order[b] for a, b in zip(tau["measure_a"], tau["measure_b"])]]
    for dataset in dict.fromkeys(tau["dataset"]):
        for kind in CHANGES[:-1]:
            part = upper[(upper["dataset"] == dataset) & (upper["change"] == kind)]
            if part.empty:
                continue
            finite = part[np.isfinite(part["tau"])]
            # ties in tau: the pair whose interval reaches lowest (NaN intervals last)
            ranked = finite.sort_values(["tau", "low"], kind="stable", na_position="last")
            lowest = ranked.iloc[0] if len(ranked) else None
            rows.append(
                {
                    "dataset": dataset,
                    "change": kind,
                    "pairs": len(part),
                    "defined": len(finite),
                    "mean_tau": float(finite["tau"].mean()) if len(finite) else math.nan,
                    "equivalent": int((finite["tau"].abs() >= EQUIVALENT).sum()),
                    "excluding_zero": int(part["excludes_zero"].sum()),
                    "lowest_a": None if lowest is None else lowest["measure_a"],
                    "lowest_b": None if lowest is None else lowest["measure_b"],
                    "lowest_tau": math.nan if lowest is None else float(lowest["tau"]),
                    "lowest_low": math.nan if lowest is None else float(lowest["low"]),
                    "lowest_high": math.nan if lowest is None else float(lowest["high"]),
                }
            )
    return pd.DataFrame(rows)


#: How :func:`reading` names each kind of change.
CHANGE_WORDS = {
    "similarity": "another similarity",
    "graded": "graded relevance (NDCG vs gNDCG)",
    "score": "another score",
    "both": "score and similarity",
}


def reading(summary: pd.DataFrame) -> list[str]:
    """One line per dataset and kind of change of :func:`tau_summary`, the numbers of the
    run in words: ``ml-100k, another similarity: mean tau 0.71 over 18 pairs (12 with
    abs(tau) >= 0.9); least agreeing PUF-P-Cos / PUF-P-Genre 0.33 [-0.20, 0.81]``."""
    lines = []
    for _, row in summary.iterrows():
        if not row["defined"]:
            lines.append(f"{row['dataset']}, {CHANGE_WORDS[row['change']]}: no defined tau")
            continue
        interval = (
            f" [{row['lowest_low']:.2f}, {row['lowest_high']:.2f}]"
            if np.isfinite(row["lowest_low"])
            else ""
        )
        lines.append(
            f"{row['dataset']}, {CHANGE_WORDS[row['change']]}: mean tau {row['mean_tau']:.2f} "
            f"over {row['defined']} pairs ({row['equivalent']} with abs(tau) >= {EQUIVALENT}); "
            f"least agreeing {row['lowest_a']} / {row['lowest_b']} "
            f"{row['lowest_tau']:.2f}{interval}"
        )
    return lines


def similarity_reading(observed: pd.DataFrame, sampled: pd.DataFrame) -> list[str]:
    """Fig. 3 with each similarity in words, one line per dataset: each similarity's
    observed PUF-P at its skewness, and whether it lies above or below the synthetic curve
    there (the curve of ``sampled``'s Weibull and normal rows, linearly interpolated;
    "outside the curve's range" beyond its skewnesses). ``observed``:
    ``similarity_variants.parquet``; ``sampled``: ``similarity.parquet``."""
    lines = []
    for dataset in dict.fromkeys(observed["dataset"]):
        mine = observed[(observed["dataset"] == dataset) & (observed["measure"] == "PUF-P")]
        base = sampled[
            (sampled["dataset"] == dataset)
            & (sampled["distribution"] != "observed")
            & (sampled["measure"] == "PUF-P")
        ].sort_values("skewness")
        parts = []
        for row in mine.itertuples():
            where = "outside the curve's range"
            if len(base) and base["skewness"].min() <= row.skewness <= base["skewness"].max():
                curve = float(np.interp(row.skewness, base["skewness"], base["value"]))
                where = f"{'below' if row.value < curve else 'above'} the curve's {curve:.3f}"
            parts.append(
                f"{row.similarity} {row.value:.3f} at skewness {row.skewness:.2f} ({where})"
            )
        model = mine["model"].iloc[0] if "model" in mine and len(mine) else "the lists"
        lines.append(f"{dataset} ({model}'s lists), PUF-P: " + "; ".join(parts))
    return lines


def extreme_reading(extreme: pd.DataFrame, share: float = 0.5) -> list[str]:
    """Fig. 4 with each similarity in words, one line per dataset and score: at ``share``
    of users switched, each similarity's PUF from MostFair to MostUnfair, and UF's largest
    move between the two assignments. ``extreme``: ``extreme_variants.parquet``."""
    lines = []
    at = extreme[np.isclose(extreme["share"], share)]
    for (dataset, score), part in at.groupby(["dataset", "score"], sort=False):
        wide = part.pivot_table(
            index="similarity", columns=["measure", "assignment"], values="value", sort=False
        )
        ranges = "; ".join(
            f"{label} {wide.loc[label, ('PUF', 'MostFair')]:.3f} to "
            f"{wide.loc[label, ('PUF', 'MostUnfair')]:.3f}"
            for label in wide.index
        )
        moved = float((wide[("UF", "MostUnfair")] - wide[("UF", "MostFair")]).abs().max())
        lines.append(
            f"{dataset}, {score}, {100 * share:g} % switched: PUF from MostFair to MostUnfair "
            f"{ranges}; UF moves by at most {moved:.3f}"
        )
    return lines


def reading_text(lines: Sequence[str], title: str) -> str:
    """The report's reading of a figure: reStructuredText, a bold ``title`` and one bullet
    per line (the caption includes it: ``.. include::``)."""
    return f"**{title}**\n\n" + "".join(f"- {line}\n" for line in lines)


def write_reading(lines: Sequence[str], path, title: str) -> None:
    """:func:`reading_text`, written atomically to ``path``."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(reading_text(lines, title))


# --- Figs. 3 and 4 with each similarity ------------------------------------------------


def raw_similarity(
    name: str, data: registry.SimilarityData, block_size: int = BLOCK_SIZE
) -> np.ndarray:
    """The (m, m) raw similarity ``name`` of the registry (diagonal 0), from its row
    blocks; dense, so only where the dense similarity files are built (the experiments)."""
    block = registry.block_function(name, data)
    m = data.m
    out = np.zeros((m, m), dtype=np.float64)
    for start in range(0, m, block_size):
        stop = min(start + block_size, m)
        rows = block(start, stop)
        out[start:stop] = rows.toarray() if hasattr(rows, "toarray") else rows
    np.fill_diagonal(out, 0.0)
    return out


def experiment_similarities(inputs, names: Sequence[str] = ()) -> tuple[str, ...]:
    """The similarities Figs. 3 and 4 are repeated with: the paper's cos and jacc, the
    similarities of ``names`` (registry names: rcos, genre, vec) and rcos when ``inputs``
    carry grades, in registry order (``userfair.opt_in.variants.chosen`` plus cos and jacc)."""
    wanted = {"cos", "jacc"} | {registry.entry(n).name for n in names}
    if inputs.grades is not None:
        wanted.add("rcos")
    return tuple(name for name in registry.REGISTRY if name in wanted)


def experiment_rows(
    inputs,
    split,
    names: Sequence[str],
    settings: experiments.Settings,
    seed: int,
    vectors: np.ndarray | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figs. 3 and 4 with each similarity of :func:`experiment_similarities`:

    - Fig. 3's observed rows (columns similarity, distribution ``observed``, shape NaN,
      skewness, measure, value) on the model's lists ``inputs.topk``: the measures of
      ``experiments.similarity_measures`` with PUF on the min-max normalised similarity
      and UF on its raw values (for jacc: the rows of Fig. 3 itself);
    - Fig. 4 (columns similarity, share, assignment, score, measure, value):
      ``experiments.run_extreme`` on the lists of Fig. 2 of ``split``
      (``load_split_inputs``, as Fig. 4) with the similarity's own normalised pair values,
      sorted and assigned by |S(u) - S(v)|, in place of the Weibull(2) sample.

    ``inputs`` and ``split`` hold the same evaluated users in the same order."""
    if not np.array_equal(inputs.users, split.users):
        raise ValueError("the lists' inputs and the split's inputs name different users")
    data = registry.SimilarityData.of(inputs, vectors)
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, settings.k)
    observed, extreme = [], []
    for name in experiment_similarities(inputs, names):
        label = registry.REGISTRY[name].label
        log.info("Figs. 3 and 4 with %s", label)
        raw = raw_similarity(name, data, settings.block_size)
        sim = min_max(raw, settings.block_size)
        pairs = experiments.matrix_to_pairs(sim)
        skewness = float(skew(pairs)) if np.ptp(pairs) > 0 else 0.0
        measures = experiments.similarity_measures(
            inputs.topk, inputs, sim, scores, settings, sim_uf=raw
        )
        observed += [
            (label, "observed", math.nan, skewness, measure, float(value))
            for measure, value in measures.items()
        ]
        frame = experiments.run_extreme(split, settings, seed, pair_sims=pairs)
        extreme.append(frame.assign(similarity=label))
    fig3 = pd.DataFrame(
        observed, columns=["similarity", "distribution", "shape", "skewness", "measure", "value"]
    )
    fig4 = pd.concat(extreme, ignore_index=True)
    return fig3, fig4[["similarity"] + [c for c in fig4.columns if c != "similarity"]]
