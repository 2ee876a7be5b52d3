"""The Snakemake workflow's own modules: what only the workflow that reproduces the PUF paper
needs, behind the ``workflow`` extra (``pip install "userfair[workflow]"``).

``download`` and ``testdata`` (the raw datasets, the tiny test data), ``recommenders``,
``recbole_fast``, ``resume`` and ``userknn`` (training with RecBole), ``schema`` (the
config check), ``plots`` (the figures) and ``steps`` (the rule logic: one module per stage,
one function per rule, called by workflow/scripts/). The measures and the other top-level
modules of :mod:`userfair` need only the base dependencies; nothing outside this subpackage
imports it.

Each module of the subpackage checks, before its first import of a third-party package, that
the packages it needs (its ``NEEDS``) are installed (``importlib.util.find_spec``: nothing is
imported) and otherwise raises an ImportError naming the extra and the missing modules, e.g.
``userfair.workflow.plots needs the "workflow" extra: pip install "userfair[workflow]"
(missing: matplotlib)``, instead of a bare ModuleNotFoundError from deep inside an import.
A module asks only for what it imports, so each rule's conda env (envs/*.yaml, which holds
what its stage imports, not the whole extra: tests/packaging/test_envs.py) passes the checks of the
modules its rules use.
"""
