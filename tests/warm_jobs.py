"""Warm starts for the jobs of a warm Snakemake command (tests/warm_snakemake.py): before
the command runs, its process forks a *job server* that holds what it has imported
(numpy, pandas, pyarrow, scipy, Snakemake's modules: the warm server's PRELOAD) and the
command's ``sys.executable`` becomes this file's client, so that Snakemake starts a rule's
script as ``PYTHON -S warm_jobs.py SCRIPT``. The client hands the script, its working
folder, environment and standard streams (passed as file descriptors) to the job server,
which forks the job: the rule's script, run as ``python SCRIPT`` runs it, with everything
the script imports of the workflow (``userfair``) read fresh from disk. Each job so skips
the interpreter's start and the third-party imports every fresh interpreter pays (about
0.6 CPU s a job; tests/README.md, "Snakemake processes").

What a fresh interpreter would do differently, and how it is kept:
- exit status and signals: the client exits with the job's status, and passes on the
  signals Snakemake sends it (SIGTERM, SIGINT, ...); if the client is killed, its job is
  (the job's monitor sees the client's socket close). The job server, its monitors and the
  jobs stay in the command's process group, so a timeout that kills the group kills them.
- a command line other than ``SCRIPT``, an environment whose ``PYTHON*`` variables (or
  those :data:`READ_AS_LOADED` of the modules below) differ from the job server's, or no
  job server: the client runs the real interpreter (execv).
- CPU seconds: the jobs are reaped by their monitors, the monitors by the job server, the
  job server by the command's process before it ends, so the command's children's CPU
  seconds (what the warm server reports) include them.
- At exit a job flushes its log handlers and streams and skips atexit handlers (the
  workflow registers none; a successful job ends that way anyway: joblog.leave).
- What the jobs load on demand is learnt: a job that starts to load one of :data:`LEARNT`
  (torch, numba, matplotlib's pyplot, seaborn: 0.3 to 1.5 CPU s each) says so, and the
  job server loads it too, so that the command's later jobs find it loaded, as pyarrow
  is. The job server already runs the one thread pyarrow starts; importing these adds
  none (2 threads before and after, with OMP_NUM_THREADS=1 as in the suite's workers), and
  torch supports a fork after its import (its data loaders' workers fork so). ``userfair``
  itself is never loaded by the job server.

``USERFAIR_WARM_JOBS=0`` (in the test process's environment) starts every job fresh.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys

#: Where a job server listens: set in the command's environment, inherited by its jobs'
#: shells and so by the client.
ADDRESS = "USERFAIR_WARM_JOB_SERVER"
#: ``USERFAIR_WARM_JOBS=0`` switches warm job starts off.
SWITCH = "USERFAIR_WARM_JOBS"
#: What Snakemake runs a rule's script with: its scripts sit in .snakemake/scripts/.
SCRIPTS = os.sep + os.path.join(".snakemake", "scripts") + os.sep
#: The signals the client passes on to its job.
PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
#: The third-party modules a job may load on demand that the job server loads, in this
#: order, once a job of the command has loaded them (the training and export jobs: torch;
#: the measures: numba; the figures: pyplot and seaborn).
LEARNT = ("numba", "torch", "matplotlib.pyplot", "seaborn")
#: The environment variables that the interpreter and these modules read as they load: a
#: job whose values differ from the job server's starts fresh.
READ_AS_LOADED = ("PYTHON", "NUMBA_", "MPL", "TORCH")
#: The job server's end of the pipe on which the jobs say what they loaded of LEARNT
#: (inherited by each job; -1 outside a job server).
_LEARN = [-1]


def wanted() -> bool:
    return os.environ.get(SWITCH, "1") != "0"


# --- the command's side: start and stop the job server ---------------------------------


def start(folder: str) -> int:
    """Fork the job server, listening in ``folder``; make Snakemake start scripts through
    the client. Returns the job server's pid (for :func:`stop`)."""
    path = os.path.join(folder, "jobs.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    real = sys.executable
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _serve(listener, real)
        finally:
            os._exit(0)
    listener.close()
    os.environ[ADDRESS] = path
    # Snakemake formats "{py_exec} {fname:q}" into the job's shell command: an unquoted
    # command line (the test folders hold no spaces)
    sys.executable = f"{real} -S {os.path.abspath(__file__)}"
    return pid


def stop(pid: int) -> None:
    """End the job server (once the command's jobs have ended) and reap it."""
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


# --- the job server: one monitor per job, which forks the job ---------------------------


class _Stop(Exception):
    """SIGTERM to the job server: stop accepting, wait for the running jobs' monitors."""


def _stop(*_) -> None:
    raise _Stop


def _read_as_loaded(env) -> dict:
    """The variables of ``env`` that a job's imports read as they load (:data:`READ_AS_LOADED`):
    a job starts warm only where they equal the job server's."""
    return {k: v for k, v in env.items() if k.startswith(READ_AS_LOADED)}


def _learn(learnt: int) -> None:
    """Load what the jobs have said they loaded (names of :data:`LEARNT` only)."""
    import importlib

    try:
        said = os.read(learnt, 4096).decode().split()
    except BlockingIOError:
        return
    for name in LEARNT:
        if name in said and name not in sys.modules:
            try:
                importlib.import_module(name)
            except _Stop:  # the command has ended
                raise
            except Exception:  # the jobs that need it load it (and fail) by themselves
                pass


def _serve(listener: socket.socket, real: str) -> None:
    import select

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command handles Ctrl-C
    own = _read_as_loaded(os.environ)
    learnt, _LEARN[0] = os.pipe()
    os.set_blocking(learnt, False)
    os.set_blocking(_LEARN[0], False)
    monitors = set()
    try:
        while True:
            if learnt in select.select([listener, learnt], [], [])[0]:
                _learn(learnt)
                continue
            conn, _ = listener.accept()
            pid = os.fork()
            if pid == 0:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                listener.close()
                os.close(learnt)
                try:
                    _monitor(conn, real, own)
                finally:
                    os._exit(0)
            conn.close()
            monitors.add(pid)
            for child in list(monitors):  # reap the monitors that have ended
                if os.waitpid(child, os.WNOHANG)[0]:
                    monitors.discard(child)
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for child in monitors:
        try:
            os.waitpid(child, 0)
        except ChildProcessError:
            pass


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    fds = array.array("i")
    head, ancillary, _, _ = conn.recvmsg(8, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    size = int(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the client went away")
        body += chunk
    return json.loads(body), list(fds)


def _send(conn: socket.socket, reply: dict) -> None:
    conn.sendall((json.dumps(reply) + "\n").encode())


def _monitor(conn: socket.socket, real: str, own: dict) -> None:
    request, fds = _receive(conn)
    env = request["env"]
    if _read_as_loaded(env) != own or len(fds) != 3:
        _send(conn, {"cold": True})
        return
    pid = os.fork()
    if pid == 0:
        conn.close()
        _job(request, fds, real)  # never returns
    for fd in fds:
        os.close(fd)
    _send(conn, {"pid": pid})
    # the client gone (killed) before its job ended: the job goes too
    import threading

    def watch():
        if not conn.recv(1):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    threading.Thread(target=watch, daemon=True).start()
    _, status = os.waitpid(pid, 0)
    try:
        _send(conn, {"status": status})
    except OSError:
        pass


def _job(request: dict, fds: list[int], real: str) -> None:
    """The rule's script, as ``python SCRIPT`` would run it; ends the process."""
    import runpy
    import traceback

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for number in PASSED_ON:
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    script = request["argv"][0]
    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    sys.executable = real
    _tell_what_loads()
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as error:
        if error.code is None:
            code = 0
        elif isinstance(error.code, int):
            code = error.code
        else:
            print(error.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    os._exit(code)


def _tell_what_loads() -> None:
    """Tell the job server when this job starts to load a module of :data:`LEARNT` that
    the server has not: at once (an audit hook on imports), since a successful job ends
    with os._exit, past any code at its end (joblog.leave)."""
    untold = {name for name in LEARNT if name not in sys.modules}

    def hook(event: str, args: tuple) -> None:
        if event == "import" and args[0] in untold:
            untold.discard(args[0])
            try:
                os.write(_LEARN[0], (args[0] + "\n").encode())
            except OSError:  # a full pipe: the job server has been told already
                pass

    if untold:
        sys.addaudithook(hook)


# --- the client: what Snakemake runs as the job's interpreter ---------------------------


def _cold(real: str) -> None:
    os.execv(real, [real, *sys.argv[1:]])


def client() -> None:
    real = sys.executable
    address = os.environ.get(ADDRESS)
    if not address or len(sys.argv) != 2 or SCRIPTS not in os.path.abspath(sys.argv[1]):
        _cold(real)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(address)
    except OSError:
        _cold(real)
    body = json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)})
    body = body.encode()
    fds = array.array("i", [0, 1, 2])
    conn.sendmsg([b"%08d" % len(body)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    conn.sendall(body)
    replies = conn.makefile("rb")
    line = replies.readline()
    first = json.loads(line) if line else {"cold": True}  # no job server after all
    if first.get("cold"):
        conn.close()
        _cold(real)
    pid = first["pid"]

    def pass_on(number, _frame):
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    for number in PASSED_ON:
        signal.signal(number, pass_on)
    while True:
        try:
            line = replies.readline()
            break
        except InterruptedError:
            continue
    if not line:  # the monitor went away: no status to report
        os._exit(1)
    code = os.waitstatus_to_exitcode(json.loads(line)["status"])
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


if __name__ == "__main__":
    client()
