"""The energy record of a training job (userfair.workflow.meter): RAPL read from a fake
powercap tree, NVML from a stub (this VM has neither: no /sys/class/powercap, no GPU), the
estimated path for real, and the energy table's arithmetic (userfair.workflow.energy)."""

import json
import math

import pandas as pd
import pytest

from userfair.workflow import energy, meter
from userfair.workflow.steps.plan import table_energy


def fake_rapl(root, **domains):
    """``intel-rapl:N`` folders with energy_uj and max_energy_range_uj, plus a sub-domain
    (intel-rapl:0:0) that must not be counted twice."""
    for name, (value, top) in domains.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "energy_uj").write_text(f"{value}\n")
        (folder / "max_energy_range_uj").write_text(f"{top}\n")
    return root


def test_rapl_reads_packages_only_and_unwraps(tmp_path):
    root = fake_rapl(tmp_path, **{"intel-rapl:0": (1_000, 10_000), "intel-rapl:1": (9_000, 10_000)})
    fake_rapl(root, **{"intel-rapl:0:0": (5, 10_000)})  # core: inside package 0
    start = meter.rapl_read(root)
    assert set(start) == {"intel-rapl:0", "intel-rapl:1"}
    fake_rapl(root, **{"intel-rapl:0": (4_000, 10_000), "intel-rapl:1": (500, 10_000)})
    # package 0: 3,000 uJ; package 1 wrapped: 500 + 10,000 - 9,000 = 1,500 uJ
    assert meter.rapl_joules(start, meter.rapl_read(root)) == pytest.approx(4_500e-6)


def test_rapl_absent_or_unreadable_is_none(tmp_path):
    assert meter.rapl_read(tmp_path / "none") is None
    (tmp_path / "intel-rapl:0").mkdir()  # no energy_uj (as when it is root-only)
    assert meter.rapl_read(tmp_path) is None


def test_record_sources_hand_worked():
    estimated = meter.record(10.0, 8.0, gpu=False, rapl=None, nvml=None)
    assert estimated["source"] == "estimated" and estimated["gpu"]["seconds"] == 0.0
    measured = meter.record(10.0, 8.0, gpu=True, rapl=50.0, nvml=2_000.0)
    assert measured["source"] == "measured"
    assert measured["cpu"]["joules"] == 50.0 and measured["gpu"]["joules"] == 2_000.0
    mixed = meter.record(10.0, 8.0, gpu=True, rapl=None, nvml=2_000.0)
    assert mixed["source"] == "mixed" and mixed["gpu"]["seconds"] == 10.0
    # a GPU counter without a GPU job does not make a CPU job measured
    assert meter.record(10.0, 8.0, gpu=False, rapl=None, nvml=5.0)["source"] == "estimated"


def test_job_kwh_hand_worked():
    power = energy.PowerModel(cpu_watts_per_core=10, gpu_watts=300, pue=1.5)
    # 3,600 CPU seconds x 10 W = 36 kJ = 0.01 kWh; 1,200 GPU seconds x 300 W = 0.1 kWh
    estimated = meter.record(1_200.0, 3_600.0, gpu=True, rapl=None, nvml=None)
    assert energy.job_kwh(estimated, power) == pytest.approx(0.11 * 1.5)
    # measured: 7.2 MJ (RAPL) + 3.6 MJ (NVML) = 3 kWh, overhead 1.5
    measured = meter.record(1_200.0, 3_600.0, gpu=True, rapl=7.2e6, nvml=3.6e6)
    assert energy.job_kwh(measured, power) == pytest.approx(4.5)
    row = energy.job_row(measured, energy.PowerModel(grid_kg_co2e_per_kwh=0.5, pue=1.0))
    assert row["co2e_kg"] == pytest.approx(1.5) and row["source"] == "measured"
    assert math.isnan(energy.job_row(None, power)["energy_kwh"])


def test_meter_with_counters(tmp_path, monkeypatch):
    """RAPL on a fake tree and an NVML stub, both advancing inside the block."""
    root = fake_rapl(tmp_path / "powercap", **{"intel-rapl:0": (0, 2**32)})
    counters = iter([{0: 1_000, 1: 5_000}, {0: 4_000, 1: 5_500}])  # millijoules
    monkeypatch.setattr(meter, "gpu_used", lambda: True)
    out = tmp_path / "job" / "energy.json"
    with meter.JobMeter(out, powercap=root, nvml=lambda: next(counters)):
        fake_rapl(root, **{"intel-rapl:0": (2_500_000, 2**32)})  # 2.5 J
    record = json.loads(out.read_text())
    assert record["source"] == "measured"
    assert record["cpu"]["joules"] == pytest.approx(2.5)
    assert record["gpu"]["joules"] == pytest.approx(3.5)  # 3,000 + 500 mJ


def test_meter_estimated_on_this_machine(tmp_path):
    """The real readers: without counters (this VM) the record is estimated from the CPU
    seconds the block used; a failing block writes nothing."""
    out = tmp_path / "energy.json"
    with meter.JobMeter(out, powercap=tmp_path / "no-powercap", nvml=None):
        sum(i * i for i in range(2_000_000))
    record = json.loads(out.read_text())
    assert record["source"] == "estimated" and record["cpu"]["basis"] == "estimated"
    assert 0 < record["cpu"]["seconds"] <= record["wall_seconds"] * 4 + 0.05
    failed = tmp_path / "failed.json"
    with pytest.raises(RuntimeError), meter.JobMeter(failed, nvml=None):
        raise RuntimeError("training failed")
    assert not failed.exists()


def test_energy_table(tmp_path):
    grid = tmp_path / "ml/models/BPR/grid/0"
    grid.mkdir(parents=True)
    record = meter.record(100.0, 360.0, gpu=False, rapl=None, nvml=None)
    (grid / "energy.json").write_text(json.dumps(record))
    outputs = {
        "tune:ml/BPR/0": str(grid / "valid.json"),
        "topk:ml/BPR": str(tmp_path / "ml/models/BPR/topk.parquet"),  # run before: none
    }
    frame = table_energy(
        outputs, tmp_path / "energy.csv", energy={"cpu_watts_per_core": 10.0, "pue": 1.0}
    )
    assert list(frame["source"]) == ["estimated", "not recorded"]
    assert frame.loc[0, "energy_kwh"] == pytest.approx(360 * 10 / 3.6e6)
    written = pd.read_csv(tmp_path / "energy.csv")
    assert list(written.columns[:4]) == ["rule", "dataset", "model", "job"]
    assert pd.isna(written.loc[1, "job"])  # topk has one job per dataset and model


def test_nvml_without_the_driver_is_none():
    assert meter.nvml_reader("libnvidia-ml-not-here.so.1") is None
