"""userfair as a package: the declared dependency ranges against the lock, what the library
imports, what an import says without its extra (the base install imports cleanly), the sdist
and the wheel, the DataFrame API, and (slow) the wheel installed with only its declared
dependencies into a fresh virtual environment."""

from __future__ import annotations

import ast
import functools
import json
import math
import os
import re
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from email.parser import Parser
from importlib.metadata import packages_distributions
from pathlib import Path

import pandas as pd
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import userfair
from userfair.cli import main
from userfair.evaluate import evaluate
from userfair.files.inputs import load_inputs, read_genre_matrix
from userfair.files.io import InputError, write_inter
from userfair.measures import NAMES as KEYS
from userfair.workflow import figure_registry

from conftest import REPO
from measures_data import random_split, write_item_file
from test_envs import imports_of, requirement_pins, userfair_closure

LIBRARY = REPO / "workflow" / "userfair"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
#: The modules of the measures and of `userfair evaluate` (``_kernels``: imported by UF).
MEASURES = ["cli", "frames", "evaluate", "files/inputs", "formulas/_kernels"]
#: The package data: the paper's printed tables (userfair.workflow.reproduction).
PAPER_NUMBERS = [f"workflow/paper_numbers/table{n}.csv" for n in (1, 2, 3)] + [
    "workflow/data/costs.csv",
    "workflow/data/scatter_parts.json",
    "workflow/data/dense_parts.json",
]
#: Must never be imported by the measures.
WORKFLOW_ONLY = ["torch", "recbole", "snakemake", "matplotlib", "seaborn", "requests", "faiss"]


def declared(extra: str | None = None) -> list[Requirement]:
    texts = PROJECT["dependencies"] if extra is None else PROJECT["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


@functools.cache
def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in _packages().get(module, [module])}


@functools.cache
def _packages() -> dict[str, list[str]]:
    return packages_distributions()


def close(a: float, b: float, tol: float = 1e-12) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=tol, abs_tol=tol)


# --- declared dependencies ----------------------------------------------------------------


def test_extras_are_gpu_workflow_recbole_and_torch_is_optional():
    assert set(PROJECT["optional-dependencies"]) == {"gpu", "workflow", "recbole"}
    core = {canonicalize_name(r.name) for r in declared()}
    assert core == {"numpy", "scipy", "pandas", "pyarrow", "numba", "psutil", "pyyaml"}
    assert [r.name for r in declared("gpu")] == ["torch"]


@pytest.mark.parametrize("extra", [None, "gpu", "workflow", "recbole"])
def test_lock_satisfies_declared_ranges(extra):
    """Every package the library declares is pinned in requirements.txt (torch: in
    scripts/setup-venv.sh) at a version inside the declared range."""
    pins = requirement_pins()
    for req in declared(extra):
        name = canonicalize_name(req.name)
        assert req.marker is None and not req.extras, req
        assert req.specifier, f"{req}: no version range"
        assert name in pins, f"{req}: not pinned in requirements.txt"
        assert req.specifier.contains(Version(pins[name]), prereleases=True), (
            f"{req}: the lock pins {name}=={pins[name]}, outside the range"
        )


def module_level_closure(names: list[str]) -> set[str]:
    """Top-level third-party modules imported when the userfair modules ``names`` are
    imported (module level only, following userfair's own imports)."""
    return userfair_closure([LIBRARY / f"{n}.py" for n in names])[1]


def every_import(path: Path) -> set[str]:
    """Top-level modules a file imports anywhere (functions included), stdlib excluded."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "userfair"}


def test_measures_import_only_core_dependencies():
    core = {canonicalize_name(r.name) for r in declared()}
    gaps = {
        m: distributions_of(m)
        for m in module_level_closure(MEASURES)
        if not distributions_of(m) & core
    }
    assert not gaps, f"the measures import modules of undeclared packages: {gaps}"


def test_every_library_import_is_declared():
    allowed = {
        canonicalize_name(r.name)
        for extra in (None, "gpu", "workflow", "recbole")
        for r in declared(extra)
    }
    gaps = [
        f"{path.relative_to(LIBRARY)}: {module}"
        for path in sorted(LIBRARY.rglob("*.py"))
        for module in every_import(path)
        if not distributions_of(module) & allowed
    ]
    assert not gaps, gaps


def run_python(code: str, python: str | Path = sys.executable, **kwargs):
    proc = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, timeout=300, **kwargs
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


FOOTPRINT = """
import json, sys
found = lambda names: sorted(n for n in names if n in sys.modules)
import userfair
bare = found(["numpy", "pandas", "scipy", "numba"])
from userfair.cli import main
try:
    main(["evaluate", "--help"])
except SystemExit:
    pass
help_ = found(["numpy", "pandas", "scipy", "numba"])
import userfair.frames, userfair.evaluate, userfair.files.inputs, userfair.formulas.effectiveness
import userfair.similarity.pairwise, userfair.formulas.fairness, userfair.formulas._kernels
measures = found(%r)
print(json.dumps({"bare": bare, "help": help_, "measures": measures}), file=sys.stderr)
"""


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_import_footprint():
    """`import userfair` and `userfair evaluate --help` load no numpy/pandas; the measures'
    modules load none of the workflow's packages (even where they are installed)."""
    proc = subprocess.run(
        [sys.executable, "-c", FOOTPRINT % WORKFLOW_ONLY],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    found = json.loads(proc.stderr.strip().splitlines()[-1])
    assert found == {"bare": [], "help": [], "measures": []}, found


#: Modules whose import costs every process that loads them a third of a second or more:
#: parsing the workflow (each Snakemake start, each cluster job's own Snakemake) and the jobs
#: that compute no measure must not pay for them (numba: 0.3 s; scipy.stats: 0.5 s).
HEAVY = ["numba", "scipy.stats", "torch", "matplotlib"]
#: The step modules of jobs that compute no measure and draw nothing (data, selection, targets,
#: plan): they import only what their step reads and writes.
LIGHT_STEPS = ["data", "selection", "targets", "plan"]
LOADED = """
import json, sys
for module in %r:
    __import__(module)
print(json.dumps(sorted(n for n in %r if n in sys.modules)))
"""


def parse_time_modules() -> list[str]:
    """The userfair modules the Snakefile and its rule files import (read from their import
    statements: ``from P import a, b`` names P and, where they are modules, P.a and P.b)."""
    found = set()
    statement = re.compile(
        r"^from (userfair[\w.]*) import (\([^)]*\)|.*)$|^import (userfair[\w.]*)", re.M
    )
    rules = REPO / "workflow" / "rules"
    for path in [REPO / "workflow" / "Snakefile", *rules.rglob("*.smk")]:
        for package, names, module in statement.findall(path.read_text()):
            if module:
                found.add(module)
                continue
            found.add(package)
            for name in re.findall(r"\w+", names.split("#")[0]):
                dotted = f"{package}.{name}"
                where = REPO / "workflow" / dotted.replace(".", "/")
                if where.with_suffix(".py").is_file() or (where / "__init__.py").is_file():
                    found.add(dotted)
    return sorted(found)


@pytest.mark.slow  # fresh Python processes
@pytest.mark.parametrize("what", ["parse", "light jobs"])
def test_parsing_the_workflow_and_light_jobs_load_no_heavy_module(what):
    """The workflow's parse-time imports, and a light job's (its script's job log and step
    module), load none of :data:`HEAVY`: userfair.plugins imports numba only to compute a
    pair term, and the groupings a config asks for are read without the bootstrap's
    kernels."""
    modules = parse_time_modules()
    assert "userfair.workflow.schema" in modules and len(modules) > 10, modules
    if what == "light jobs":
        modules = ["userfair.workflow.joblog"] + [
            f"userfair.workflow.steps.{s}" for s in LIGHT_STEPS
        ]
    loaded = run_python(LOADED % (modules, HEAVY))
    assert json.loads(loaded.strip().splitlines()[-1]) == [], modules


NO_TORCH = """
import sys
sys.modules["torch"] = None  # `import torch` now raises ImportError, as where it is absent
sys.path.insert(0, %r)
import json
from measures_data import random_split
from userfair import evaluate_frames
from userfair.engine._backend import resolve
train, test, topk, _ = random_split(2)
auto = evaluate_frames(train, test, topk, device="auto")
cpu = evaluate_frames(train, test, topk, device="cpu")
message = ""
try:
    resolve("torch-cpu")
except ValueError as error:
    message = str(error)
print(json.dumps({"same": all(auto[k] == cpu[k] or auto[k] != auto[k] for k in cpu
                              if k != "seconds"), "message": message}))
"""


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_auto_device_falls_back_to_numpy_without_torch():
    out = json.loads(run_python(NO_TORCH % str(REPO / "tests")).strip().splitlines()[-1])
    assert out["same"]
    assert "needs torch" in out["message"] and "userfair[gpu]" in out["message"]


# --- what an import says when an extra is missing -----------------------------------------


#: The same absence by refusing the modules on sys.meta_path: ``sys.modules[name] = None``
#: cannot stand for torch where scipy is used, as scipy's array-API helpers read
#: ``sys.modules["torch"].Tensor`` whenever "torch" is in sys.modules.
REFUSE = """
import importlib.abc
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r} (refused)", name=name)
sys.meta_path.insert(0, Refuse())
"""


def without_extras(absent: list[str], code: str, refuse: bool = False, **environ: str) -> str:
    """What ``code`` prints in a fresh interpreter where the modules ``absent`` cannot be
    imported (``sys.modules[name] = None``, or refused by a finder: ``import name`` raises
    ImportError, as where the package is not installed)."""
    env = dict(os.environ) | environ
    block = REFUSE if refuse else "for name in ABSENT:\n    sys.modules[name] = None\n"
    return run_python(f"import sys\nABSENT = {absent!r}\n{block}{code}", env=env).strip()


#: Imports each of MODULES in turn and prints their ImportError messages as JSON ("" where
#: the import succeeds). Between two imports every userfair module is dropped from
#: sys.modules, so that each import runs the package's own code again, as in a fresh
#: interpreter: what the others loaded before it are third-party modules, which an import
#: of userfair finds or refuses the same way whoever loaded them.
IMPORT_EACH = """
import importlib, json
said = {}
for module in MODULES:
    try:
        importlib.import_module(module)
        said[module] = ""
    except ImportError as error:
        said[module] = str(error)
    for name in [n for n in sys.modules if n == "userfair" or n.startswith("userfair.")]:
        del sys.modules[name]
print(json.dumps(said))
"""


def import_errors(modules: list[str], absent: list[str], refuse: bool = False) -> dict[str, str]:
    """The ImportError message of importing each of ``modules`` without the modules
    ``absent`` ("" where the import succeeds), from one fresh interpreter (IMPORT_EACH)."""
    code = f"MODULES = {modules!r}\n{IMPORT_EACH}"
    return json.loads(without_extras(absent, code, refuse=refuse).splitlines()[-1])


def import_error(module: str, absent: list[str], refuse: bool = False) -> str:
    """The ImportError message of importing ``module`` without the modules ``absent``;
    "" when the import succeeds."""
    return import_errors([module], absent, refuse=refuse)[module]


def extras_modules() -> list[str]:
    """The top-level modules of the packages that only the extras declare (torch, recbole,
    faiss, snakemake, matplotlib, ...), as installed here."""
    base = {canonicalize_name(r.name) for r in declared()}
    extra = {
        canonicalize_name(r.name)
        for name in ("gpu", "workflow", "recbole")
        for r in declared(name)
    } - base  # fmt: skip
    modules = {
        m for m, dists in _packages().items() if {canonicalize_name(d) for d in dists} & extra
    }
    assert {"torch", "recbole", "matplotlib", "requests", "jsonschema", "faiss"} <= modules
    return sorted(modules - {"_distutils_hack"})  # setuptools' hook, loaded at start-up


def base_imports() -> str:
    """Code that imports every top-level module but the subpackage userfair.workflow,
    userfair.recbole, userfair.recbole_measures, userfair.recbole_collector and
    userfair.recbole_patches (the recbole extra) and userfair.streamed._streaming_torch (the gpu
    extra, imported lazily by userfair.engine._backend), and prints those that failed as JSON,
    with their error."""
    aside = {"recbole", "recbole_measures", "recbole_collector", "recbole_patches"}
    aside.add("_streaming_torch")
    modules = ["userfair"] + [
        ".".join(("userfair", *p.relative_to(LIBRARY).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for p in sorted(LIBRARY.rglob("*.py"))
        if p.stem not in aside and p.relative_to(LIBRARY).parts[0] != "workflow"
    ]
    assert {
        "userfair.engine.route",
        "userfair.evaluate",
        "userfair.decomposition.decompose",
    } <= set(modules)
    assert not {
        "userfair.workflow.models",
        "userfair.workflow.costs",
        "userfair.workflow.tables",
    } & set(modules)
    return (
        "import importlib, json\nfailed = {}\n"
        f"for module in {modules!r}:\n"
        "    try:\n        importlib.import_module(module)\n"
        "    except Exception as error:\n        failed[module] = repr(error)\n"
        "print(json.dumps(failed))"
    )


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_the_base_install_imports_cleanly():
    """Every top-level module (but those of base_imports' docstring) imports with only the
    base dependencies: the extras' packages refused (and, slow, in a fresh environment
    without them: test_wheel_in_a_fresh_venv_gives_the_repository_measures)."""
    out = without_extras(extras_modules(), base_imports(), refuse=True)
    failed = json.loads(out.splitlines()[-1])
    assert not failed, failed


#: The drawing modules (every module of userfair.workflow that declares a figure,
#: figure_registry.drawing_modules, a new one too): each checks matplotlib and seaborn, and
#: the figures' step (steps.figures) imports it.
DRAWING_MODULES = {
    name.rpartition(".")[2]: (["matplotlib", "seaborn"], "figures")
    for name in figure_registry.drawing_modules()
}
#: The modules of userfair.workflow that check for part of the workflow extra, what each
#: needs, and a rule step that imports it.
WORKFLOW_MODULES = {
    "download": (["requests", "tqdm"], "data"),
    "figure_style": (["matplotlib", "seaborn"], "figures"),
    **DRAWING_MODULES,
    "embeddings": (["torch", "recbole"], None),
    "recbole_fast": (["torch", "recbole"], "models"),
    "recbole_setup": (["torch", "recbole"], "models"),
    "recommenders": (["torch", "recbole"], "models"),
    "shared_dataset": (["torch", "recbole"], "models"),
    "resume": (["torch"], "models"),
    "schema": (["jsonschema"], None),
    "userknn": (["torch", "recbole"], "models"),
}


def test_every_workflow_module_that_imports_an_extras_package_checks_it():
    """Module level: a function may import an optional package itself (download finds the
    ml-100k inside RecBole when it is there)."""
    base = {"numpy", "scipy", "pandas", "pyarrow", "numba", "psutil", "yaml"}
    for path in sorted((LIBRARY / "workflow").glob("*.py")):
        third = {
            name.split(".")[0]
            for name in imports_of(path)
            if name.split(".")[0] not in sys.stdlib_module_names | base | {"userfair"}
        }
        needs = WORKFLOW_MODULES.get(path.stem, ([], None))[0]
        assert third <= set(needs), f"{path.name} imports {third}, checks only {needs}"


#: The modules whose import is checked without each extra's package.
RECBOLE_MODULES = ["userfair.recbole", "userfair.recbole_patches"]


@pytest.fixture(scope="module")
def said_without():
    """absent package -> module -> the ImportError message of importing that module without
    it: one fresh interpreter per package (not one per module and package) for the modules
    of WORKFLOW_MODULES that need it, their rules' steps and, without torch or RecBole,
    RECBOLE_MODULES. Only modules that stop at the package are imported (a module that
    imports fine would load torch, RecBole and matplotlib for nothing)."""
    said = {}
    for name in sorted({name for needs, _ in WORKFLOW_MODULES.values() for name in needs}):
        users = [(m, step) for m, (needs, step) in WORKFLOW_MODULES.items() if name in needs]
        modules = [f"userfair.workflow.{m}" for m, _ in users]
        modules += sorted({f"userfair.workflow.steps.{step}" for _, step in users if step})
        modules += RECBOLE_MODULES if name in ("torch", "recbole") else []
        # refused by a finder: sys.modules[name] = None would break scipy on the way (REFUSE)
        said[name] = import_errors(modules, [name], refuse=True)
    return said


@pytest.mark.parametrize("module", sorted(WORKFLOW_MODULES))
@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_a_workflow_module_names_its_extra_and_what_is_missing(module, said_without):
    needs, step = WORKFLOW_MODULES[module]
    for absent in needs:
        message = said_without[absent][f"userfair.workflow.{module}"]
        assert message == (
            f'userfair.workflow.{module} needs the "workflow" extra: '
            f'pip install "userfair[workflow]" (missing: {absent})'
        ), message
        if step:  # a rule's step that imports it names an extra and what is missing
            said = said_without[absent][f"userfair.workflow.steps.{step}"]
            assert said.endswith(f"(missing: {absent})") and 'pip install "userfair[' in said


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_one_interpreter_per_absence_says_what_a_fresh_one_says(said_without):
    """said_without imports many modules in one interpreter, the package refused by a
    finder: for one module and one step a fresh interpreter of their own, the package
    blocked in sys.modules instead, gives the same message."""
    for module in ("userfair.workflow.recommenders", "userfair.workflow.steps.models"):
        assert import_error(module, ["recbole"]) == said_without["recbole"][module], module


@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_each_stage_imports_without_the_others_packages():
    """The subpackage itself and the steps of the measures and who stages import without
    torch, RecBole and matplotlib (their conda envs do not have them); the figures' steps
    without torch; the models stage's select (steps.selection), whose job reads JSON
    records only, without torch and RecBole either."""
    training = ["torch", "recbole", "matplotlib", "seaborn", "requests", "tqdm"]
    stages = ("measures", "who", "uncertainty", "selection")
    modules = ["userfair.workflow"] + [f"userfair.workflow.steps.{s}" for s in stages]
    said = import_errors(modules, training, refuse=True)
    assert said == {module: "" for module in modules}, said
    figures = import_error("userfair.workflow.steps.figures", ["torch", "recbole"], refuse=True)
    assert figures == ""


@pytest.mark.parametrize("module", RECBOLE_MODULES)
@pytest.mark.parametrize("absent", ["torch", "recbole"])
@pytest.mark.slow  # a fresh Python process (the fast lane stays in-process)
def test_recbole_modules_name_the_recbole_extra(module, absent, said_without):
    message = said_without[absent][module]
    assert 'pip install "userfair[recbole]"' in message, message
    assert f"missing: {absent}" in message and module in message, message


# --- the DataFrame API --------------------------------------------------------------------


@pytest.fixture()
def frames_and_files(tmp_path):
    """A split with a validation split whose item appears in a list, item genres, and the
    same data written as the workflow's files."""
    train, test, topk, item_genres = random_split(11)
    valid = pd.DataFrame({"user_id": ["u003", "u007"], "item_id": ["v000", "i001"]})
    last = topk.index[(topk.user_id == "u004") & (topk["rank"] == 10)]
    topk.loc[last, "item_id"] = "v000"  # an item known only from the validation split
    genres = pd.DataFrame(
        {
            "item_id": sorted(item_genres),
            "genre": [" ".join(sorted(item_genres[i])) for i in sorted(item_genres)],
        }
    )
    write_inter(train, tmp_path / "d.train.inter")
    write_inter(valid, tmp_path / "d.valid.inter")
    write_inter(test, tmp_path / "d.test.inter")
    topk.to_parquet(tmp_path / "topk.parquet")
    write_item_file(tmp_path / "d.item", item_genres)
    return {
        "train": train,
        "test": test,
        "topk": topk,
        "valid": valid,
        "genres": genres,
        "item_genres": item_genres,
        "path": tmp_path,
    }


def file_args(path: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "--train",
        str(path / "d.train.inter"),
        "--test",
        str(path / "d.test.inter"),
        "--valid",
        str(path / "d.valid.inter"),
        "--topk",
        str(path / "topk.parquet"),
        "--item-features",
        str(path / "d.item"),
        "--json",
        *extra,
    ]


@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_evaluate_frames_equals_the_file_route(frames_and_files, capsys, gamma):
    data = frames_and_files
    code = main(file_args(data["path"], "--gamma", str(gamma), "--device", "cpu", "--k", "8"))
    assert code == 0
    from_files = json.loads(capsys.readouterr().out)
    from_frames = userfair.evaluate_frames(
        data["train"], data["test"], data["topk"], valid=data["valid"],
        item_features=data["genres"], k=8, gamma=gamma, device="cpu",
    )  # fmt: skip
    assert list(from_frames)[:18] == list(KEYS) and "seconds" in from_frames
    for key in KEYS:
        assert close(from_frames[key], from_files[key]), (key, from_frames[key], from_files[key])


def test_item_features_as_a_dataframe(frames_and_files):
    data = frames_and_files
    inputs = load_inputs(data["train"], data["test"], data["topk"], valid=data["valid"])
    from_file = read_genre_matrix(data["path"] / "d.item", inputs.items)
    as_strings = read_genre_matrix(data["genres"], inputs.items)
    as_lists = read_genre_matrix(
        pd.DataFrame(
            {
                "item_id": list(data["item_genres"]),
                "genres": [sorted(g) or None for g in data["item_genres"].values()],
            }
        ),
        inputs.items,
    )
    for matrix in (as_strings, as_lists):
        assert matrix.shape == from_file.shape and (matrix != from_file).nnz == 0
    with pytest.raises(InputError, match=r"ITEM_FEATURES \(DataFrame\): no genre column"):
        read_genre_matrix(pd.DataFrame({"item_id": ["i001"], "tags": ["a"]}), inputs.items)
    with pytest.raises(InputError, match="missing column 'item_id'"):
        read_genre_matrix(pd.DataFrame({"genre": ["a"]}), inputs.items)


def test_evaluate_frames_forwards_options_and_reports_bad_input(frames_and_files):
    data = frames_and_files
    frames = (data["train"], data["test"], data["topk"])
    inputs = load_inputs(*frames, valid=data["valid"])
    expected = evaluate(inputs, epsilon=0.2, block_size=5, device="cpu")
    got = userfair.evaluate_frames(
        *frames, valid=data["valid"], epsilon=0.2, block_size=5, device="cpu"
    )
    assert all(close(got[key], expected[key]) for key in KEYS)
    with pytest.raises(TypeError):
        userfair.evaluate_frames(*frames, valid=data["valid"], no_such_option=1)
    with pytest.raises(InputError, match=r"TOPK \(DataFrame\): field 'item_id'"):
        userfair.evaluate_frames(*frames)  # v000 is known only from the validation split
    with pytest.raises(ValueError, match="genres"):
        userfair.evaluate_frames(*frames, valid=data["valid"], gamma=0.5)


# --- the sdist and the wheel --------------------------------------------------------------


@pytest.fixture(scope="session")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist built from the repository and the wheel built from the sdist (as
    `python -m build` does), with this environment's setuptools and no network."""
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])",
         str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    (sdist,) = out.glob("userfair-*.tar.gz")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(out), str(sdist)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    (wheel,) = out.glob("userfair-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.mark.packaging
def test_sdist_and_wheel_hold_the_library_and_its_metadata(dists):
    version = userfair.__version__
    modules = sorted(p.relative_to(LIBRARY).as_posix() for p in LIBRARY.rglob("*.py"))
    assert "workflow/__init__.py" in modules and "workflow/steps/data.py" in modules
    assert dists["sdist"].name == f"userfair-{version}.tar.gz"
    with tarfile.open(dists["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    root_files = {"README.md", "LICENSE", "CHANGELOG.md", "pyproject.toml", "PKG-INFO"}
    assert root_files <= names, root_files - names
    assert {f"workflow/userfair/{m}" for m in modules} <= names
    assert {f"workflow/userfair/{t}" for t in PAPER_NUMBERS} <= names
    workflow = ("tests/", "config/", "workflow/Snakefile", "workflow/rules/", "workflow/scripts/")
    assert not any(n.startswith(workflow) for n in names)

    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = set(wheel.namelist())
        info = f"userfair-{version}.dist-info"
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert {f"userfair/{m}" for m in modules} <= names
    assert {
        f"userfair/{t}" for t in PAPER_NUMBERS
    } <= names  # userfair.workflow.reproduction's data
    assert f"{info}/licenses/LICENSE" in names
    assert metadata["Version"] == version and metadata["License-Expression"] == "MIT"
    assert metadata["Description-Content-Type"] == "text/markdown"
    requires = {str(Requirement(r)) for r in metadata.get_all("Requires-Dist")}
    wanted = {str(r) for r in declared()}
    wanted |= {
        f'{r}; extra == "{extra}"'
        for extra in ("gpu", "workflow", "recbole")
        for r in declared(extra)
    }
    assert requires == wanted
    assert "userfair = userfair.cli:main" in entry_points


# --- the wheel in a fresh virtual environment (slow: pip resolves the dependencies) -------


def fresh_environ() -> dict[str, str]:
    """The environment of a process of the fresh virtual environment: no PYTHONPATH (which
    may hold the repository's workflow/ and its userfair.egg-info)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="session")
def fresh_venv(dists, tmp_path_factory) -> Path:
    """A new virtual environment holding the wheel and only what it declares: no torch,
    RecBole or Snakemake. pip resolves the ranges from the package index (its cache makes
    later runs fast); this needs the index to be reachable."""
    root = tmp_path_factory.mktemp("fresh-venv")
    # This environment's pip installs into the new one (--python): no ensurepip, and no
    # .pyc compilation of numpy/scipy/pandas up front (the slow part on a busy machine).
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=300
    )
    python = root / "venv" / "bin" / "python"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install",
         "--disable-pip-version-check", "--no-compile", "-q", str(dists["wheel"])],
        capture_output=True, text=True, timeout=1200, env=fresh_environ(),
    )  # fmt: skip
    assert proc.returncode == 0, f"pip install of the wheel failed:\n{proc.stderr[-6000:]}"
    return root / "venv"


@pytest.mark.slow
@pytest.mark.packaging
def test_wheel_in_a_fresh_venv_gives_the_repository_measures(fresh_venv, frames_and_files):
    python, command = fresh_venv / "bin" / "python", fresh_venv / "bin" / "userfair"
    env = fresh_environ()
    absent = run_python(
        "import importlib.util as u; print([m for m in %r if u.find_spec(m)])" % WORKFLOW_ONLY,
        python, env=env,
    )  # fmt: skip
    assert absent.strip() == "[]", f"the fresh environment holds {absent}"
    installed = run_python(
        "import userfair, os; print(os.path.dirname(userfair.__file__))",
        python,
        cwd=fresh_venv,
        env=env,
    )
    assert Path(installed.strip()).is_relative_to(fresh_venv), installed

    # The base install imports cleanly; the subpackage's modules and the recbole modules
    # name their extras (torch and the rest truly absent here).
    out = run_python(base_imports(), python, cwd=fresh_venv, env=env)
    failed = json.loads(out.splitlines()[-1])
    assert not failed, failed
    for module, extra in [
        ("userfair.workflow.recommenders", "workflow"),
        ("userfair.recbole", "recbole"),
    ]:
        code = f"try:\n    import {module}\nexcept ImportError as error:\n    print(error)"
        message = run_python(code, python, cwd=fresh_venv, env=env).strip()
        assert message.startswith(
            f'{module} needs the "{extra}" extra: pip install "userfair[{extra}]" (missing: torch'
        ), message

    start = time.perf_counter()
    proc = subprocess.run(
        [str(command), "evaluate", "--help"], capture_output=True, text=True, env=env
    )
    print(f"userfair evaluate --help without torch: {time.perf_counter() - start:.3f} s")
    assert proc.returncode == 0 and "--topk" in proc.stdout, proc.stderr

    # Default device (auto: numpy without torch), UF through numba, genres from the .item file.
    data = frames_and_files
    proc = subprocess.run(
        [str(command), *file_args(data["path"], "--gamma", "0.5")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    printed = json.loads(proc.stdout)
    here = evaluate(
        load_inputs(data["train"], data["test"], data["topk"], valid=data["valid"],
                    item_features=data["path"] / "d.item"),
        gamma=0.5, device="cpu",
    )  # fmt: skip
    assert list(printed)[:18] == list(KEYS)
    for key in KEYS:
        assert close(printed[key], here[key]), (key, printed[key], here[key])

    proc = subprocess.run(
        [str(command), *file_args(data["path"], "--device", "torch-cpu")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 2 and "needs torch" in proc.stderr, proc.stderr[-4000:]

    footprint = subprocess.run(
        [str(python), "-c", FOOTPRINT % WORKFLOW_ONLY],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert footprint.returncode == 0, footprint.stderr[-4000:]
    found = json.loads(footprint.stderr.strip().splitlines()[-1])
    assert found == {"bare": [], "help": [], "measures": []}, found
