"""The plan's energy (userfair.workflow.energy): the power model on a hand-worked case, its
checks, and `snakemake plan` of the paper config with three replicates."""

import csv

import pytest

from userfair.workflow import costs, plan
from userfair.workflow.energy import COLUMNS, PowerModel, with_energy

from conftest import make_workdir, snakemake


def test_power_model_hand_worked():
    power = PowerModel(cpu_watts_per_core=10, gpu_watts=300, pue=1.5, grid_kg_co2e_per_kwh=0.4)
    # (3 core-h x 10 W + 1.5 GPU-h x 300 W) = 480 Wh = 0.48 kWh, x 1.5 = 0.72 kWh; x 0.4 kg
    assert power.kwh(3.0, 1.5) == pytest.approx(0.72)
    row = plan.plan_row("tune", "d", "NGCF", [costs.Request(1000, 90, 1, "measured")], 2)
    row = with_energy({**row, "cpu_hours": 3.0}, power)
    assert (row["energy_kwh"], row["co2e_kg"], row["energy_basis"]) == (0.72, 0.288, "estimated")
    assert set(COLUMNS) <= set(plan.PLAN_COLUMNS)
    with pytest.raises(ValueError, match="energy.pue must be >= 1"):
        PowerModel(pue=0.9)
    with pytest.raises(ValueError, match="energy.gpu_watts must be >= 0"):
        PowerModel(gpu_watts=-1)


@pytest.mark.slow
def test_plan_with_three_replicates(tmp_path):
    workdir = make_workdir(tmp_path / "run")
    (workdir / "three.yaml").write_text("training:\n  replicates: 3\n")
    proc = snakemake(
        workdir, "plan", "--cores", "1", "--configfile", "config/paper.yaml", "three.yaml"
    )
    out = proc.stdout + proc.stderr
    with open(workdir / "results" / "plan.csv", newline="") as handle:
        plan = list(csv.DictReader(handle))
    replicates = [r for r in plan if r["rule"] == "replicate"]
    # 4 datasets x 5 trainable models (not UserKNN, ItemKNN), 2 replicate jobs each
    assert len(replicates) == 20 and all(r["jobs"] == "2" for r in replicates)
    # with the 36 dense measures' jobs and the 70 of the bootstrap, users and experiments
    assert "total: 594 jobs" in out and " kWh, " in out
    assert all(r["energy_basis"] == "estimated" and float(r["energy_kwh"]) >= 0 for r in plan)
    by = {(r["rule"], r["dataset"], r["model"]): r for r in plan}
    tune, topk = by["tune", "ml-20m", "NGCF"], by["topk", "ml-20m", "NGCF"]
    replicate = by["replicate", "ml-20m", "NGCF"]
    # one replicate = one grid point's training + one export
    one_point = float(tune["gpu_hours"]) / int(tune["jobs"])
    assert float(replicate["gpu_hours"]) == pytest.approx(
        2 * (one_point + float(topk["gpu_hours"])), rel=0.02
    )
