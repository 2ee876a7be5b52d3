"""Individual user fairness in recommender systems: the measures of the PUF paper and the
pieces of the workflow that reproduces it.

The measures (:func:`userfair.evaluate_frames`, ``userfair.files.inputs``, ``userfair.evaluate``,
``userfair.formulas.effectiveness``, ``userfair.similarity.pairwise``,
``userfair.formulas.fairness`` and the
``userfair evaluate`` command) need only numpy, scipy, pandas, pyarrow and numba; torch is
optional (``device="cuda"`` or ``"torch-cpu"``; ``"auto"`` falls back to numpy without it).
Every top-level module imports with the base dependencies alone (those and psutil and
pyyaml: ``data``, ``grids``, ``models``, ``costs``, ``tables``, ...), except
``userfair.recbole`` and ``userfair.recbole_patches``, which need the ``recbole`` extra and
say so when imported without it. The workflow's own modules (``download``, ``testdata``,
``recommenders``, ``recbole_fast``, ``resume``, ``userknn``, ``schema``, ``plots`` and the
rule steps ``steps``) are the subpackage :mod:`userfair.workflow`, which needs the
``workflow`` extra and names it when imported without it. No module imports Snakemake: the
rule scripts (workflow/scripts/) read the ``snakemake`` object and pass plain values in;
only :func:`userfair.workflow.joblog.job_log` takes that object itself (duck-typed: its log, rule
and wildcards).

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
