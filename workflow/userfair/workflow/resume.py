"""Resumable training (docs/training.md#resume): the state of a RecBole training run at the end
of an epoch, written to ``resume.pth`` every ``training.checkpoint_every`` epochs and when the
job receives SIGTERM, and restored by the next attempt of the same job.

The state holds everything the rest of the run depends on: the model's parameters and its
plain attributes (counters such as MultiVAE's annealing step), the optimizer, every random
state (Python, numpy, torch, CUDA, the train loader's generator), the early-stopping counters,
the best score, result and checkpoint so far, and the curve. A run resumed from it continues
exactly as the uninterrupted run would have (bit-identical on the CPU).

A state carries the fingerprint of its settings (model, grid point, training settings, the
split files, library versions); a ``resume.pth`` of other settings is ignored with a log line.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import random
import signal
from pathlib import Path
from typing import Callable, Iterator

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``workflow`` extra).
NEEDS = ("torch",)
require("workflow", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import torch  # noqa: E402

from userfair.files.io import UnsafeFileError, read_pth, write_pth  # noqa: E402

log = logging.getLogger(__name__)

RESUME = "resume.pth"
FORMAT = 2  # 2: the format of userfair.files.safe_pth (1: a pickle)
PLAIN = (bool, int, float, str, type(None))


def fingerprint(settings: dict) -> str:
    """A short digest of ``settings`` (JSON-serialisable), to tell runs apart."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_identity(path) -> list:
    """Size and modification time of ``path``: a rewritten split means a new run."""
    stat = Path(path).stat()
    return [Path(path).name, stat.st_size, stat.st_mtime_ns]


def _to_cpu(obj):
    """A deep copy of ``obj`` with every tensor cloned to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {key: _to_cpu(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(value) for value in obj)
    return copy.deepcopy(obj)


def plain_attributes(model: torch.nn.Module) -> dict:
    """Every submodule's public attributes of plain type (int, float, ...): the counters a
    model keeps outside its state_dict (MultiVAE's ``update``)."""
    return {
        name: {
            key: value
            for key, value in vars(module).items()
            if not key.startswith("_") and isinstance(value, PLAIN)
        }
        for name, module in model.named_modules()
    }


def set_plain_attributes(model: torch.nn.Module, attributes: dict) -> None:
    modules = dict(model.named_modules())
    for name, values in attributes.items():
        for key, value in values.items():
            setattr(modules[name], key, value)


def random_states(generator: torch.Generator | None) -> dict:
    states = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }
    if generator is not None:
        states["loader"] = generator.get_state()
    return states


def set_random_states(states: dict, generator: torch.Generator | None) -> None:
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if states["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    if generator is not None and "loader" in states:
        generator.set_state(states["loader"])


def snapshot(trainer, train_loader, epoch: int, best: dict | None, extra: dict) -> dict:
    """The state of ``trainer`` after epoch ``epoch`` (0-based): resuming starts at epoch + 1.
    ``best`` is the content of the best checkpoint so far; ``extra`` the caller's own
    records (the curve)."""
    model = trainer.model
    return {
        "epoch": epoch,
        "state_dict": _to_cpu(model.state_dict()),
        "other_parameter": _to_cpu(model.other_parameter()),
        "attributes": plain_attributes(model),
        "optimizer": _to_cpu(trainer.optimizer.state_dict()),
        "random": random_states(getattr(train_loader, "generator", None)),
        "cur_step": trainer.cur_step,
        "best_valid_score": trainer.best_valid_score,
        "best_valid_result": copy.deepcopy(trainer.best_valid_result),
        "train_loss_dict": dict(trainer.train_loss_dict),
        "best": best,
        **extra,
    }


def restore(trainer, train_loader, state: dict) -> None:
    """Put ``state`` (:func:`snapshot`) back into ``trainer``; it continues at epoch + 1."""
    model = trainer.model
    model.load_state_dict(state["state_dict"])
    model.load_other_parameter(state["other_parameter"])
    set_plain_attributes(model, state["attributes"])
    trainer.optimizer.load_state_dict(state["optimizer"])  # moved to the parameters' device
    trainer.start_epoch = state["epoch"] + 1
    trainer.cur_step = state["cur_step"]
    trainer.best_valid_score = state["best_valid_score"]
    trainer.best_valid_result = state["best_valid_result"]
    trainer.train_loss_dict.update(state["train_loss_dict"])
    set_random_states(state["random"], getattr(train_loader, "generator", None))


def write(state: dict, path) -> None:
    """Write ``state`` to ``path`` atomically (a killed write leaves the previous file), in
    the format of :mod:`userfair.files.safe_pth`: reading it back runs no code."""
    write_pth(state, path)


def load(path, settings: str) -> dict | None:
    """The state in ``path`` when it exists and was written with ``settings`` (a
    :func:`fingerprint`), else None; a file of other settings or an unreadable one is
    ignored with a log line (the run starts from epoch 0 and overwrites it). A file that
    would run code if loaded (a pickle: the format before, a crafted file) is refused
    without being loaded, with a warning, and replaced the same way."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        state = read_pth(path)
    except UnsafeFileError as error:
        log.warning("ignoring %s; training from epoch 0, which replaces it", error.reason)
        return None
    except Exception as error:  # a damaged file only costs the epochs it held
        log.warning("ignoring %s: unreadable (%s); training from epoch 0", path, error)
        return None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        log.warning("ignoring %s: not a resume state of this version", path)
        return None
    if state.get("settings") != settings:
        log.info(
            "ignoring %s: written with other settings (%s, now %s); training from epoch 0",
            path,
            state.get("settings"),
            settings,
        )
        return None
    return state


class Checkpointer:
    """Keeps the latest end-of-epoch state in memory, writes it to ``path`` every ``every``
    epochs and, while :meth:`on_sigterm` is active, when the process receives SIGTERM (then
    the process exits with status 143)."""

    def __init__(self, path, settings: str, every: int):
        if every < 1:
            raise ValueError(f"checkpoint_every must be >= 1, not {every}")
        self.path = Path(path)
        self.settings = settings
        self.every = every
        self.latest: dict | None = None
        self.written_epoch: int | None = None

    def update(self, state: dict) -> None:
        """Record the state after an epoch; write it when its epoch is due."""
        state = {"format": FORMAT, "settings": self.settings, **state}
        self.latest = state  # one assignment: a signal sees the old state or the new one
        if (state["epoch"] + 1) % self.every == 0:
            self.flush()

    def flush(self) -> None:
        state = self.latest
        if state is None or self.written_epoch == state["epoch"]:
            return
        write(state, self.path)
        self.written_epoch = state["epoch"]
        log.info("wrote %s (epoch %d)", self.path, state["epoch"])

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def on_sigterm(self) -> Iterator[None]:
        """Inside the block, SIGTERM writes the latest state and exits (status 143)."""

        def handler(signum, frame):
            log.warning("SIGTERM received; saving the latest epoch before exiting")
            if self.latest is None:
                log.warning("no epoch finished yet: nothing to save")
            else:
                self.flush()
            raise SystemExit(128 + signal.SIGTERM)

        previous: Callable | int | None = signal.signal(signal.SIGTERM, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def environment() -> dict:
    """Library versions a resumed run must share with the run that wrote the state."""
    import recbole

    return {"torch": torch.__version__, "recbole": recbole.__version__}
