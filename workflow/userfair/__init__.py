"""Individual user fairness in recommender systems: the measures of the PUF paper and the
pieces of the workflow that reproduces it.

The library never imports Snakemake: the rule scripts (workflow/scripts/) read the
``snakemake`` object and pass plain values in; only :func:`userfair.joblog.job_log` takes
that object itself (duck-typed: its log, rule and wildcards). The measures are pure
functions of arrays; the modules that read and write files say so.
"""

__version__ = "0.1.0"
