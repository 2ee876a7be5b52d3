"""Inference over replicates and users (userfair.bootstrap.replicates): a hand-worked case, the
closed-form variance against the two-level draws themselves, R = 1 = the users-only
inference of ``userfair.bootstrap.inference``, the comparisons and Holm, and a short coverage
simulation (benchmarks/replicates_coverage.py with fewer experiments)."""

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from userfair.bootstrap import inference, replicates

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import replicates_coverage  # noqa: E402

Y = np.array([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0], [2.0, 3.0, 7.0]])  # (R = 3, B = 3)
FULL = np.array([2.0, 4.0, 3.0])


def test_moments_hand_worked():
    m = replicates.moments(Y, FULL)
    # value: mean(2, 4, 3) = 3. Replicate means per resample 2, 3, 5: variance 7/3 (users).
    # Per resample the variance over replicates (ddof 1): 1, 1, 4, mean 2, over R: 2/3.
    # Interaction: y minus the replicate means, per replicate (-1, -1, -2), (1, 1, 0),
    # (0, 0, 2), variances 1/3, 1/3, 4/3, mean 2/3, times R / (R - 1): 1, over R: 1/3.
    # Training: 2/3 - 1/3 = 1/3.
    assert m["value"] == 3.0
    assert m["var_training"] == pytest.approx(1 / 3)
    assert m["var_users"] == pytest.approx(7 / 3)
    # df = (8/3)^2 / ((2/3)^2 / 2) = 32
    assert m["df"] == pytest.approx(32.0)
    low, high = replicates.t_interval(m, 0.95)
    half = 2.0369 * math.sqrt(8 / 3)  # t_{32, 0.975} = 2.0369 (tables)
    assert (low, high) == pytest.approx((3 - half, 3 + half), abs=1e-4)
    nested = replicates.moments(Y, FULL, nested=True)
    # variance of 2, 4, 3 (ddof 1) = 1, over R: 1/3, df = R - 1 = 2
    assert (nested["var_training"], nested["var_users"], nested["df"]) == pytest.approx(
        (1 / 3, 0.0, 2.0)
    )


def test_variance_shares_hand_worked():
    resamples, points = replicates.stack(
        [pd.DataFrame({"P": row}) for row in Y], [{"P": v} for v in FULL]
    )
    table = replicates.variance({"A": resamples}, {"A": points}, measures=["P"]).iloc[0]
    # within replicate (ddof 1): 1, 1, 7 -> 3; between replicates per resample: 1, 1, 4 -> 2
    assert (table.var_users, table.var_training, table.share_training) == pytest.approx(
        (3.0, 2.0, 0.4)
    )


def test_nested_variance_shares_hand_worked():
    # a split per replicate: the full-data values 0, 6, 3 spread with variance 9 (ddof 1),
    # of which the users' part is the mean within-replicate variance 3: training 6, 2/3
    resamples, points = replicates.stack(
        [pd.DataFrame({"P": row}) for row in Y], [{"P": v} for v in (0.0, 6.0, 3.0)]
    )
    table = replicates.variance({"A": resamples}, {"A": points}, ["P"], nested=True).iloc[0]
    assert (table.var_users, table.var_training, table.share_training) == pytest.approx(
        (3.0, 6.0, 2 / 3)
    )
    # less spread than the users alone explain: no training share, not a negative one
    resamples, points = replicates.stack(
        [pd.DataFrame({"P": row}) for row in Y], [{"P": v} for v in FULL]
    )
    table = replicates.variance({"A": resamples}, {"A": points}, ["P"], nested=True).iloc[0]
    assert (table.var_users, table.var_training, table.share_training) == (3.0, 0.0, 0.0)


def test_nested_variance_against_a_direct_loop():
    rng = np.random.default_rng(11)
    r, b = 5, 30
    y = rng.normal(size=(r, b)) * rng.uniform(0.5, 2.0, size=(r, 1)) + rng.normal(size=(r, 1))
    full = y.mean(axis=1) + rng.normal(size=r)
    resamples, points = replicates.stack(
        [pd.DataFrame({"P": row}) for row in y], [{"P": v} for v in full]
    )
    table = replicates.variance({"A": resamples}, {"A": points}, ["P"], nested=True).iloc[0]
    within = []
    for row in y:
        centre = sum(row) / b
        within.append(sum((v - centre) ** 2 for v in row) / (b - 1))
    var_users = sum(within) / r
    centre = sum(full) / r
    spread = sum((v - centre) ** 2 for v in full) / (r - 1)
    var_training = max(0.0, spread - var_users)
    assert table.var_users == pytest.approx(var_users, rel=1e-12)
    assert table.var_training == pytest.approx(var_training, rel=1e-12)
    assert table.share_training == pytest.approx(var_training / (var_training + var_users))


@pytest.mark.parametrize("nested", [False, True])
def test_closed_form_variance_is_the_variance_of_the_draws(nested):
    rng = np.random.default_rng(3)
    y = rng.normal(size=(4, 50)) + rng.normal(size=(4, 1))
    if not nested:
        y += rng.normal(size=(1, 50))  # shared users: a user-resample effect common to all
    rows, users = replicates.draw_indices(4, 50, 400_000, seed=1, nested=nested)
    drawn = replicates.draws(y, rows, users)
    m = replicates.moments(y, y.mean(axis=1), nested)
    if nested:  # replicate level only: the variance of the replicates' means over R
        assert np.var(drawn) == pytest.approx(m["var_training"], rel=0.02)
    else:  # the draws hold the interaction twice (replicate and user level), moments once
        between = np.var(y, axis=0, ddof=1).mean() / 4
        assert np.var(drawn) == pytest.approx(between + m["var_users"], rel=0.02)
        assert m["var_training"] < between


def frames(rng, models, r, b=40, shift=None):
    """Random (resamples, points) of several models over R replicates and B resamples."""
    shift = shift or {}
    out_r, out_p = {}, {}
    for model in models:
        base = rng.normal(size=(r, b, 3)) * 0.1 + shift.get(model, 0.0)
        fr = [pd.DataFrame(base[i], columns=["P", "ME", "UF"]) for i in range(r)]
        pts = [dict(zip(["P", "ME", "UF"], base[i].mean(axis=0))) for i in range(r)]
        out_r[model], out_p[model] = replicates.stack(fr, pts)
    return out_r, out_p


def test_one_replicate_is_the_users_only_inference():
    rng = np.random.default_rng(0)
    resamples, points = frames(rng, ["A", "B", "C"], r=1)
    single = {m: resamples[m].xs(0, level="replicate") for m in resamples}
    full = {m: points[m].iloc[0].to_dict() for m in points}
    measures = ["P", "ME", "UF"]
    ours = replicates.summary(resamples, points, 0.9, measures)
    theirs = inference.summary(single, full, 0.9, measures)
    pd.testing.assert_frame_equal(ours[["model", "measure", "value", "low", "high"]], theirs)
    ours = replicates.significance(resamples, points, 0.9, measures)
    theirs = inference.significance(single, full, 0.9, measures)
    for column in ("difference", "low", "high", "p", "p_holm", "significant"):
        assert ours[column].tolist() == pytest.approx(theirs[column].tolist()), column
    ours = replicates.tau_intervals(resamples, points, 0.9, measures)
    pd.testing.assert_frame_equal(ours, inference.tau_intervals(single, full, 0.9, measures))


def test_comparisons_and_holm():
    rng = np.random.default_rng(1)
    resamples, points = frames(rng, ["A", "B", "C"], r=3, shift={"C": 1.0})
    resamples["A2"], points["A2"] = resamples["A"], points["A"]
    table = replicates.significance(resamples, points, 0.95, ["P"])
    same = table[(table.model_a == "A") & (table.model_b == "A2")].iloc[0]
    assert (same.difference, same.p, same.p_holm, same.significant) == (0.0, 1.0, 1.0, False)
    far = table[(table.model_a == "A") & (table.model_b == "C")].iloc[0]
    assert far.difference == pytest.approx(1.0, abs=0.2) and far.significant
    assert far.low < far.difference < far.high
    expected = inference.holm(table.p.to_numpy())
    assert table.p_holm.to_numpy() == pytest.approx(expected)
    tau = replicates.tau_intervals(resamples, points, 0.95, ["P", "ME", "UF"], n_draws=200)
    assert len(tau) == 9 and tau[tau.measure_a == tau.measure_b].tau.eq(1.0).all()


def test_inputs_checked():
    with pytest.raises(ValueError, match="one full-data value per replicate"):
        replicates.stack([pd.DataFrame({"P": [1.0, 2.0]})], [])
    with pytest.raises(ValueError, match="same resamples"):
        replicates.stack(
            [pd.DataFrame({"P": [1.0]}), pd.DataFrame({"P": [1.0, 2.0]})], [{"P": 1}, {"P": 1}]
        )
    rng = np.random.default_rng(2)
    resamples, points = frames(rng, ["A"], r=3)
    other, other_points = frames(rng, ["B"], r=2)
    with pytest.raises(ValueError, match="model 'B'"):
        replicates.summary({**resamples, **other}, {**points, **other_points})


def test_coverage_simulation_short():
    """150 experiments (the benchmark runs 500 per cell): with a seed effect 4 times the
    users' standard error and R = 3, today's users-only interval covers about a third of the
    time, the two-level t interval about 95 % (SE 1.8 points at 150 experiments)."""
    result = replicates_coverage.cell(150, 3, 4.0, False, m=100, resamples=200, n_draws=500)
    assert result["two-level t"] >= 0.90
    assert result["users, one run"] <= 0.6 and result["users, mean of R"] <= 0.8
    assert result["A = B rejected, two-level"] <= 0.10
    assert result["A = B rejected, users, one run"] >= 0.5


def test_identical_replicates_have_no_training_variance():
    """A model without a seed: its R replicates are replicate 0 (the same lists), so the
    training variance is exactly 0, not rounding, and the inference is the users-only one
    with a normal quantile (df infinite)."""
    y = np.tile(Y[:1] / 3.0, (3, 1))  # values whose mean over 3 rounds
    m = replicates.moments(y, np.full(3, 2.0 / 3.0))
    assert (m["var_training"], m["df"], m["value"]) == (0.0, math.inf, 2.0 / 3.0)
    resamples, points = replicates.stack(
        [pd.DataFrame({"P": row}) for row in y], [{"P": 2.0 / 3.0}] * 3
    )
    table = replicates.variance({"A": resamples}, {"A": points}, measures=["P"]).iloc[0]
    assert (table.var_training, table.share_training) == (0.0, 0.0)
