"""Bootstrap resamples of the opt-in measures (``userfair.opt_in.variants``), as
``userfair.bootstrap.uncertainty.bootstrap`` gives them for the 18 (docs/method.md#uncertainty): the
same multiplicity weights, gNDCG's mean, SD and Gini weighted, and every PUF variant over
the pairs of distinct copies of distinct users on the dataset-level min-max normalised
similarity, all B resamples of a pair sum in one matrix product per row block
(``uncertainty.pair_sums``). Dense: holds one (m, m) similarity at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from userfair.bootstrap import uncertainty
from userfair.formulas import spread
from userfair.formulas.spread import Draws
from userfair.measures import PUF_SCORES, puf_name, statistics
from userfair.opt_in import variants
from userfair.similarity import registry
from userfair.similarity.pairwise import BLOCK_SIZE


def _gap_rows(sim: np.ndarray, scores: list[np.ndarray]):
    """Rows start:stop, columns start:m of sim * |S_u - S_v| for each score."""

    def rows(start, stop, out):
        gap = np.empty((stop - start, sim.shape[0] - start))
        for c, score in enumerate(scores):
            np.subtract(score[start:stop, None], score[None, start:], out=gap)
            np.abs(gap, out=gap)
            np.multiply(sim[start:stop, start:], gap, out=out[c])

    return rows


def bootstrap_variants(
    inputs,
    weights,
    k: int = 10,
    names: Sequence[str] = (),
    vectors: np.ndarray | None = None,
    block_size: int = BLOCK_SIZE,
) -> pd.DataFrame:
    """The opt-in measures ``variants.names_of(inputs, names)`` of every resample: one row
    per row of ``weights`` ((B, m) multiplicities, ``uncertainty.resample_weights``), index
    ``resample``. All-ones weights give ``variants.evaluate_variants``' values."""
    m = len(inputs.users)
    weights = np.asarray(weights, dtype=np.int64).reshape(-1, m)
    w = weights.astype(np.float64)
    total = w.sum(axis=1)
    ordered = total**2 - (w**2).sum(axis=1)
    wanted = variants.names_of(inputs, names)
    scores = variants.per_user_scores(inputs, k)
    out: dict[str, np.ndarray] = {}
    if inputs.grades is not None:
        g = scores["gNDCG"]
        with np.errstate(divide="ignore", invalid="ignore"):
            out["gNDCG"] = np.where(total > 0, w @ g / total, np.nan)
        draws = Draws(weights, w, total)
        for measure in statistics(("gNDCG",), "bootstrap"):  # SD, Gini of gNDCG
            out[measure.name] = spread.of(measure).weighted(g, draws)
    data = registry.SimilarityData.of(inputs, vectors)
    for name in variants.chosen(inputs, names):
        label = registry.REGISTRY[name].label
        chosen = [s for s in PUF_SCORES if puf_name(s, label) in wanted]
        if not chosen:
            continue
        sim = variants.dense_similarity(registry.block_function(name, data), m, block_size)
        rows = _gap_rows(sim, [scores[s] for s in chosen])
        sums = uncertainty.pair_sums(w, rows, len(chosen), m, block_size, None)
        del sim
        with np.errstate(divide="ignore", invalid="ignore"):
            for score, row in zip(chosen, sums):
                out[puf_name(score, label)] = np.where(ordered > 0, row / ordered, np.nan)
    frame = pd.DataFrame({key: out[key] for key in wanted}, columns=list(wanted))
    frame.index = pd.RangeIndex(weights.shape[0], name="resample")
    return frame
