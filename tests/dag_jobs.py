"""The jobs of a workflow's DAG with their params, as Snakemake builds them (and
:func:`scheduled`, the job counts a dry run prints): run as a script
(``python tests/dag_jobs.py SNAKEFILE WORKDIR CONFIGFILE...``) it builds the DAG through
Snakemake's Python API (the DAG of ``snakemake --rulegraph``: nothing runs, nothing is
written but Snakemake's lock) and prints one JSON list, each job's rule, wildcards and params
(``repr`` of each value); :func:`dag_jobs` runs it in a subprocess, so that the workflow's
parse stays out of the test's process."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path


def scheduled(dry_run_output: str) -> dict[str, int]:
    """{rule: count} of the jobs a dry run (``snakemake -n``) plans, from its "Job stats"
    table (the first, where it prints two); {} without one ("Nothing to be done")."""
    if "Job stats:" not in dry_run_output:
        return {}
    table = dry_run_output.split("Job stats:")[1].split("\n\n")[0]
    rows = [line.split() for line in table.splitlines()[3:] if line.strip()]
    return {name: int(count) for name, count in rows if name != "total"}


def dag_jobs(snakefile: Path, workdir: Path, *configfiles: Path) -> list[dict]:
    """Every job of the DAG of ``snakefile`` in ``workdir`` under ``configfiles`` (in order,
    as ``--configfile`` takes them): ``{"rule", "wildcards", "params"}`` each."""
    proc = subprocess.run(
        [sys.executable, __file__, str(snakefile), str(workdir), *map(str, configfiles)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    return json.loads(proc.stdout.splitlines()[-1])


def _main(snakefile: str, workdir: str, *configfiles: str) -> None:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[Path(c).resolve() for c in configfiles]),
            snakefile=Path(snakefile).resolve(),
            workdir=Path(workdir).resolve(),
        )
        with contextlib.redirect_stdout(io.StringIO()):  # builds the DAG, prints the rules
            workflow.dag(DAGSettings()).printrulegraph()
        jobs = [
            {
                "rule": job.rule.name,
                "wildcards": dict(job.wildcards_dict),
                "params": {name: repr(value) for name, value in job.params.items()},
            }
            for job in workflow._workflow.dag.jobs
        ]
    print(json.dumps(jobs))


if __name__ == "__main__":
    _main(*sys.argv[1:])
