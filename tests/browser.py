"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ending in a NUL byte, commands on the browser's fd 3, answers on its fd 4), with
the standard library only: the tests open the workflow's HTML report in a real browser without
a browser-automation package. ``chromium()`` finds Debian's binary (``apt-get install
chromium``, as .ci/run does) or says why there is none."""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium() -> str | None:
    """The browser binary (``USERFAIR_CHROMIUM`` first), or None."""
    named = os.environ.get("USERFAIR_CHROMIUM")
    if named:
        return shutil.which(named) or (named if Path(named).is_file() else None)
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


class Browser:
    """One headless browser; ``open(url)`` loads a page and keeps its console errors and
    uncaught exceptions in ``errors``; ``evaluate(js)`` returns a JSON-able value."""

    def __init__(self, binary: str, timeout: float = 60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="userfair-chromium-")
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # above 4, so that placing one on fd 3 or 4 never overwrites the other
        commands_read, answers_write = (_above_four(fd) for fd in (commands_read, answers_write))

        def descriptors():  # the browser reads fd 3 and writes fd 4
            os.dup2(commands_read, 3)
            os.dup2(answers_write, 4)

        self.process = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=_log(), close_fds=False,
            preexec_fn=descriptors,
        )  # fmt: skip
        os.close(commands_read)
        os.close(answers_write)
        self._next = 0
        self._replies: dict[int, dict] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Condition()
        self.errors: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable", session=self.session)

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._answers, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        with self._lock:
                            self._replies[message["id"]] = message
                            self._lock.notify_all()
                    else:
                        self._event(message)

    def _event(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.errors.append(f"console.error: {args}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}")
        self._events.put(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._next += 1
        ident = self._next
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._lock:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise TimeoutError(f"no answer to {method} from the browser")
                self._lock.wait(min(left, 1.0))
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event."""
        self.send("Page.navigate", session=self.session, url=url)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                event = self._events.get(timeout=1.0)
            except queue.Empty:
                continue
            if event.get("method") == "Page.loadEventFired":
                return
        raise TimeoutError(f"{url} did not load in {self.timeout} s")

    def evaluate(self, expression: str):
        """The value of ``expression`` in the page (a promise is awaited)."""
        result = self.send(
            "Runtime.evaluate", session=self.session, expression=expression,
            awaitPromise=True, returnByValue=True,
        )  # fmt: skip
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (TimeoutError, RuntimeError, OSError):
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _log():
    return open(os.environ.get("USERFAIR_CHROMIUM_LOG", os.devnull), "ab")


def _above_four(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved
