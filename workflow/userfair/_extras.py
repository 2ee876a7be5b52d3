"""The check that the modules of an optional extra are installed (pyproject.toml's
``[project.optional-dependencies]``), with an ImportError that names the extra to install
instead of a bare ModuleNotFoundError from deep inside an import.

:func:`require` only looks modules up (``importlib.util.find_spec``); it imports nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


def missing(modules: Iterable[str]) -> list[str]:
    """The top-level modules of ``modules`` that cannot be imported here (absent, or
    blocked with ``sys.modules[name] = None``)."""
    gone = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ValueError:  # in sys.modules without a __spec__ (e.g. a stub): present
            found = True
        except ImportError:  # a finder on sys.meta_path that refuses it
            found = False
        if not found:
            gone.append(name)
    return gone


def require(extra: str, modules: Iterable[str], user: str) -> None:
    """Raise ImportError naming ``extra`` when a module of ``modules`` is missing;
    ``user`` is the module that needs them (its ``__name__``)."""
    gone = missing(modules)
    if gone:
        raise ImportError(
            f'{user} needs the "{extra}" extra: pip install "userfair[{extra}]" '
            f"(missing: {', '.join(gone)})",
            name=gone[0],
        )
