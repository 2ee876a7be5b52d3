"""Runtime fixes that let RecBole 1.2.1 run on numpy 2, torch >= 2.6 and scipy >= 1.15.

Call :func:`apply` once before RecBole is used (``userfair.workflow.recommenders`` does). Each fix
names the upstream problem and is tested in tests/test_recbole_patches.py. RecBole's
``quick_start`` package imports ``ray`` at import time; this project never imports it
(training goes through Config/Trainer directly), so ray is not needed.
"""

from __future__ import annotations

import types

from userfair._extras import require

#: Modules this one needs beyond the base dependencies (the ``recbole`` extra).
NEEDS = ("torch", "recbole")
require("recbole", NEEDS, __name__)

import numpy as np  # noqa: E402  (after the check, which names the extra to install)
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

from userfair import safe_pth  # noqa: E402
from userfair.io import read_pth  # noqa: E402

# numpy 2 removed these aliases (NEP 52). RecBole's Config.compatibility_settings assigns
# ``np.float = np.float_`` etc., which raises AttributeError on numpy 2 before any training,
# and recbole.evaluator.metrics / recbole.data.interaction then use ``np.float``.
LEGACY_NUMPY_ALIASES = {
    "bool": np.bool_,
    "int": np.int_,
    "float": np.float64,
    "complex": np.complex128,
    "object": np.object_,
    "str": np.str_,
    "long": np.int_,
    "unicode": np.str_,
}

_applied = False


def _compatibility_settings(self) -> None:
    """Replacement of recbole.config.Config.compatibility_settings that only uses names
    numpy 2 still has and never overwrites an attribute numpy defines."""
    for name, target in LEGACY_NUMPY_ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, target)


def _dok_update(self, data: dict) -> None:
    """scipy >= 1.15 dropped ``dok_matrix._update`` (a raw dict.update without checks);
    RecBole's NGCF, NCL, LightGCN, ... build their normalised adjacency with it."""
    self._dict.update(data)


def checkpoint_state(state):
    """RecBole's checkpoint ``state`` with its Config (a pickled object) replaced by the
    model's name, the only part of it RecBole reads back (``resume_checkpoint``)."""
    config = state.get("config") if isinstance(state, dict) else None
    if config is None or isinstance(config, dict):
        return state
    return {**state, "config": {"model": config["model"]}}


class _SafeCheckpointTorch(types.ModuleType):
    """``torch`` as seen by recbole.trainer.trainer, whose ``save`` and ``load`` write and
    read checkpoints in the format of :mod:`userfair.safe_pth` (no pickle; loading runs no
    code): RecBole's own checkpoints pickle its Config, and torch >= 2.6 refuses them with
    ``weights_only=True``, while ``weights_only=False`` would run whatever a crafted file
    names. The Config is stored as the model's name (:func:`checkpoint_state`); the model's
    ``other_parameter`` (tensors, numpy arrays, scipy sparse matrices) is kept. Everything
    else is plain torch."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def save(self, obj, f, *args, **kwargs):
        safe_pth.dump(checkpoint_state(obj), f)

    def load(self, f, map_location=None, **kwargs):
        return read_pth(f, map_location=map_location)


def apply() -> None:
    """Install every fix (idempotent)."""
    global _applied
    if _applied:
        return
    import recbole.config.configurator as configurator
    import recbole.trainer.trainer as trainer

    configurator.Config.compatibility_settings = _compatibility_settings
    _compatibility_settings(None)
    if not hasattr(sp.dok_matrix, "_update"):
        if not hasattr(sp.dok_matrix((1, 1)), "_dict"):
            raise RuntimeError(
                f"scipy {scipy.__version__}: dok_matrix has neither _update "
                "nor _dict; RecBole's graph models cannot be patched"
            )
        sp.dok_matrix._update = _dok_update
    if not isinstance(trainer.torch, _SafeCheckpointTorch):
        trainer.torch = _SafeCheckpointTorch(torch)
    _applied = True
