"""Every measure's properties (userfair.workflow.properties, docs/analyses.md#properties)
on synthetic runs: the shapes of the experiments' curves with their tolerance, stability,
discriminative power and cost, a row for a measure the paper never saw, the report's first
page and the `userfair claims` command."""

import numpy as np
import pandas as pd
import pytest

from userfair import measures
from userfair.cli import main as cli_main
from userfair.workflow import claims, front_page, properties
from userfair.workflow.properties import FLAT, curve_shape, trend

from test_claims import MODELS, make_run

X = np.linspace(0, 1, 11)


@pytest.mark.parametrize(
    ("y", "shape"),
    [
        (0.4 * (1 - (2 * X - 1) ** 2), "inverted U"),
        (0.4 * (2 * X - 1) ** 2, "U"),
        (0.5 * X, "rising"),
        (0.5 - 0.5 * X, "falling"),
        (0.3 + 0.9 * FLAT * X, "flat"),
        (0.3 + 1.1 * FLAT * X, "rising"),
        (0.3 + 0.3 * np.sin(6 * np.pi * X), "other"),
        (np.where(X < 1, 0.5 * X, np.nan), "rising"),  # Gini's undefined last point left out
    ],
)
def test_curve_shape(y, shape):
    assert curve_shape(X, y)["shape"] == shape


def test_curve_shape_reports_the_peak_and_the_drops():
    got = curve_shape(X, 0.4 * (1 - (2 * X - 1) ** 2) + 0.1 * (X < 0.05))
    assert got["peak_at"] == pytest.approx(0.5) and got["drop_end"] == pytest.approx(0.4)
    assert got["drop_start"] == pytest.approx(0.3)


def test_trend_is_the_fitted_change_over_the_range():
    skew = np.array([-2.0, 0.0, 1.0, 4.0])
    assert trend(skew, 1 - 0.1 * skew) == pytest.approx(
        {"slope": -0.1, "change": -0.6, "trend": "falls"}
    )
    assert trend(skew, 0.5 + FLAT / 12 * skew)["trend"] == "flat"


def test_swap_rate_and_discriminative_power():
    run = make_run({"SD-P": [0.1, 0.2, 0.3, 0.4, 0.5]}, draws=400, noise=0.001)
    row = properties.measure_properties(run).set_index("measure").loc["SD-P"]
    assert row["swap_rate"] == 0 and row["discriminative_power"] == 1 and row["pairs"] == 10
    # two models 0.0002 apart under noise 0.05: about half the draws swap them
    close = make_run({"SD-P": [0.3, 0.3002, 0.9, 0.9, 0.9]}, draws=400, noise=0.05)
    row = properties.measure_properties(close).set_index("measure").loc["SD-P"]
    assert 0.02 < row["swap_rate"] < 0.6 and row["discriminative_power"] < 1
    assert row["ties"] == 3 and row["range_models_low"] <= row["range_models"]


def test_replicate_swap_rate():
    run = make_run()
    values = {0: [0.1, 0.2], 1: [0.2, 0.1], 2: [0.1, 0.3], 3: [0.1, 0.4]}
    run.points = {m: run.points[m] for m in MODELS[:2]}
    run.replicates = {
        r: {m: {"SD-P": v[i]} for i, m in enumerate(MODELS[:2])} for r, v in values.items()
    }
    assert properties.replicate_swap_rate(run, "SD-P") == 0.25


def test_cost_is_seconds_per_thousand_users():
    run = make_run(seconds={n: 2.0 for n in measures.NAMES})
    assert properties.cost(run, "UF") == pytest.approx(1000 * 2.0 / 100)


def test_a_measure_the_paper_never_saw_gets_its_row_and_its_answers():
    run = make_run({"PUF-P-RCos": [0.1, 0.2, 0.3, 0.4, 0.5], "MyFair": [1, 2, 3, 4, 5]})
    table = properties.measure_properties(run).set_index("measure")
    assert {"PUF-P-RCos", "MyFair"} <= set(table.index)
    assert list(table.index[: len(measures.NAMES)]) == list(measures.NAMES)
    rcos = table.loc["PUF-P-RCos"]
    assert rcos["declared"] and rcos["group"] == "Fair"
    assert rcos["similarity_trend"] == "falls"  # the experiment's PUF-P
    assert np.isfinite(rcos["tau_eff_min"]) and rcos["theory_high"] == 1
    mine = table.loc["MyFair"]
    assert not mine["declared"] and mine["range_models"] == 4
    assert mine["similarity_trend"] == "not in the experiment"
    page = front_page.render(
        [run], table.reset_index(), claims.check(run, table.reset_index(), _taus(run)),
        claims.across(claims.check(run, table.reset_index(), _taus(run))), RUN,
    )  # fmt: skip
    assert "Measures the paper never saw" in page
    assert "sensitive to the similarity distribution (Fig. 3): yes" in page


def _taus(run):
    return properties.tau_table(run, run.measure_names())


RUN = {"seed": 3, "replicates": 1, "resamples": 0, "level": 0.95, "grid": "g.yaml", "epochs": 2}


def test_the_first_page_says_what_ran_the_verdicts_and_the_best_models():
    run = make_run({"UF": [0.5, 0.1, 0.5, 0.5, 0.5]}, draws=50, noise=0.001)
    table = properties.measure_properties(run)
    verdicts = claims.check(run, table, _taus(run))
    page = front_page.render([run], table, verdicts, claims.across(verdicts), RUN)
    assert "1 dataset: toy (100 evaluated users)" in page and "seed 3" in page
    assert "5 models: A, B, C, D, E" in page and "at most 2 epochs" in page
    for claim in claims.CLAIMS:
        assert f"   * - {claim.id}\n     - toy\n" in page
    best = page[page.index("The best model per measure on toy") :]
    assert "   * - UF\n     - B\n" in best and "best in 100% of 50 draws" in best
    assert "across the datasets" not in page  # one dataset: no across table


def test_userfair_claims_prints_one_line_a_claim(tmp_path, capsys):
    table = pd.DataFrame(
        {
            "claim": ["sd-aligns-puf", "sd-aligns-puf", "puf-cheaper", "puf-cheaper"],
            "dataset": ["x", "y", "x", "y"],
            "verdict": [claims.HOLDS, claims.UNDECIDED, claims.FAILS, claims.UNTESTABLE],
            "evidence": ["e1", "e2", "e3", "not testable here: why"],
            "text": ["SD aligns", "SD aligns", "PUF cheaper", "PUF cheaper"],
        }
    )
    (tmp_path / "results" / "tables").mkdir(parents=True)
    table.to_csv(tmp_path / "results" / "tables" / "claims.csv", index=False)
    assert cli_main(["claims", str(tmp_path), "--color", "never"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("✔ holds") and "sd-aligns-puf" in out[0] and "[e1]" in out[0]
    assert out[2].startswith("✘ does not hold") and "\033[" not in "".join(out)
    assert "sd-aligns-puf  holds on 1 of 2 datasets (x)" in out
    assert out[-1] == "4 verdicts: 1 holds, 1 does not hold, 1 undecided, 1 not testable"
    assert cli_main(["claims", str(tmp_path), "--color", "always"]) == 0
    assert "\033[32m✔ holds" in capsys.readouterr().out


def test_userfair_claims_without_a_run_says_what_to_do(tmp_path, capsys):
    assert cli_main(["claims", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("userfair: error: ") and "no claims table; run the workflow" in err
    assert len(err.splitlines()) == 1
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    assert cli_main(["claims", str(bad)]) == 2
    assert "not a claims table (no column claim" in capsys.readouterr().err
