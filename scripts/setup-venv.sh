#!/usr/bin/env bash
# Create (or update) the virtual environment .venv with every pinned dependency and the
# userfair package. Idempotent: a second run only checks that everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
    echo "[setup] creating $VENV with $($PYTHON --version)"
    "$PYTHON" -m venv "$VENV"
fi
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }

stamp="$VENV/.requirements.sha256"
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # torch first: a bare or ranged 'torch' requirement would pull the newest CUDA build.
    echo "[setup] installing torch==2.13.0"
    pip install torch==2.13.0
    echo "[setup] installing requirements.txt (exact versions, --no-deps: see its header)"
    pip install --no-deps -r requirements.txt
    echo "[setup] installing the userfair package (editable)"
    pip install --no-deps --no-build-isolation -e .
    echo "$want" > "$stamp"
fi
# The numba kernels compiled into their on-disk cache once, not by every fresh process
# (docs/performance.md#precompiled-kernels); a no-op while the sources are unchanged.
"$VENV/bin/python" -m userfair.engine.precompile
echo "[setup] $VENV ready: $("$VENV/bin/python" -c 'import torch, recbole, snakemake; print("torch", torch.__version__, "recbole", recbole.__version__, "snakemake", snakemake.__version__)')"
