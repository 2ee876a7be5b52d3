"""The workflow's config keys of the settings the ``userfair`` command and the workflow share
(:data:`userfair.bounds.BOUNDS`), and the check of ``k`` against a dataset's items: what
only the workflow's config knows, kept out of the library."""

from __future__ import annotations

#: The workflow's config key of each shared setting (config/config.schema.yaml).
CONFIG_KEYS: dict[str, str] = {
    "k": "k",
    "seed": "seed",
    "measures.epsilon": "epsilon",
    "measures.gamma": "gamma",
    "measures.block_size": "block-size",
    "uncertainty.resamples": "resamples",
    "uncertainty.level": "level",
    "who.resamples": "resamples",
    "who.worst": "worst",
    "who.neighbours": "neighbours",
    "measures.estimate.pairs": "sample-users",
}


def check_items(k, items: int, where: str) -> None:
    """Raise ValueError when the list length ``k`` exceeds the ``items`` of a dataset (no
    list can hold more items than the dataset has); ``where`` names the dataset or file."""
    if isinstance(k, int) and k > items:
        raise ValueError(
            f"config key k: {k} is more than the {items} items of {where}; give k <= {items}"
        )
