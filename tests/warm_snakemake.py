"""A warm start for the suite's Snakemake processes (conftest.snakemake): one server per test
process that has imported Snakemake's own modules and the packages the Snakefile's parse
loads (pandas, numpy, pyarrow, ...) once, and forks a child per command. The child is the
real command line, ``snakemake.cli.main`` with the given arguments, working folder and
environment, as the ``snakemake`` script of the environment runs it; it only skips the
second or so of imports every fresh interpreter pays (tests/README.md, "Snakemake
processes").

Nothing of the workflow is imported here: ``userfair`` and the Snakefile are read fresh by
every child, so a test that edits the code of a run's copy sees its edit. Neither is
Snakemake's SLURM plugin: it asks the cluster's tools for its defaults when it loads.

Protocol (one JSON object per line): a request on stdin, ``{"args", "cwd", "env", "out",
"err"}``; the replies on stdout, ``{"pid"}`` when the child has started (it leads a process
group of its own, so that a timeout can stop it and its jobs), then ``{"rc", "cpu"}`` when
it has ended: its exit status and the CPU seconds of it and its jobs. Ctrl-C in the test
process is passed on to the command's group (SIGINT, then SIGKILL after 30 s), since the
terminal sends it to the test process's group only."""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import warm_jobs  # noqa: E402  (tests/, beside this file)

#: What the parse of the Snakefile and a run load besides the workflow's own code.
PRELOAD = (
    "snakemake.cli",
    "snakemake.api",
    "snakemake.workflow",
    "snakemake.dag",
    "snakemake.persistence",
    "snakemake.scheduling.job_scheduler",
    "snakemake.scheduling.milp",
    "snakemake.executors.local",
    "snakemake.script",
    "snakemake.utils",
    "pulp",
    "numpy",
    "pandas",
    "pyarrow",
    "pyarrow.parquet",
    "scipy.stats",
    "sqlmodel",
    "jsonschema",
    "yaml",
    "psutil",
)


def _child(request: dict) -> None:
    """The command line of the request, in this forked process: exits with its status."""
    os.setpgid(0, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["out"]), (2, request["err"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    os.close(null)
    # as the `snakemake` script starts: its folder first on the path, its name in argv
    script = os.path.join(request["bin"], "snakemake")
    extra = [os.path.abspath(e) for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    if _shadowed(extra):  # a fresh interpreter would load one of them from PYTHONPATH
        os.execv(sys.executable, [sys.executable, script, *request["args"]])
    sys.path[0] = request["bin"]
    sys.path[1:1] = extra  # where a fresh interpreter puts PYTHONPATH's folders
    importlib.invalidate_caches()
    sys.argv = [script, *request["args"]]
    from snakemake.cli import main
    from snakemake.workflow import Workflow

    # the one thing Snakemake reads from the working folder as it loads (the run folder of
    # its banner): read again in this one
    Workflow._rundir = str(os.path.abspath(os.getcwd()))
    # its jobs start warm too (tests/warm_jobs.py), unless the request says not to
    jobs = warm_jobs.start(os.path.dirname(request["out"])) if request.get("warm_jobs") else None
    try:
        main()  # exits: SystemExit runs up to the interpreter, which finishes as usual
    finally:
        if jobs is not None:
            warm_jobs.stop(jobs)


def _shadowed(folders: list[str]) -> bool:
    """Whether a module this process has loaded has a namesake in one of ``folders``
    (PYTHONPATH's, which come before the environment's packages), or one is not a plain
    folder: then only a fresh interpreter loads what the command would."""
    loaded = {name.partition(".")[0] for name in sys.modules}
    for folder in folders:
        if not os.path.isdir(folder):
            if os.path.exists(folder):  # a zip archive
                return True
            continue
        for entry in os.listdir(folder):
            if entry.partition(".")[0] in loaded:
                return True
    return False


def serve() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # the child imports what it needs by itself
            pass
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
            os._exit(1)  # not reached: main() exits
        print(json.dumps({"pid": pid}), flush=True)
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "cpu": cpu}), flush=True)


# The client side, in the test process (conftest.snakemake).

#: ``USERFAIR_WARM_SNAKEMAKE=0`` starts every Snakemake process fresh instead.
SWITCH = "USERFAIR_WARM_SNAKEMAKE"
#: CPU seconds of the warm server's children (the commands and their jobs) so far: they are
#: children of the server, not of the test process, so the suite's CPU counts add them.
CPU = [0.0]
_SERVER: list[subprocess.Popen] = []
#: One command at a time per server: its pipe carries one request and its replies.
_ONE_AT_A_TIME = threading.Lock()


def wanted(env: dict | None) -> bool:
    """Whether a command with these extra environment variables can start warm: not when
    switched off, nor when they change what an interpreter or the SLURM plugin reads as it
    loads (``PYTHON*``, ``SLURM*``). ``PYTHONPATH`` is the exception: the command puts its
    folders on the path where a fresh interpreter does, or, when one of them holds a
    namesake of a module the server has loaded, runs a fresh interpreter after all."""
    if os.environ.get(SWITCH, "1") == "0":
        return False
    return not any(key.startswith(("PYTHON", "SLURM")) and key != "PYTHONPATH" for key in env or {})


def _server() -> subprocess.Popen:
    if not _SERVER or _SERVER[0].poll() is not None:
        _SERVER[:] = [
            subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
        ]
    return _SERVER[0]


def stop() -> None:
    """Stop the server (at the end of the test process): it reaps nothing more."""
    for server in _SERVER:
        if server.poll() is None:
            server.stdin.close()
            server.wait(timeout=60)
    _SERVER.clear()


atexit.register(stop)


def _reply(server: subprocess.Popen, deadline: float | None) -> dict | None:
    """The server's next reply, or None once ``deadline`` (time.monotonic) has passed."""
    line = b""
    while not line.endswith(b"\n"):
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        ready, _, _ = select.select([server.stdout], [], [], wait)
        if not ready:
            return None
        chunk = os.read(server.stdout.fileno(), 1)
        if not chunk:
            raise RuntimeError(f"the warm Snakemake server stopped ({server.wait()})")
        line += chunk
    return json.loads(line)


def _signal(pid: int, number: int) -> None:
    """Send ``number`` to the command's process group: the command and its jobs."""
    try:
        os.killpg(pid, number)
    except ProcessLookupError:  # it ended meanwhile
        pass


def run(
    args: list[str], cwd: Path, env: dict, bin_dir: Path, timeout: float | None
) -> subprocess.CompletedProcess:
    """``snakemake ARGS`` in ``cwd`` with environment ``env``, forked from the warm server:
    what subprocess.run(..., capture_output=True, text=True) returns for the real script."""
    with _ONE_AT_A_TIME, tempfile.TemporaryDirectory(prefix="warm-snakemake-") as folder:
        server = _server()
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        request = {
            "args": list(args), "cwd": str(cwd), "env": env, "bin": str(bin_dir),
            "out": str(out), "err": str(err), "warm_jobs": warm_jobs.wanted(),
        }  # fmt: skip
        server.stdin.write((json.dumps(request) + "\n").encode())
        pid = _reply(server, None)["pid"]
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            done = _reply(server, deadline)
        except KeyboardInterrupt:  # Ctrl-C reaches the test process only: pass it on
            _signal(pid, signal.SIGINT)
            if _reply(server, time.monotonic() + 30) is None:
                _signal(pid, signal.SIGKILL)
                _reply(server, None)
            raise
        timed_out = done is None
        if timed_out:  # too long: stop it and its jobs
            _signal(pid, signal.SIGKILL)
            done = _reply(server, None)
        CPU[0] += done["cpu"]
        command = [str(bin_dir / "snakemake"), *args]
        stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
        if timed_out:
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
        return subprocess.CompletedProcess(command, done["rc"], stdout, stderr)


if __name__ == "__main__":
    serve()
