"""Steps of the plan stage (workflow/rules/plan.smk): plan, table_energy."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import pandas as pd

from userfair.files.io import read_json, write_csv
from userfair.workflow import energy as power_model
from userfair.workflow import plan as plan_report
from userfair.workflow.meter import energy_file
from userfair.workflow.steps import Path

log = logging.getLogger(__name__)


def plan(rows: list[dict], out: Path) -> str:
    """Rule plan: the requests of every tune and topk job
    (userfair.workflow.plan.write_plan) -> ``out`` (results/plan.csv); the totals go to
    the log and to the terminal."""
    text = plan_report.write_plan(rows, out)
    log.info("totals (attempt 1, margins included):\n%s", text)
    print(f"{out}: totals (attempt 1, margins included)\n{text}", flush=True)
    return text


def table_energy(outputs: Mapping[str, Path], out: Path, *, energy: dict) -> pd.DataFrame:
    """Rule table_energy: one row per training and export job (``outputs``: its output,
    keyed ``RULE:D/M/JOB``) with what it drew (userfair.workflow.energy.job_row of the record
    beside the output, userfair.workflow.meter.energy_file): measured where the hardware
    exposed a counter, else estimated from its CPU and GPU seconds and the config's power
    model ``energy``."""
    power = power_model.PowerModel(**energy)
    rows = []
    for key, output in outputs.items():
        rule, run = key.split(":", 1)
        dataset, model, job = (run.split("/") + [""])[:3]
        path = energy_file(rule, output)
        record = read_json(path) if os.path.exists(path) else None
        rows.append(
            {"rule": rule, "dataset": dataset, "model": model, "job": job,
             **power_model.job_row(record, power)}
        )  # fmt: skip
    frame = pd.DataFrame(rows)
    write_csv(frame, out)
    counts = frame["source"].value_counts().to_dict()
    log.info("%s: %d jobs, %s, %.6f kWh", out, len(frame), counts, frame["energy_kwh"].sum())
    return frame
