"""Individual user fairness in recommender systems: the measures of the PUF paper, their
inference, the ``userfair`` command and the RecBole metrics; the workflow that reproduces
the paper is the subpackage :mod:`userfair.workflow`.

The library is laid out by role (docs/architecture.md#the-library): what each measure is
(``measures``), their formulas (``formulas``), user similarity (``similarity``), inputs and
files (``files``), where the pair work runs (``engine``), the streamed route
(``streamed``), the bootstrap (``bootstrap``), who is treated unfairly
(``decomposition``) and the opt-in measures (``opt_in``); ``evaluate`` runs every measure
of one top-k list, ``frames`` does it for DataFrames, ``plugins`` is the interface of the
measures a user brings. They need only numpy, scipy, pandas, pyarrow, numba, psutil and
pyyaml; torch is optional (``device="cuda"`` or ``"torch-cpu"``; ``"auto"`` falls back to
numpy without it); ``userfair.recbole`` and ``userfair.recbole_patches`` need the
``recbole`` extra and say so when imported without it. :mod:`userfair.workflow` needs the
``workflow`` extra and names it when imported without it. No module imports Snakemake: the
rule scripts (workflow/scripts/) read the ``snakemake`` object and pass plain values in;
only :func:`userfair.workflow.joblog.job_log` takes that object itself (duck-typed: its
log, rule and wildcards).

``import userfair`` imports nothing beyond this file.
"""

__version__ = "0.1.0"

__all__ = ["evaluate_frames", "__version__"]


def __getattr__(name: str):
    # Lazy: `import userfair` stays free of numpy/pandas until the API is used.
    if name == "evaluate_frames":
        from userfair.frames import evaluate_frames

        return evaluate_frames
    raise AttributeError(f"module 'userfair' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
