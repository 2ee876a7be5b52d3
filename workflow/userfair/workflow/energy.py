"""The energy and emissions of a planned run (docs/cluster.md#energy): a power model turns
the CPU- and GPU-hours that ``snakemake plan`` reserves (userfair.workflow.plan.plan_row) into
kWh and kg CO2e, marked ``estimated``; a training job's own measurement, where the hardware
exposes one, is ``measured``.

    energy_kwh = (cpu_hours x cpu_watts_per_core + gpu_hours x gpu_watts) / 1000 x pue
    co2e_kg    = energy_kwh x grid_kg_co2e_per_kwh

``cpu_hours`` are the core-hours of the jobs without a GPU (threads x runtime); a GPU job
counts its GPUs only (``gpu_watts`` is meant to include the share of the host it keeps
busy). ``pue`` is the data centre's power usage effectiveness (cooling, power supply).
The hours are the reserved ones (the requests, margins included), so the energy is an
upper bound of what the jobs draw at those powers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PowerModel:
    """The config's ``energy:`` section: watts per busy CPU core and per GPU, the data
    centre's overhead and the grid's carbon intensity."""

    cpu_watts_per_core: float = 10.0
    gpu_watts: float = 300.0
    pue: float = 1.5
    grid_kg_co2e_per_kwh: float = 0.4

    def __post_init__(self):
        for name in ("cpu_watts_per_core", "gpu_watts", "grid_kg_co2e_per_kwh"):
            if getattr(self, name) < 0:
                raise ValueError(f"energy.{name} must be >= 0, got {getattr(self, name)}")
        if self.pue < 1:
            raise ValueError(f"energy.pue must be >= 1 (facility / IT power), got {self.pue}")

    def kwh(self, cpu_hours: float, gpu_hours: float) -> float:
        """The energy of ``cpu_hours`` core-hours and ``gpu_hours`` GPU-hours, overhead in."""
        watt_hours = cpu_hours * self.cpu_watts_per_core + gpu_hours * self.gpu_watts
        return watt_hours / 1000.0 * self.pue

    def co2e_kg(self, kwh: float) -> float:
        return kwh * self.grid_kg_co2e_per_kwh


#: The columns ``with_energy`` adds to a plan row.
COLUMNS = ("energy_kwh", "co2e_kg", "energy_basis")


def with_energy(row: dict, power: PowerModel) -> dict:
    """A plan row (``userfair.workflow.plan.plan_row``) with ``energy_kwh``, ``co2e_kg`` (rounded
    to
    3 decimals) and ``energy_basis`` = estimated (from the power model)."""
    kwh = power.kwh(float(row["cpu_hours"]), float(row["gpu_hours"]))
    return {
        **row,
        "energy_kwh": round(kwh, 3),
        "co2e_kg": round(power.co2e_kg(kwh), 3),
        "energy_basis": "estimated",
    }


#: Joules per kWh.
JOULES_PER_KWH = 3.6e6


def job_kwh(record: dict, power: PowerModel) -> float:
    """The energy of one job's record (userfair.workflow.meter.record), overhead in: each
    part (cpu, gpu) its measured joules, or its seconds times the power model's watts
    (``cpu_watts_per_core`` per CPU second, ``gpu_watts`` per GPU second), the sum times
    ``pue``: comparable with the plan's ``energy_kwh``."""
    joules = 0.0
    for part, watts in (("cpu", power.cpu_watts_per_core), ("gpu", power.gpu_watts)):
        entry = record[part]
        joules += entry["joules"] if entry["basis"] == "measured" else entry["seconds"] * watts
    return joules / JOULES_PER_KWH * power.pue


def job_row(record: dict | None, power: PowerModel) -> dict:
    """The energy columns of one job for the energy table: ``source`` (measured, mixed,
    estimated; ``not recorded`` for a job run before jobs recorded their energy), the
    bases of its parts, its seconds, ``energy_kwh`` and ``co2e_kg`` (NaN unrecorded)."""
    if record is None:
        return {
            "source": "not recorded", "cpu_basis": "", "gpu_basis": "",
            "wall_seconds": math.nan, "cpu_seconds": math.nan, "gpu_seconds": math.nan,
            "energy_kwh": math.nan, "co2e_kg": math.nan,
        }  # fmt: skip
    kwh = job_kwh(record, power)
    return {
        "source": record["source"],
        "cpu_basis": record["cpu"]["basis"],
        "gpu_basis": record["gpu"]["basis"] if record["gpu"]["seconds"] else "",
        "wall_seconds": record["wall_seconds"],
        "cpu_seconds": record["cpu"]["seconds"],
        "gpu_seconds": record["gpu"]["seconds"],
        "energy_kwh": kwh,
        "co2e_kg": power.co2e_kg(kwh),
    }
