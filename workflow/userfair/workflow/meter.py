"""What one training job draws (docs/cluster.md#measured-energy): the energy counters the
hardware exposes, read before and after the job, and the CPU and GPU seconds it used.

- **RAPL** (Intel and AMD CPUs under Linux): ``/sys/class/powercap/intel-rapl:N/energy_uj``,
  one counter per CPU package, in microjoules, wrapping at ``max_energy_range_uj``. Often
  readable by root only (then not used). It counts the whole package: every process on
  the node, not this job alone.
- **NVML** (NVIDIA GPUs from Volta on): ``nvmlDeviceGetTotalEnergyConsumption``, the
  millijoules a GPU drew since the driver loaded, from the driver's ``libnvidia-ml.so.1``
  through ctypes (no dependency added: pynvml wraps the same calls). Read for the GPUs of
  ``CUDA_VISIBLE_DEVICES`` (all when unset); it counts everything on those GPUs.

:class:`JobMeter` writes a small JSON record (:func:`record`) beside the job's outputs:
``cpu`` and ``gpu`` parts, each ``measured`` (the counter's joules) or ``estimated`` (its
seconds only: the power model of ``userfair.workflow.energy`` turns them into energy when a
table is made, :func:`userfair.workflow.energy.job_kwh`), and ``source``: ``measured`` when
every part the job used is measured, ``estimated`` when none is, else ``mixed``.
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

from userfair.files.io import write_json

log = logging.getLogger(__name__)

#: Where Linux exposes RAPL.
POWERCAP = Path("/sys/class/powercap")
#: The record's format version.
FORMAT = 1


def energy_file(rule: str, output) -> str:
    """Where a tune, topk or replicate job writes its record: beside its output ``output``
    (valid.json, topk.parquet, valid.json), ``energy.json`` in the grid point's or the
    replicate's folder, ``topk.energy.json`` beside the lists."""
    name = "topk.energy.json" if rule == "topk" else "energy.json"
    return os.path.join(os.path.dirname(output), name)


def rapl_read(root: Path = POWERCAP) -> dict[str, tuple[int, int]] | None:
    """``{domain: (energy_uj, max_energy_range_uj)}`` of every readable CPU package domain
    (``intel-rapl:N``, not its sub-domains, whose energy the package already holds) under
    ``root``; None when there is none or none is readable."""
    found = {}
    if not root.is_dir():
        return None
    for domain in sorted(root.glob("intel-rapl:*")):
        if domain.name.count(":") != 1:  # intel-rapl:0:0 (core, uncore, dram): a sub-domain
            continue
        try:
            energy = int((domain / "energy_uj").read_text())
            top = int((domain / "max_energy_range_uj").read_text())
        except (OSError, ValueError):  # root-only (PermissionError), absent or garbled
            continue
        found[domain.name] = (energy, top)
    return found or None


def rapl_joules(start: dict, end: dict) -> float:
    """The joules of the domains of both readings from ``start`` to ``end``, a counter that
    wrapped counted once around (``max_energy_range_uj``)."""
    total = 0
    for name, (first, top) in start.items():
        if name not in end:
            continue
        last = end[name][0]
        total += last - first if last >= first else last + top - first
    return total / 1e6


def _visible_gpus(count: int) -> list[int]:
    """The NVML indices of ``CUDA_VISIBLE_DEVICES`` (numeric entries; all when unset or
    given by UUID)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return list(range(count))
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if not all(e.isdigit() for e in entries):
        return list(range(count))
    return [int(e) for e in entries if int(e) < count]


def nvml_reader(library: str = "libnvidia-ml.so.1") -> Callable[[], dict[int, int]] | None:
    """A function giving ``{gpu index: millijoules since the driver loaded}`` of the
    visible GPUs, or None when the driver's NVML ``library`` or its energy counter is not
    there."""
    try:
        nvml = ctypes.CDLL(library)
    except OSError:
        return None
    count, handle = ctypes.c_uint(), ctypes.c_void_p()
    if nvml.nvmlInit_v2() != 0 or nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
        return None
    handles = {}
    for i in _visible_gpus(count.value):
        if nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) == 0:
            handles[i] = ctypes.c_void_p(handle.value)

    def read() -> dict[int, int]:
        out = {}
        for i, h in handles.items():
            energy = ctypes.c_ulonglong()
            if nvml.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(energy)) == 0:
                out[i] = int(energy.value)
        return out

    return read if handles and read() else None


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def gpu_used() -> bool:
    """Whether this process initialised CUDA (its training ran on a GPU)."""
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized())


def record(wall: float, cpu: float, gpu: bool, rapl: float | None, nvml: float | None) -> dict:
    """The job's record: ``wall_seconds``, the ``cpu`` part (``seconds``: CPU seconds,
    ``basis``, ``joules`` where measured by RAPL), the ``gpu`` part (``seconds``: the wall
    time when the job used a GPU, else 0; ``joules`` where measured by NVML) and ``source``.
    """
    parts = {
        "cpu": {"seconds": cpu, "basis": "estimated", "joules": None},
        "gpu": {"seconds": wall if gpu else 0.0, "basis": "estimated", "joules": None},
    }
    if rapl is not None:
        parts["cpu"].update(basis="measured", joules=rapl, counter="rapl")
    if gpu and nvml is not None:
        parts["gpu"].update(basis="measured", joules=nvml, counter="nvml")
    used = [parts["cpu"]] + ([parts["gpu"]] if gpu else [])
    bases = {part["basis"] for part in used}
    source = bases.pop() if len(bases) == 1 else "mixed"
    return {"format": FORMAT, "source": source, "wall_seconds": wall, **parts}


class JobMeter:
    """``with JobMeter(path):`` around a job's work writes its record (:func:`record`) to
    ``path`` (atomically) when the block succeeds. ``powercap`` and ``nvml`` (a reader as
    :func:`nvml_reader` gives, or None for none) are for tests; by default the machine's.
    """

    def __init__(self, path, *, powercap: Path = POWERCAP, nvml="auto"):
        self.path = Path(path)
        self.powercap = Path(powercap)
        self.nvml = nvml_reader() if nvml == "auto" else nvml

    def __enter__(self) -> JobMeter:
        self.rapl0 = rapl_read(self.powercap)
        self.nvml0 = self.nvml() if self.nvml else None
        self.cpu0, self.wall0 = cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, kind, error, trace) -> bool:
        if kind is not None:
            return False
        wall, cpu = time.perf_counter() - self.wall0, cpu_seconds() - self.cpu0
        rapl = None
        if self.rapl0 is not None:
            end = rapl_read(self.powercap)
            rapl = rapl_joules(self.rapl0, end) if end else None
        nvml = None
        if self.nvml0:
            end = self.nvml()
            nvml = sum(end[i] - self.nvml0[i] for i in self.nvml0 if i in end) / 1e3
        self.record = record(wall, cpu, gpu_used(), rapl, nvml)
        write_json(self.record, self.path)
        log.info("energy of the job (%s): %s", self.record["source"], self.path)
        return False
