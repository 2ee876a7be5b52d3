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


class _TrustedCheckpointTorch(types.ModuleType):
    """``torch`` as seen by recbole.trainer.trainer, with ``load`` defaulting to
    ``weights_only=False``: torch 2.6 made ``weights_only=True`` the default, and RecBole's
    checkpoints pickle its Config, so ``Trainer.evaluate(load_best_model=True)`` and
    ``resume_checkpoint`` fail. Only RecBole's trainer sees this; everything else keeps
    torch's safe default. The checkpoints are the ones this workflow wrote itself."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def load(self, *args, **kwargs):
        kwargs.setdefault("weights_only", False)
        return self._module.load(*args, **kwargs)


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
    if not isinstance(trainer.torch, _TrustedCheckpointTorch):
        trainer.torch = _TrustedCheckpointTorch(torch)
    _applied = True
