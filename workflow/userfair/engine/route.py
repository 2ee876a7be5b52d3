"""Which route the pair measures take, in one place: ``dense`` holds the (m, m) user
similarities in memory, ``stream`` makes row passes that never do
(:mod:`userfair.streamed.streaming`). :func:`choose_route` decides for ``userfair.evaluate``, the
per-user decomposition (``userfair.decomposition.decompose``), the RecBole plugin and, with its own
threshold (``measures.stream_above``), the workflow; :func:`dense_bytes` is the one memory
estimate they all read."""

from __future__ import annotations

import psutil

#: The routes a caller may ask for.
ROUTES = ("auto", "dense", "stream")
#: ``route="auto"`` streams when the dense matrices would take more than this share of the
#: memory available now (``psutil.virtual_memory().available``).
DENSE_MEMORY_FRACTION = 0.5
#: ... or above this many evaluated users, whatever the memory (8 m^2 bytes = 3.2 GB per
#: matrix at 20,000 users). The workflow's measures.stream_above defaults to the same
#: number (a test checks it), so the command and the workflow choose alike.
DENSE_MAX_USERS = 20_000
#: What the dense route computes: the measures (``evaluate``) or every user's share of
#: them (``decompose``); they hold different numbers of (m, m) matrices.
PURPOSES = ("evaluate", "decompose")


def dense_matrices(gamma: float = 1.0, purpose: str = "evaluate") -> int:
    """The (m, m) float64 matrices the dense route holds at once. ``evaluate``: one (cos or
    Jaccard) at gamma = 1; the Jaccard, the genre similarity and their mix when gamma < 1.
    ``decompose``: the cosine, the Jaccard and UF's raw Jaccard, plus the genre similarity
    and the mix when gamma < 1."""
    if purpose == "evaluate":
        return 1 if gamma == 1.0 else 3
    if purpose == "decompose":
        return 3 + 2 * (gamma < 1.0)
    raise ValueError(f"purpose must be one of {PURPOSES}, got {purpose!r}")


def dense_bytes(m: int, gamma: float = 1.0, purpose: str = "evaluate") -> int:
    """Bytes of the (m, m) float64 matrices of :func:`dense_matrices`."""
    return 8 * m * m * dense_matrices(gamma, purpose)


def available_bytes() -> int:
    """The memory the system has available now (psutil)."""
    return psutil.virtual_memory().available


def choose_route(
    m: int,
    gamma: float = 1.0,
    route: str = "auto",
    available: float | None = None,
    *,
    purpose: str = "evaluate",
    max_users: int | None = None,
    given: bool = False,
    sampled: bool = False,
) -> str:
    """``dense`` or ``stream``, decided here for every caller (the library's ``evaluate``
    and ``decompose``, the command, the RecBole plugin, the workflow's DAG): ``route``
    itself unless ``auto``. ``auto``: ``stream`` when ``sampled`` (a sampled estimate runs
    on the streamed route only); ``dense`` when the similarities are ``given`` (the caller
    holds the (m, m) matrices already); else ``stream`` above ``max_users`` evaluated users
    (default :data:`DENSE_MAX_USERS`) or when :func:`dense_bytes` exceed
    :data:`DENSE_MEMORY_FRACTION` of ``available`` bytes (default: :func:`available_bytes`;
    the workflow passes infinity: it decides by the user count alone, at the DAG's build).
    A ValueError for an unknown route, or a sampled estimate asked on the dense route."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    if sampled:
        if route == "dense" or given:
            raise ValueError("a sampled estimate runs on the streamed route, not the dense one")
        return "stream"
    if route != "auto":
        return route
    if given:
        return "dense"
    if m > (DENSE_MAX_USERS if max_users is None else max_users):
        return "stream"
    if available is None:
        available = available_bytes()
    too_big = dense_bytes(m, gamma, purpose) > DENSE_MEMORY_FRACTION * available
    return "stream" if too_big else "dense"


def check_memory(
    m: int, gamma: float = 1.0, available: float | None = None, purpose: str = "decompose"
) -> int:
    """The bytes of :func:`dense_bytes`; a ValueError when they exceed ``available``
    (default: :func:`available_bytes`)."""
    needed = dense_bytes(m, gamma, purpose)
    if available is None:
        available = available_bytes()
    if needed > available:
        raise ValueError(
            f"{m} evaluated users need about {needed / 2**30:.1f} GiB for the in-memory "
            f"route (m x m similarity matrices), {available / 2**30:.1f} GiB available; use "
            "the streamed route (route='stream', --route stream)"
        )
    return needed
