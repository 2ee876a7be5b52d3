"""Individual user fairness in recommender systems: the measures of the PUF paper and the
pieces of the workflow that reproduces it. Pure functions; no Snakemake inside."""

__version__ = "0.1.0"
