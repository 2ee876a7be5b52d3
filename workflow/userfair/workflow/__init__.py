"""The Snakemake workflow's own modules: what only the workflow that reproduces the PUF paper
needs, behind the ``workflow`` extra (``pip install "userfair[workflow]"``).

``download`` and ``testdata`` (the raw datasets, the tiny test data), ``recommenders``,
``recbole_fast``, ``resume`` and ``userknn`` (training with RecBole), ``schema`` (the
config check), ``plots`` (the figures) and ``steps`` (the rule logic: one module per stage,
one function per rule, called by workflow/scripts/). The measures and the other top-level
modules of :mod:`userfair` need only the base dependencies; nothing outside this subpackage
imports it.

Importing this package checks (``importlib.util.find_spec``: nothing is imported) that the
extra's modules are installed and otherwise raises an ImportError naming the extra and the
missing modules, instead of a bare ModuleNotFoundError from deep inside a module. Snakemake
and faiss are not checked: the rule scripts are run by Snakemake, and only RecBole's NCL
model imports faiss.

Inside the workflow the Snakefile sets ``USERFAIR_SKIP_EXTRA_CHECK=1``, which turns the check
off: each rule runs in the conda env of its stage (envs/*.yaml), which holds only what that
stage imports (tests/test_envs.py checks it), not the whole extra.
"""

import os

from userfair._extras import require

#: The import names of the workflow extra's packages that the check looks for.
MODULES = (
    "torch",
    "recbole",
    "yaml",
    "jsonschema",
    "requests",
    "tqdm",
    "matplotlib",
    "seaborn",
)

if os.environ.get("USERFAIR_SKIP_EXTRA_CHECK") != "1":
    require("workflow", MODULES, __name__)
