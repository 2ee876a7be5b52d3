"""Steps of the plan stage (workflow/rules/plan.smk): plan."""

from __future__ import annotations

import logging

from userfair.workflow import plan as plan_report
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
