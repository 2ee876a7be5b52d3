"""The artificial experiments (Figs. 2-4 and the gamma appendix, docs/analyses.md).

Each experiment returns a long, tidy frame (one measure value per row) that the workflow
saves before any plotting. Every random choice comes from a ``numpy`` generator seeded by
the caller, so a rerun reproduces every number. The measures are those of
:mod:`userfair.formulas.fairness` and :mod:`userfair.formulas.effectiveness`; nothing is
re-implemented here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import skew

from userfair import measures
from userfair.engine import generic_routes
from userfair.files.inputs import Inputs
from userfair.formulas import effectiveness, fairness, spread
from userfair.similarity import pairwise

log = logging.getLogger(__name__)

STEPS = np.round(np.linspace(0.0, 1.0, 11), 2)  # share of users with k non-relevant items


@dataclass(frozen=True)
class Settings:
    """What every experiment needs besides its data."""

    k: int = 10
    epsilon: float = 0.05
    block_size: int = 2048
    device: str = "cpu"
    envy_utility: str = "precision"


# --- Fig. 2: varying relevance ---------------------------------------------------------


@dataclass(frozen=True)
class RelevanceLists:
    """Per evaluated user a list of k items that starts with its relevant (test) items and
    one of k non-relevant items, and the random order in which users lose relevance."""

    relevant_lists: np.ndarray  # (m, k) item indices
    irrelevant_lists: np.ndarray  # (m, k) item indices
    order: np.ndarray  # (m,) a permutation of the users

    def at(self, share: float) -> np.ndarray:
        """The lists when the first ``share`` of ``order`` gets non-relevant items."""
        lists = self.relevant_lists.copy()
        switched = self.order[: switched_count(share, len(self.order))]
        lists[switched] = self.irrelevant_lists[switched]
        return lists


def switched_count(share: float, m: int) -> int:
    return int(round(share * m))


def relevance_lists(
    relevant: sp.csr_matrix, train_rows: sp.csr_matrix, k: int, rng: np.random.Generator
) -> RelevanceLists:
    """Build the lists of Fig. 2 (docs/analyses.md#fig-2-varying-relevance).

    A user with more than k test items gets k of them at random; one with fewer gets all of
    them first, then random items that are neither relevant nor in its train history. The
    non-relevant list holds k random items outside the user's test and train items.
    """
    relevant, train_rows = sp.csr_matrix(relevant), sp.csr_matrix(train_rows)
    m, n_items = relevant.shape
    good = np.empty((m, k), dtype=np.int64)
    bad = np.empty((m, k), dtype=np.int64)
    for u in range(m):
        rel = relevant.indices[relevant.indptr[u] : relevant.indptr[u + 1]]
        seen = np.union1d(rel, train_rows.indices[train_rows.indptr[u] : train_rows.indptr[u + 1]])
        if n_items - len(seen) < k:
            raise ValueError(
                f"user row {u}: only {n_items - len(seen)} items are neither relevant nor "
                f"in train, fewer than k={k}; the relevance experiment needs k of them"
            )
        if len(rel) >= k:
            good[u] = rng.choice(rel, size=k, replace=False)
        else:
            fill = _sample_outside(seen, n_items, k - len(rel), rng)
            good[u] = np.concatenate([rng.permutation(rel), fill])
        bad[u] = _sample_outside(seen, n_items, k, rng)
    return RelevanceLists(good, bad, rng.permutation(m))


def _sample_outside(
    excluded: np.ndarray, n_items: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` distinct random items in [0, n_items) that are not in sorted ``excluded``."""
    allowed = np.setdiff1d(np.arange(n_items), excluded, assume_unique=True)
    return rng.choice(allowed, size=size, replace=False)


def relevance_measures(
    topk: np.ndarray, inputs: Inputs, sim_jacc: np.ndarray, sim_uf: np.ndarray, settings: Settings
) -> dict[str, float]:
    """P, NDCG and every Fair measure of one set of lists: PUF with the normalised Jaccard
    ``sim_jacc``, UF with the raw ``sim_uf``."""
    scores = effectiveness.per_user(topk, inputs.relevant, settings.k)
    envy = fairness.envy(
        topk,
        inputs.relevant,
        settings.k,
        settings.epsilon,
        settings.block_size,
        settings.device,
        settings.envy_utility,
    )
    out = {"P": float(np.mean(scores["P"])), "NDCG": float(np.mean(scores["NDCG"]))}
    for measure in measures.statistics(("P", "NDCG"), "experiments"):  # SD, Gini
        out[measure.name] = spread.of(measure).value(scores[measure.effectiveness])
    out.update({m.name: envy[m.name] for m in measures.envy_measures("experiments")})
    out["UF"] = fairness.uf(
        topk, inputs.train, sim_uf, settings.k, settings.block_size, settings.device
    )
    for name in ("P", "NDCG"):
        out[f"PUF-{name}-Jacc"] = fairness.puf(
            scores[name], sim_jacc, settings.block_size, settings.device
        )
    sims = PluginSimilarities(inputs, {"Jacc": sim_jacc}, settings.block_size)

    def uf(label):  # a UF-kind variant: the construction over its own raw similarity
        return fairness.uf(
            topk, inputs.train, sims.raw(label), settings.k, settings.block_size, settings.device
        )

    out.update(plugin_measures(scores, sims, uf))
    return out


class PluginSimilarities:
    """The normalised (m, m) similarity each plugin PairMeasure declares, for the
    experiments (which are dense): the ones ``given`` (Fig. 2: the dataset's Jaccard), the
    others built once from the train rows (``userfair.engine.generic_routes.dense_similarity``);
    with ``every`` set, that one matrix for every label (Fig. 3's sampled similarity)."""

    def __init__(self, inputs: Inputs, given=None, block_size: int = 2048, every=None):
        self.inputs, self.given, self.block_size, self.every = (
            inputs,
            dict(given or {}),
            block_size,
            every,
        )

    def __call__(self, label: str) -> np.ndarray:
        if self.every is not None:
            return self.every
        if label not in self.given:
            self.given[label] = generic_routes.dense_similarity(self.inputs, label, self.block_size)
        return self.given[label]

    def raw(self, label: str) -> np.ndarray:
        """The raw (m, m) similarity ``label`` (a UF-kind measure reads it), built once."""
        key = ("raw", label)
        if key not in self.given:
            self.given[key] = generic_routes.dense_raw(self.inputs, label, self.block_size)
        return self.given[key]


def plugin_measures(scores: dict[str, np.ndarray], sims, uf=None) -> dict[str, float]:
    """The measures of the generic engine (docs/plugins.md) the experiments serve, on the
    per-user ``scores`` and the similarities ``sims(label)`` (:class:`PluginSimilarities`);
    a UF-kind declaration is ``uf(label)`` (left out when None); the ones they do not serve
    (a score the experiment lacks, e.g. gNDCG) are said once (userfair.measures.unserved)."""
    names = measures.generic()
    measures.unserved("experiments", names, "left out of Figs. 2-4")
    out = {}
    for name in measures.served("experiments", names):
        declaration = measures.get(name)
        if declaration.kind == "uf":
            if uf is not None:
                out[name] = uf(declaration.similarity)
            continue
        score = scores[declaration.effectiveness]
        if declaration.kind == "pair":
            out[name] = generic_routes.pair_values(name, score, sims(declaration.similarity))
        else:
            out[name] = generic_routes.statistic_value(name, score)
    return out


def run_relevance(
    inputs: Inputs, sim_jacc: np.ndarray, sim_uf: np.ndarray, settings: Settings, seed: int
) -> pd.DataFrame:
    """Fig. 2: columns share (of users with non-relevant lists), measure, value.
    ``sim_jacc``: the normalised Jaccard (PUF); ``sim_uf``: UF's raw similarity."""
    lists = relevance_lists(
        inputs.relevant, inputs.train_of_evaluated(), settings.k, np.random.default_rng(seed)
    )
    rows = []
    for share in STEPS:
        log.info("relevance: %.0f%% of users with non-relevant lists", 100 * share)
        for measure, value in relevance_measures(
            lists.at(share), inputs, sim_jacc, sim_uf, settings
        ).items():
            rows.append((float(share), measure, float(value)))
    return pd.DataFrame(rows, columns=["share", "measure", "value"])


# --- Fig. 3: varying similarity --------------------------------------------------------


def pair_count(m: int) -> int:
    return m * (m - 1) // 2


def sample_similarities(
    distribution: str, shape: float | None, n_pairs: int, rng: np.random.Generator
) -> np.ndarray:
    """``n_pairs`` samples of Weibull(shape) or N(0, 1), min-max normalised to [0, 1]."""
    if distribution == "weibull":
        samples = rng.weibull(shape, n_pairs)
    elif distribution == "normal":
        samples = rng.standard_normal(n_pairs)
    else:
        raise ValueError(f"unknown distribution {distribution!r}; expected weibull or normal")
    return min_max_vector(samples)


def min_max_vector(values: np.ndarray) -> np.ndarray:
    """(v - min) / (max - min) of a vector of pair values; all zeros when every value is
    equal (the vector form of ``pairwise.min_max``)."""
    values = np.asarray(values, dtype=float)
    span = values.max() - values.min() if values.size else 0.0
    return np.zeros_like(values) if span == 0 else (values - values.min()) / span


def pairs_to_matrix(pair_values: np.ndarray, m: int) -> np.ndarray:
    """Symmetric (m, m) matrix with ``pair_values`` on the unordered pairs (upper triangle
    in row-major order) and 0 on the diagonal, like :mod:`userfair.similarity.pairwise`."""
    if len(pair_values) != pair_count(m):
        raise ValueError(f"{len(pair_values)} pair values for {m} users; expected {pair_count(m)}")
    matrix = np.zeros((m, m))
    upper = np.triu_indices(m, 1)
    matrix[upper] = pair_values
    matrix[upper[1], upper[0]] = pair_values
    return matrix


def matrix_to_pairs(matrix: np.ndarray) -> np.ndarray:
    return np.asarray(matrix)[np.triu_indices(len(matrix), 1)]


def similarity_measures(
    topk: np.ndarray,
    inputs: Inputs,
    sim: np.ndarray,
    scores: dict[str, np.ndarray],
    settings: Settings,
    sim_uf: np.ndarray | None = None,
) -> dict[str, float]:
    """The measures of Fig. 3 for one similarity matrix ``sim``; UF reads ``sim_uf`` when
    given (the dataset's raw Jaccard beside its normalised one), else ``sim``."""
    out = {f"SD-{name}": spread.sd(scores[name]) for name in ("P", "NDCG")}
    out["UF"] = fairness.uf(
        topk,
        inputs.train,
        sim if sim_uf is None else sim_uf,
        settings.k,
        settings.block_size,
        settings.device,
    )
    for name in ("P", "NDCG"):
        out[f"PUF-{name}"] = fairness.puf(scores[name], sim, settings.block_size, settings.device)
    # plugins: a PairMeasure reads the sampled similarity in place of its own, as PUF does;
    # a UF-kind variant reads what UF reads, so its value is UF's
    out.update(plugin_measures(scores, PluginSimilarities(inputs, every=sim), lambda _: out["UF"]))
    return out


def run_similarity(
    inputs: Inputs,
    jaccard: pairwise.Similarity,
    weibull_shapes: list[float],
    settings: Settings,
    seed: int,
) -> pd.DataFrame:
    """Fig. 3 on the model's real lists (``inputs.topk``): columns distribution, shape,
    skewness, measure, value. The sampled similarities serve PUF and UF alike. The rows with
    distribution 'observed' use the dataset's own Jaccard (the vertical line of the figure):
    normalised for PUF, raw for UF, as in Table 2."""
    rng = np.random.default_rng(seed)
    m = len(inputs.users)
    scores = effectiveness.per_user(inputs.topk, inputs.relevant, settings.k)
    cases = [("weibull", float(shape)) for shape in weibull_shapes] + [("normal", np.nan)]
    rows = []
    for distribution, shape in cases:
        log.info("similarity: %s %s", distribution, "" if np.isnan(shape) else shape)
        pairs = sample_similarities(distribution, shape, pair_count(m), rng)
        rows += _similarity_rows(distribution, shape, pairs, inputs, scores, settings, m)
    rows += _similarity_rows(
        "observed",
        np.nan,
        matrix_to_pairs(jaccard.sim),
        inputs,
        scores,
        settings,
        m,
        sim_uf=jaccard.raw(),
    )
    return pd.DataFrame(rows, columns=["distribution", "shape", "skewness", "measure", "value"])


def _similarity_rows(distribution, shape, pairs, inputs, scores, settings, m, sim_uf=None):
    skewness = float(skew(pairs)) if np.ptp(pairs) > 0 else 0.0
    measures = similarity_measures(
        inputs.topk, inputs, pairs_to_matrix(pairs, m), scores, settings, sim_uf
    )
    return [(distribution, shape, skewness, name, float(value)) for name, value in measures.items()]


# --- Fig. 4: extreme cases -------------------------------------------------------------


def assign_by_difference(pair_sims: np.ndarray, scores: np.ndarray, most_fair: bool) -> np.ndarray:
    """Put the sorted similarities on the pairs sorted by |S(u) - S(v)|.

    MostFair gives the highest similarity to the smallest difference, MostUnfair to the
    largest. Returns the pair values in upper-triangle order; ties keep pair order.
    """
    m = len(scores)
    upper = np.triu_indices(m, 1)
    difference = np.abs(scores[upper[0]] - scores[upper[1]])
    by_difference = np.argsort(difference, kind="stable")
    ranked = np.sort(pair_sims)  # ascending
    assigned = np.empty_like(ranked)
    assigned[by_difference] = ranked[::-1] if most_fair else ranked
    return assigned


def run_extreme(
    inputs: Inputs,
    settings: Settings,
    seed: int,
    weibull_shape: float = 2.0,
    pair_sims: np.ndarray | None = None,
) -> pd.DataFrame:
    """Fig. 4: columns share, assignment (MostFair/MostUnfair), score (P/NDCG), measure
    (PUF/UF), value. The lists of each step are those of Fig. 2 (same seed). The pair
    values assigned are a Weibull(``weibull_shape``) sample, or ``pair_sims`` when given
    (m (m - 1) / 2 values, e.g. a dataset's own normalised similarity)."""
    m = len(inputs.users)
    lists = relevance_lists(
        inputs.relevant, inputs.train_of_evaluated(), settings.k, np.random.default_rng(seed)
    )
    if pair_sims is None:
        pair_sims = sample_similarities(
            "weibull", weibull_shape, pair_count(m), np.random.default_rng([seed, 4])
        )
    elif len(pair_sims) != pair_count(m):
        raise ValueError(f"{len(pair_sims)} pair values for {m} users; expected {pair_count(m)}")
    rows = []
    for share in STEPS:
        log.info("extreme: %.0f%% of users with non-relevant lists", 100 * share)
        topk = lists.at(share)
        scores = effectiveness.per_user(topk, inputs.relevant, settings.k)
        for assignment, most_fair in (("MostFair", True), ("MostUnfair", False)):
            for name in ("P", "NDCG"):
                sim = pairs_to_matrix(assign_by_difference(pair_sims, scores[name], most_fair), m)
                puf = fairness.puf(scores[name], sim, settings.block_size, settings.device)
                uf = fairness.uf(
                    topk, inputs.train, sim, settings.k, settings.block_size, settings.device
                )
                rows += [
                    (float(share), assignment, name, "PUF", float(puf)),
                    (float(share), assignment, name, "UF", float(uf)),
                ]
                rows += [
                    (float(share), assignment, name, plugin, value)
                    for plugin, value in extreme_plugins(scores, name, sim).items()
                ]
    return pd.DataFrame(rows, columns=["share", "assignment", "score", "measure", "value"])


def extreme_plugins(scores, score: str, sim: np.ndarray) -> dict[str, float]:
    """Fig. 4's plugin rows: every plugin PairMeasure of the score ``score`` on the
    similarity assigned by that score's differences (docs/plugins.md)."""
    names = measures.served("experiments", measures.generic())
    chosen = [
        n
        for n in names
        if measures.get(n).kind == "pair" and measures.get(n).effectiveness == score
    ]
    return {name: generic_routes.pair_values(name, scores[score], sim) for name in chosen}


# --- Appendix: gamma -------------------------------------------------------------------


def gamma_measures(
    topk: np.ndarray,
    inputs: Inputs,
    sim_uf: np.ndarray,
    sim_puf: np.ndarray,
    settings: Settings,
) -> dict[str, float]:
    """UF with the raw sim_UF of one gamma, and PUF (P, NDCG) with its min-max normalised
    form ``sim_puf``."""
    scores = effectiveness.per_user(topk, inputs.relevant, settings.k)
    out = {
        "UF": fairness.uf(
            topk, inputs.train, sim_uf, settings.k, settings.block_size, settings.device
        )
    }
    for name in ("P", "NDCG"):
        out[f"PUF-{name}"] = fairness.puf(
            scores[name], sim_puf, settings.block_size, settings.device
        )
    return out


def gamma_similarities(jaccard_raw, genre_sim, gamma, block_size):
    """(sim_UF, its min-max normalised copy) of one gamma."""
    sim_uf = pairwise.uf_similarity(jaccard_raw, genre_sim, gamma)
    return sim_uf, pairwise.min_max(sim_uf, block_size)


def run_gamma_models(
    runs: dict[str, Inputs],
    jaccard_raw: np.ndarray,
    genre_sim: np.ndarray,
    gammas: list[float],
    settings: Settings,
) -> pd.DataFrame:
    """Appendix, real runs: columns model, gamma, measure, value. ``jaccard_raw`` is the
    raw Jaccard, ``genre_sim`` 1 - JS."""
    rows = []
    for gamma in gammas:
        sims = gamma_similarities(jaccard_raw, genre_sim, gamma, settings.block_size)
        for model, inputs in runs.items():
            log.info("gamma %.2f: %s", gamma, model)
            for measure, value in gamma_measures(inputs.topk, inputs, *sims, settings).items():
                rows.append((model, float(gamma), measure, float(value)))
    return pd.DataFrame(rows, columns=["model", "gamma", "measure", "value"])


def run_gamma_relevance(
    inputs: Inputs,
    jaccard_raw: np.ndarray,
    genre_sim: np.ndarray,
    gammas: list[float],
    settings: Settings,
    seed: int,
) -> pd.DataFrame:
    """Appendix, the Fig. 2 lists: columns share, gamma, measure, value."""
    lists = relevance_lists(
        inputs.relevant, inputs.train_of_evaluated(), settings.k, np.random.default_rng(seed)
    )
    rows = []
    for gamma in gammas:
        sims = gamma_similarities(jaccard_raw, genre_sim, gamma, settings.block_size)
        log.info("gamma %.2f on the relevance lists", gamma)
        for share in STEPS:
            for measure, value in gamma_measures(lists.at(share), inputs, *sims, settings).items():
                rows.append((float(share), float(gamma), measure, float(value)))
    return pd.DataFrame(rows, columns=["share", "gamma", "measure", "value"])
