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
