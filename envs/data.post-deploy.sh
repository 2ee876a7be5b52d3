#!/usr/bin/env bash
# Snakemake runs this inside the freshly created conda env (see the env file next to it).
# recbole 1.2.1 declares ray<=2.6.3, which only its hyper-parameter search imports; this
# workflow never uses that, and a pip section of an env file cannot say --no-deps.
set -euo pipefail
python -m pip install --no-deps recbole==1.2.1
