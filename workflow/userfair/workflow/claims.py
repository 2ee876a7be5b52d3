"""The paper's empirical claims (its sections 4.2-4.5) as checks over a run's measure
properties (:mod:`userfair.workflow.properties`), each with a verdict per dataset:
``holds``, ``does not hold``, ``undecided`` (its interval over the run's draws straddles the
threshold) or ``not testable`` (the run lacks what it needs, and says what). Thresholds and
tolerances are stated beside each claim here, in claims.csv and in docs/analyses.md#claims.

A check with an interval decides only when the whole interval lies on one side of its
threshold; one without (no resamples, or an artificial experiment, which is one draw)
reads the point value. A claim over several parts (every PUF variant, every Eff measure)
fails when one part fails for certain, holds when every part holds, else is undecided."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from userfair import measures
from userfair.workflow import reproduction
from userfair.workflow.properties import (
    FLAT,
    NEAR_ZERO,
    DatasetRun,
    experiment_name,
    interval,
    spread,
)
from userfair.workflow.verdicts import (
    FAILS,
    HOLDS,
    UNDECIDED,
    UNTESTABLE,
    VERDICTS,
    Region,
    Verdict,
    above,
    at_least,
    at_most,
    below,
    combine,
    decide,
    number,
    with_interval,
)

#: The measure the paper's claims call MME: its printed MME row is the mean envy, ME here
#: (the print swaps the two rows: docs/method.md#reading-table-2).
PAPER_MME = reproduction.ROW_MEASURE["MME"]
#: Thresholds (docs/analyses.md#claims).
MME_RANGE = 5.2e-3
PUF_EFF_TAU = -0.71
EQUIVALENT_TAU = 0.9
SD_PUF_TAU = 0.62
#: "High" for UF in the extreme case: the upper half of its range up to 1 (the paper: 0.8).
UF_HIGH = 0.5

#: The measures the cost claim compares PUF with (the paper's Table 3: > 4 minutes).
EXPENSIVE = ("ME", "MME", "PEU", "UF")
#: Columns of claims.csv, in order.
COLUMNS = ["claim", "dataset", "section", "verdict", "evidence", "threshold", "paper", "text"]


# --- the context a check reads ----------------------------------------------------------


@dataclass
class Context:
    run: DatasetRun
    properties: pd.DataFrame  # indexed by measure
    taus: pd.DataFrame  # measure_a, measure_b, tau, low, high

    def held(self, names) -> list[str]:
        return [n for n in names if n in self.properties.index]

    def missing(self, names) -> list[str]:
        return [n for n in names if n not in self.properties.index]

    def ranges(self, name: str) -> tuple[float, np.ndarray | None]:
        drawn = self.run.drawn(name)
        point = float(spread(self.run.values(name)))
        return point, None if drawn is None else spread(drawn, axis=1)

    def tau(self, a: str, b: str) -> tuple[float, float, float]:
        row = self.taus[(self.taus["measure_a"] == a) & (self.taus["measure_b"] == b)]
        if row.empty:
            return math.nan, math.nan, math.nan
        first = row.iloc[0]
        return float(first["tau"]), float(first["low"]), float(first["high"])


def _interval(values: np.ndarray | None, level: float) -> tuple[float, float]:
    return interval(values, level)


def _needs_models(ctx: Context) -> Verdict | None:
    if len(ctx.run.models) < 2:
        return Verdict(UNTESTABLE, f"not testable here: {len(ctx.run.models)} model, no ordering")
    return None


def _needs(ctx: Context, names) -> Verdict | None:
    missing = ctx.missing(names)
    if missing:
        return Verdict(UNTESTABLE, f"not testable here: the run has no {', '.join(missing)}")
    return None


def _counts(parts: list[str]) -> str:
    return ", ".join(f"{parts.count(v)} {v}" for v in VERDICTS if parts.count(v))


# --- the checks -------------------------------------------------------------------------


def mme_range_smallest(ctx: Context) -> Verdict:
    fair = ctx.held(measures.FAIR)
    stop = _needs_models(ctx) or _needs(ctx, [PAPER_MME])
    if stop:
        return stop
    level = ctx.run.level
    mme, mme_drawn = ctx.ranges(PAPER_MME)
    parts = [decide(mme, *_interval(mme_drawn, level), below(MME_RANGE))]
    closest, closest_gap = None, math.inf
    for name in fair:
        if name == PAPER_MME:
            continue
        other, other_drawn = ctx.ranges(name)
        gap = other - mme
        gaps = None if mme_drawn is None or other_drawn is None else other_drawn - mme_drawn
        parts.append(decide(gap, *_interval(gaps, level), above(0.0)))
        if gap < closest_gap:
            closest, closest_gap = name, gap
    low, high = _interval(mme_drawn, level)
    evidence = f"{PAPER_MME} range {with_interval(mme, low, high)}"
    if closest is not None:
        evidence += f"; next smallest {closest} {number(ctx.ranges(closest)[0])}"
    if "MME" in ctx.properties.index and PAPER_MME != "MME":
        evidence += f"; MME as defined (max envy) {number(ctx.ranges('MME')[0])}"
    return Verdict(combine(parts), evidence + f" ({_counts(parts)})")


def gini_peu_widest(ctx: Context) -> Verdict:
    widest = ctx.held([n for n in measures.FAIR if n.startswith("Gini-")] + ["PEU"])
    stop = _needs_models(ctx) or _needs(ctx, ["PEU"])
    if stop:
        return stop
    others = [n for n in ctx.held(measures.FAIR) if n not in widest]
    points = {n: ctx.ranges(n) for n in widest + others}
    gap = min(points[n][0] for n in widest) - max(points[n][0] for n in others)
    drawn = [points[n][1] for n in widest + others]
    gaps = None
    if all(d is not None for d in drawn):
        gaps = np.nanmin(np.stack([points[n][1] for n in widest]), axis=0) - np.nanmax(
            np.stack([points[n][1] for n in others]), axis=0
        )
    low, high = _interval(gaps, ctx.run.level)
    narrowest = min(widest, key=lambda n: points[n][0])
    widest_other = max(others, key=lambda n: points[n][0])
    evidence = (
        f"narrowest of them {narrowest} {number(points[narrowest][0])}, widest other "
        f"{widest_other} {number(points[widest_other][0])}: gap "
        f"{with_interval(gap, low, high)}"
    )
    return Verdict(decide(gap, low, high, above(0.0)), evidence)


def _tau_parts(ctx: Context, pairs, region: Region) -> tuple[list[str], list]:
    parts, rows = [], []
    for a, b in pairs:
        tau, low, high = ctx.tau(a, b)
        if not np.isfinite(tau):
            continue
        parts.append(decide(tau, low, high, region))
        rows.append((a, b, tau, low, high))
    return parts, rows


def _tau_verdict(ctx, pairs, region, pick, what) -> Verdict:
    stop = _needs_models(ctx)
    if stop:
        return stop
    parts, rows = _tau_parts(ctx, pairs, region)
    if not rows:
        return Verdict(UNTESTABLE, f"not testable here: no defined tau between {what}")
    a, b, tau, low, high = pick(rows)
    skipped = len(pairs) - len(rows)
    note = f"; {skipped} pairs with undefined tau left out" if skipped else ""
    return Verdict(
        combine(parts),
        f"{len(rows)} pairs ({_counts(parts)}); extreme {a} vs {b} "
        f"{with_interval(tau, low, high)}{note}",
    )


def puf_disagrees_eff(ctx: Context) -> Verdict:
    pairs = [(p, e) for p in ctx.held(measures.FAIR_PUF) for e in ctx.held(measures.EFF)]
    return _tau_verdict(
        ctx, pairs, at_most(PUF_EFF_TAU), lambda rows: max(rows, key=lambda r: r[2]),
        "PUF and the Eff measures",
    )  # fmt: skip


def no_fair_equivalent_eff(ctx: Context) -> Verdict:
    pairs = [(f, e) for f in ctx.held(measures.FAIR) for e in ctx.held(measures.EFF)]
    region = Region(-EQUIVALENT_TAU, EQUIVALENT_TAU, False, False)
    return _tau_verdict(
        ctx, pairs, region, lambda rows: max(rows, key=lambda r: abs(r[2])),
        "the Fair and Eff measures",
    )  # fmt: skip


def sd_aligns_puf(ctx: Context) -> Verdict:
    stop = _needs_models(ctx)
    if stop:
        return stop
    existing = ctx.held(measures.FAIR_EXISTING)
    sd = [n for n in existing if n.startswith("SD-")]
    rest = [n for n in existing if n not in sd]
    puf = ctx.held(measures.FAIR_PUF)
    aligned, sd_rows = _tau_parts(ctx, [(s, p) for s in sd for p in puf], at_least(SD_PUF_TAU))
    apart, rest_rows = _tau_parts(ctx, [(r, p) for r in rest for p in puf], below(SD_PUF_TAU))
    if not sd_rows:
        return Verdict(UNTESTABLE, "not testable here: no defined tau between SD and PUF")
    weakest = min(sd_rows, key=lambda r: r[2])
    evidence = (
        f"SD-PUF {len(sd_rows)} pairs ({_counts(aligned)}), weakest {weakest[0]} vs "
        f"{weakest[1]} {with_interval(*weakest[2:])}"
    )
    if rest_rows:
        strongest = max(rest_rows, key=lambda r: r[2])
        evidence += (
            f"; others-PUF {len(rest_rows)} pairs ({_counts(apart)}), strongest "
            f"{strongest[0]} vs {strongest[1]} {with_interval(*strongest[2:])}"
        )
    return Verdict(combine(aligned + apart), evidence)


def _fairest(values: np.ndarray) -> set[int]:
    finite = np.where(np.isfinite(values), values, np.inf)
    return set(np.flatnonzero(finite == finite.min())) if np.isfinite(finite.min()) else set()


def uf_puf_differ(ctx: Context) -> Verdict:
    puf = ctx.held(measures.FAIR_PUF)
    stop = _needs_models(ctx) or _needs(ctx, ["UF"]) or (None if puf else _needs(ctx, ["PUF"]))
    if stop:
        return stop
    models = ctx.run.models
    uf = _fairest(ctx.run.values("UF"))
    same = [p for p in puf if uf & _fairest(ctx.run.values(p))]
    picks = ", ".join(
        f"{p} {'/'.join(models[i] for i in _fairest(ctx.run.values(p)))}" for p in puf
    )
    evidence = f"UF picks {'/'.join(models[i] for i in sorted(uf))}; {picks}"
    uf_drawn = ctx.run.drawn("UF")
    drawn = [ctx.run.drawn(p) for p in puf]
    if uf_drawn is None or any(d is None for d in drawn):
        return Verdict(FAILS if same else HOLDS, evidence + " (no draws: the point decides)")
    differ = np.array([
        not any(_fairest(uf_drawn[b]) & _fairest(d[b]) for d in drawn)
        for b in range(len(uf_drawn))
    ])  # fmt: skip
    share = float(differ.mean())
    level = ctx.run.level
    evidence += f"; all differ in {share:.0%} of {len(differ)} draws (decides at {level:.0%})"
    if not same and share >= level:
        return Verdict(HOLDS, evidence)
    if same and 1 - share >= level:
        return Verdict(FAILS, evidence)
    return Verdict(UNDECIDED, evidence)


def _shape_verdict(ctx: Context, names, column: str, wanted: tuple[str, ...]) -> Verdict:
    stop = _needs(ctx, names)
    if stop:
        return stop
    rows = ctx.properties.loc[names]
    if rows[column].str.startswith("not ").any():
        which = list(rows.index[rows[column].str.startswith("not ")])
        return Verdict(UNTESTABLE, f"not testable here: no experiment rows of {', '.join(which)}")
    parts = [HOLDS if rows.at[n, column] in wanted else FAILS for n in names]
    described = []
    for name in names:
        text = f"{name} {rows.at[name, column]}"
        if column == "relevance_shape":
            text += (
                f" (peak {number(rows.at[name, 'relevance_peak_at'])}, drops "
                f"{number(rows.at[name, 'relevance_drop_start'])} / "
                f"{number(rows.at[name, 'relevance_drop_end'])})"
            )
        else:
            text += f" (change {number(rows.at[name, 'similarity_change'])})"
        described.append(text)
    return Verdict(combine(parts), "; ".join(described))


def relevance_names(ctx: Context, names) -> list[str]:
    table = ctx.run.relevance
    held = set() if table is None else set(table["measure"])
    return [n for n in names if n in held] or list(names)


def relevance_inverted_u(ctx: Context) -> Verdict:
    if ctx.run.relevance is None:
        return Verdict(UNTESTABLE, "not testable here: no relevance experiment")
    names = relevance_names(ctx, measures.FAIR_PUF)
    names += [n for n in measures.FAIR_EXISTING if n.startswith("SD-")]
    return _shape_verdict(ctx, names, "relevance_shape", ("inverted U",))


def relevance_rise(ctx: Context) -> Verdict:
    if ctx.run.relevance is None:
        return Verdict(UNTESTABLE, "not testable here: no relevance experiment")
    names = [n for n in measures.FAIR_EXISTING if n.startswith("Gini-")] + ["PEU"]
    return _shape_verdict(ctx, names, "relevance_shape", ("rising",))


def relevance_flat(ctx: Context) -> Verdict:
    if ctx.run.relevance is None:
        return Verdict(UNTESTABLE, "not testable here: no relevance experiment")
    return _shape_verdict(ctx, [PAPER_MME, "UF"], "relevance_shape", ("flat",))


def skew_falls(ctx: Context) -> Verdict:
    table = ctx.run.similarity
    if table is None:
        return Verdict(UNTESTABLE, "not testable here: no similarity experiment")
    labels = table["measure"].unique()
    puf, seen = [], set()
    for name in ctx.held(measures.FAIR_PUF):  # one PUF per score: the experiment's PUF-S
        label = experiment_name(name, labels)
        if label not in seen:
            seen.add(label)
            puf.append(name)
    falling = _shape_verdict(ctx, puf + ["UF"], "similarity_trend", ("falls",))
    sd = [n for n in measures.FAIR_EXISTING if n.startswith("SD-")]
    flat = _shape_verdict(ctx, sd, "similarity_trend", ("flat",))
    return Verdict(combine([falling.verdict, flat.verdict]), f"{falling.evidence}; {flat.evidence}")


def extreme_mostfair(ctx: Context) -> Verdict:
    table = ctx.run.extreme
    if table is None:
        return Verdict(UNTESTABLE, "not testable here: no extreme-case experiment")
    fair = table[table["assignment"] == "MostFair"]
    puf = fair[fair["measure"] == "PUF"]["value"].to_numpy(float)
    uf = fair[fair["measure"] == "UF"]["value"].to_numpy(float)
    if not puf.size or not uf.size:
        return Verdict(UNTESTABLE, "not testable here: the experiment lacks PUF or UF")
    parts = [
        HOLDS if np.nanmax(puf) <= NEAR_ZERO else FAILS,
        HOLDS if np.nanmin(uf) >= UF_HIGH else FAILS,
        HOLDS if np.nanmax(uf) - np.nanmin(uf) <= FLAT else FAILS,
    ]
    evidence = (
        f"MostFair PUF max {number(np.nanmax(puf))}; MostFair UF "
        f"{number(np.nanmin(uf))}-{number(np.nanmax(uf))}"
    )
    return Verdict(combine(parts), evidence)


def puf_cheaper(ctx: Context) -> Verdict:
    puf = ctx.held(measures.FAIR_PUF)
    stop = _needs(ctx, list(EXPENSIVE)) or (None if puf else _needs(ctx, ["PUF"]))
    if stop:
        return stop
    seconds = ctx.run.seconds
    wins, lines = [], []
    for model in ctx.run.models:
        own = seconds.get(model, {})
        slowest = max(float(own.get(p, math.nan)) for p in puf)
        fastest = min(float(own.get(e, math.nan)) for e in EXPENSIVE)
        if np.isfinite(slowest) and np.isfinite(fastest):
            wins.append(slowest < fastest)
            lines.append(f"{model} {number(slowest)} s vs {number(fastest)} s")
    if not wins:
        return Verdict(UNTESTABLE, "not testable here: no timings in the measures files")
    share = sum(wins) / len(wins)
    verdict = HOLDS if share == 1 else (FAILS if share == 0 else UNDECIDED)
    return Verdict(
        verdict,
        f"slowest PUF vs fastest of {'/'.join(EXPENSIVE)} per model: {'; '.join(lines)}",
    )


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    text: str
    threshold: str
    paper: str
    check: Callable[[Context], Verdict]


CLAIMS = (
    Claim("mme-range-smallest", "4.2",
          "MME's observed range across the models is the smallest of the Fair measures and "
          "below 5.2e-3 (the paper's MME: its printed row is the mean envy, "
          f"{PAPER_MME} here)",
          f"range({PAPER_MME}) < {MME_RANGE:g} and < every other Fair measure's range "
          "(per-draw differences)",
          "MME <= 5.2e-3 on every dataset", mme_range_smallest),
    Claim("gini-peu-widest", "4.2", "Gini and PEU have the widest observed ranges",
          "min range of Gini-*, PEU > max range of the other Fair measures",
          "widest observed ranges: Gini and PEU", gini_peu_widest),
    Claim("puf-disagrees-eff", "4.3",
          "every PUF variant disagrees with every Eff measure",
          f"tau <= {PUF_EFF_TAU} for every PUF x Eff pair",
          "tau <= -0.71; Lastfm tau in [-0.71, -0.33]", puf_disagrees_eff),
    Claim("no-fair-equivalent-eff", "4.3",
          "no Fair measure is equivalent to an Eff measure",
          f"|tau| < {EQUIVALENT_TAU} for every Fair x Eff pair",
          "no |tau| >= 0.9 consistently over the datasets", no_fair_equivalent_eff),
    Claim("sd-aligns-puf", "4.3",
          "SD is the only existing Fair measure that aligns with PUF",
          f"tau >= {SD_PUF_TAU} for every SD x PUF pair, < {SD_PUF_TAU} for every other "
          "existing Fair x PUF pair",
          "SD tau >= 0.62; the rest tau in [-1, 0.24]", sd_aligns_puf),
    Claim("uf-puf-differ", "4.3", "UF and PUF never pick the same fairest model",
          "no PUF variant's fairest model is UF's, in at least the interval level's share "
          "of the draws",
          "never the same fairest model", uf_puf_differ),
    Claim("relevance-inverted-u", "4.4",
          "PUF and SD draw an inverted U over the share of users with zero relevance",
          f"shape 'inverted U': interior peak, both ends > {FLAT} below it, monotone on "
          f"each side within {FLAT}",
          "inverted parabolas; maximum unfairness expected near 50 %", relevance_inverted_u),
    Claim("relevance-rise", "4.4", "Gini and PEU rise as effectiveness drops",
          f"shape 'rising': ends differ by > {FLAT}, no step falls by more than {FLAT}",
          "Gini and PEU notably become less fair", relevance_rise),
    Claim("relevance-flat", "4.4",
          f"MME (the paper's: {PAPER_MME} here) and UF stay flat as effectiveness drops",
          f"shape 'flat': span <= {FLAT}",
          "MME and UF almost invariant", relevance_flat),
    Claim("skew-falls", "4.5",
          "PUF and UF fall as similarity skewness rises while SD stays constant",
          f"least-squares change over the skewness range < -{FLAT} (PUF, UF); |change| <= "
          f"{FLAT} (SD)",
          "PUF and UF fairer as skewness rises; SD constant", skew_falls),
    Claim("extreme-mostfair", "4.5",
          "MostFair PUF is near 0 while UF stays high and flat",
          f"MostFair PUF <= {NEAR_ZERO} at every step; MostFair UF >= {UF_HIGH}, span <= "
          f"{FLAT}",
          "PUF close to 0; UF constantly about 0.8", extreme_mostfair),
    Claim("puf-cheaper", "4.2", "PUF takes less time than ME, MME, PEU and UF",
          "every PUF variant's seconds < each of ME, MME, PEU, UF for every model "
          "(mixed over the models: undecided)",
          "Table 3: PUF < 40 s, the others > 4 min", puf_cheaper),
)  # fmt: skip


def check(run: DatasetRun, properties: pd.DataFrame, taus: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of :data:`CLAIMS` for one dataset (:data:`COLUMNS`)."""
    ctx = Context(run, properties.set_index("measure"), taus)
    rows = []
    for claim in CLAIMS:
        verdict = claim.check(ctx)
        rows.append({
            "claim": claim.id, "dataset": run.dataset, "section": claim.section,
            "verdict": verdict.verdict, "evidence": verdict.evidence,
            "threshold": claim.threshold, "paper": claim.paper, "text": claim.text,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def across(table: pd.DataFrame) -> pd.DataFrame:
    """Per claim, on how many datasets each verdict came: claim, datasets, holds, and a
    line ("holds on 1 of 2 datasets (ml-100k); undecided on lastfm")."""
    rows = []
    for claim, group in table.groupby("claim", sort=False):
        held = list(group.loc[group["verdict"] == HOLDS, "dataset"])
        line = f"holds on {len(held)} of {len(group)} dataset" + ("" if len(group) == 1 else "s")
        line += f" ({', '.join(held)})" if held else ""
        for verdict in (FAILS, UNDECIDED, UNTESTABLE):
            names = list(group.loc[group["verdict"] == verdict, "dataset"])
            if names:
                line += f"; {verdict} on {', '.join(names)}"
        rows.append({"claim": claim, "datasets": len(group), "holds": len(held), "line": line})
    return pd.DataFrame(rows, columns=["claim", "datasets", "holds", "line"])
