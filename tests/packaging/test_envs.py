"""The conda envs, the rule files and the profiles: env files pinned version for version like
requirements.txt, closed under dependencies, installing userfair itself with all its base
dependencies pinned, and enough for the scripts of their rules; every
rule with conda:, log: and resources:; `snakemake --lint`, `snakefmt --check`, `ruff check`
and `ruff format --check` clean; every profile key commented."""

from __future__ import annotations

import ast
import functools
import itertools
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from userfair.workflow import layout

from conftest import BIN, REPO

ENVS = REPO / "envs"
ENV_NAMES = ["data", "train", "measures", "plots"]
RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
NOT_INSTALLED = {"ray"}  # recbole declares it; only its hyper-parameter search imports it
# Packages an env installs --no-deps only for their data files: ml-100k ships inside recbole.
DATA_ONLY = {"data": {"recbole"}}
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$")
# How every env installs userfair: editable, from the repository root (conda resolves a
# relative path of a pip section against the env file's folder), without an extra.
SELF = "-e .."


def requirement_pins() -> dict[str, str]:
    """requirements.txt plus torch, which scripts/setup-venv.sh installs first."""
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = PIN.match(line).groups()
            pins[canonicalize_name(name)] = version
    torch = re.search(r"pip install (torch==\S+)", (REPO / "scripts/setup-venv.sh").read_text())
    name, version = PIN.match(torch.group(1)).groups()
    pins[canonicalize_name(name)] = version
    return pins


def env_spec(env: str) -> dict:
    return yaml.safe_load((ENVS / f"{env}.yaml").read_text())


def env_pip(env: str) -> list[str]:
    """The lines of an env file's pip section."""
    return next(d["pip"] for d in env_spec(env)["dependencies"] if isinstance(d, dict))


def env_pins(env: str) -> dict[str, str]:
    """The pip pins of an env file plus those of its post-deploy script (the install of
    userfair itself, SELF, aside)."""
    lines = [line for line in env_pip(env) if line != SELF]
    deploy = ENVS / f"{env}.post-deploy.sh"
    if deploy.exists():
        lines += re.findall(r"pip install --no-deps (\S+)", deploy.read_text())
    pins = {}
    for line in lines:
        match = PIN.match(line)
        assert match, f"envs/{env}: '{line}' is not an exact pin name==version"
        pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def runtime_requirements(name: str) -> set[str]:
    """Names a distribution of the virtual environment needs at run time (no extras)."""
    needed = set()
    for text in distribution(name).requires or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            needed.add(canonicalize_name(req.name))
    return needed


@pytest.mark.parametrize("env", ENV_NAMES)
def test_env_pins_equal_requirements(env):
    pins, wanted = env_pins(env), requirement_pins()
    assert pins, f"envs/{env}.yaml pins nothing"
    differ = {n: (v, wanted.get(n)) for n, v in pins.items() if wanted.get(n) != v}
    assert not differ, f"envs/{env} (version, requirements.txt version): {differ}"


@pytest.mark.parametrize("env", ENV_NAMES)
def test_env_installs_the_package(env):
    """Each env installs userfair itself, so `snakemake --sdm conda` needs nothing of the
    virtual environment: editable (the env runs the repository's code as it is, not a copy
    taken when the env was made), from the repository root."""
    pip = env_pip(env)
    assert pip.count(SELF) == 1, f"envs/{env}.yaml: wanted '{SELF}' in its pip section: {pip}"
    root = (ENVS / SELF.split()[1]).resolve()
    assert root == REPO.resolve()
    assert tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"] == "userfair"


@pytest.mark.parametrize("env", ENV_NAMES)
def test_env_pins_every_base_dependency_of_the_package(env):
    """pip installs userfair with its base dependencies: every one is pinned in the env,
    inside the declared range, so that pip takes nothing beyond the lock."""
    pins = env_pins(env)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    gaps = []
    for req in map(Requirement, project["dependencies"]):
        pin = pins.get(canonicalize_name(req.name))
        if pin is None or not req.specifier.contains(pin, prereleases=True):
            gaps.append(f"{req} (pinned: {pin})")
    assert not gaps, f"envs/{env}.yaml: {gaps}"


@pytest.mark.parametrize("env", ENV_NAMES)
def test_env_python_is_the_tested_one(env):
    deps = [d for d in env_spec(env)["dependencies"] if isinstance(d, str)]
    assert f"python={sys.version_info.major}.{sys.version_info.minor}" in deps
    assert env_spec(env)["channels"][0] == "conda-forge"


@pytest.mark.parametrize("env", ENV_NAMES)
def test_env_pins_are_closed_under_dependencies(env):
    pins = env_pins(env)
    code = set(pins) - DATA_ONLY.get(env, set())
    missing = {
        f"{name} needs {dep}"
        for name in code
        for dep in runtime_requirements(name)
        if dep not in pins and dep not in NOT_INSTALLED
    }
    assert not missing, f"envs/{env} lacks pins: {sorted(missing)}"


def rule_blocks() -> dict[str, tuple[Path, str]]:
    """rule name -> (file, text of its block)."""
    blocks = {}
    for path in RULE_FILES:
        text = path.read_text()
        starts = list(re.finditer(r"^(?:rule|checkpoint) (\w+):", text, re.M))
        for start in starts:
            body = text[start.end() :]
            end = re.search(r"^\S", body, re.M)
            blocks[start.group(1)] = (path, body[: end.start() if end else None])
    return blocks


def directive(block: str, name: str) -> str | None:
    """The first line of a directive's value (`conda:`, `log:`, ...), or None."""
    match = re.search(rf"^    {name}:\n\s+(.+)$", block, re.M)
    return match.group(1).strip() if match else None


def test_every_rule_has_conda_log_resources_and_script():
    blocks = rule_blocks()
    assert len(blocks) >= 5, sorted(blocks)
    gaps = []
    for rule, (path, block) in blocks.items():
        conda = directive(block, "conda")
        if conda is None or not (path.parent / conda.strip('",')).resolve().is_file():
            gaps.append(f"{rule}: conda: {conda}")
        elif conda.strip('",') not in {f"../../envs/{e}.yaml" for e in ENV_NAMES}:
            gaps.append(f"{rule}: conda: {conda} is none of envs/{{{','.join(ENV_NAMES)}}}.yaml")
        log = directive(block, "log")  # read from the file layout: layout.log("RULE")
        read = re.fullmatch(r'layout\.log\("(\w+)"\),', log or "")
        path = layout.log(read.group(1)) if read else log
        if path is None or not re.search(rf"results/logs/{rule}/", path):
            gaps.append(f"{rule}: log: {log} (wanted under results/logs/{rule}/)")
        resources = re.search(r"^    resources:\n((?:        .+\n)+)", block, re.M)
        if not resources or not {"mem_mb", "runtime"} <= set(
            re.findall(r"^\s+(\w+)=", resources.group(1), re.M)
        ):
            gaps.append(f"{rule}: resources: without mem_mb and runtime")
        if directive(block, "script") is None:
            gaps.append(f"{rule}: no script:")
    assert not gaps, "\n".join(gaps)


def module_level(tree: ast.Module):
    """The statements run on import: the module body, into if/try/with blocks, not into
    functions (their imports are optional features, e.g. torch for device='auto')."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
            todo += [s for h in getattr(node, "handlers", []) for s in h.body]


LIBRARY = REPO / "workflow" / "userfair"


def module_file(name: str) -> Path:
    """The file of the userfair module ``name``, or of the deepest module it names an
    attribute of (``userfair.files.io.InputError``: io.py; ``userfair.workflow``: its
    __init__.py)."""
    parts = name.split(".")[1:]
    while parts:
        for path in (LIBRARY.joinpath(*parts[:-1], f"{parts[-1]}.py"),
                     LIBRARY.joinpath(*parts, "__init__.py")):  # fmt: skip
            if path.is_file():
                return path
        parts.pop()
    return LIBRARY / "__init__.py"


def package_of(path: Path) -> str:
    """The package a relative import in ``path`` starts from (userfair for a script)."""
    if not path.is_relative_to(LIBRARY):
        return "userfair"
    parts = path.relative_to(LIBRARY.parent).with_suffix("").parts
    return ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")


@functools.cache  # every rule's closure visits the same files: each parsed once
def imports_of(path: Path) -> frozenset[str]:
    """Module names a Python file imports when it is imported (or run): top-level names of
    other packages, full names of userfair's modules (a relative import resolved), and the
    modules a userfair module checks for with ``NEEDS = (...)`` (userfair._extras.require:
    looked up, not imported, but needed all the same)."""
    names = set()
    for node in module_level(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names.add(alias.name if top == "userfair" else top)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                package = package_of(path).split(".")
                base = ".".join(package[: len(package) - (node.level - 1)])
                module = f"{base}.{module}" if module else base
            top = module.split(".")[0]
            if top != "userfair":
                names.add(top)
                continue
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
        elif (
            isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == ["NEEDS"]
            and isinstance(node.value, ast.Tuple)
        ):
            names |= {element.value for element in node.value.elts}
    return frozenset(names)


def userfair_closure(paths: list[Path]) -> tuple[set[Path], set[str]]:
    """The userfair files run when ``paths`` are imported (or run), following userfair's
    own imports at module level (the __init__.py of each package on the way included), and
    the top-level modules outside the standard library and userfair they import."""
    seen, todo, found = set(), list(paths), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imports_of(path):
            if name.split(".")[0] == "userfair":
                parts = name.split(".")
                todo += [module_file(".".join(parts[:n])) for n in range(1, len(parts) + 1)]
            elif name not in sys.stdlib_module_names:
                found.add(name)
    return seen, found


def third_party_imports(script: Path) -> set[str]:
    """Modules outside the standard library that a script imports, following userfair."""
    return userfair_closure([script])[1] - {"snakemake"}


def test_env_of_each_rule_provides_what_its_script_imports():
    to_dist = packages_distributions()
    gaps = []
    for rule, (path, block) in rule_blocks().items():
        conda, script = directive(block, "conda"), directive(block, "script")
        if conda is None or script is None:
            continue  # reported by the test above
        env = Path(conda.strip('",')).stem
        provided = set(env_pins(env))
        for module in third_party_imports((path.parent / script.strip('",')).resolve()):
            dists = {canonicalize_name(d) for d in to_dist.get(module, [module])}
            if not dists & provided:
                gaps.append(f"{rule} (envs/{env}.yaml) imports {module} ({', '.join(dists)})")
    assert not gaps, "\n".join(sorted(gaps))


def test_ci_runs_the_readme_test_command_after_the_fast_stages():
    """.ci/run answers fast (lint, then the fast lane), then runs the README's test command
    itself with the SLURM tests on; the stages of the suite's summary (conftest.STAGES)
    give each test exactly one stage, whatever its markers."""
    from conftest import STAGES, stage_of

    text = (REPO / ".ci" / "run").read_text()
    readme = (REPO / "README.md").read_text()
    command = "bash scripts/setup-venv.sh && .venv/bin/python -m pytest"
    assert command in readme and f"\n{command}\n" in text
    assert "USERFAIR_REQUIRE_SLURM=1" in text
    stages = dict(re.findall(r'^stage (\w+) "([^"]+)"$', text, re.M))
    assert list(stages) == ["lint", "unit"]
    assert text.index("stage unit") < text.index(f"\n{command}\n")
    markers = ["slow", "lint", "packaging", "slurm"]
    registered = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]
    assert {m.split(":")[0] for m in registered["ini_options"]["markers"]} >= set(markers)
    for chosen in itertools.product([False, True], repeat=len(markers)):
        names = {m for m, on in zip(markers, chosen) if on}
        stage = stage_of(names)
        assert stage in STAGES
        # the fast stages of .ci/run select exactly the tests of the same stage
        for name, expr in stages.items():
            selected = eval(expr, {"__builtins__": {}}, {m: m in names for m in markers})
            assert selected == (stage == name), (names, name)


@pytest.mark.lint
def test_lint_reports_nothing():
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--lint"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in output, output[-8000:]


@pytest.mark.lint
def test_lint_reports_nothing_on_the_test_config(tiny_ml100k, tmp_path):
    """`snakemake --lint` on the .test/ config, the one CI runs (and the conda run of
    .github/workflows/conda.yml), in a copy of .test/ whose tiny data is the suite's
    (the config refuses a dataset path that does not exist)."""
    work = tmp_path / "test"
    shutil.copytree(REPO / ".test" / "config", work / "config")
    (work / "resources").mkdir()
    (work / "resources" / "tiny-ml-100k").symlink_to(tiny_ml100k, target_is_directory=True)
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--lint", "--directory", str(work)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in output, output[-8000:]
    assert "Congratulations" in output, output[-8000:]


def test_the_conda_run_is_the_test_configs_in_the_envs():
    """.github/workflows/conda.yml (for machines with internet; this CI cannot create conda
    envs) lints and runs the .test/ config with every rule in its conda env."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "conda.yml").read_text())
    (job,) = workflow["jobs"].values()
    commands = [step["run"] for step in job["steps"] if "run" in step]
    assert "bash scripts/setup-venv.sh" in commands
    assert ".venv/bin/snakemake --lint --directory .test" in commands
    conda = ".venv/bin/snakemake --directory .test --sdm conda"
    runs = [c for c in commands if c.startswith(conda)]
    assert len(runs) == 2 and "--conda-create-envs-only" in runs[0], runs


@pytest.mark.lint
def test_ruff_lint_passes():
    """ruff, configured in pyproject.toml ([tool.ruff]), finds nothing in the Python code."""
    proc = subprocess.run(
        [str(BIN / "ruff"), "check", "--output-format", "concise", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-8000:]


@pytest.mark.lint
def test_ruff_format_check_passes():
    proc = subprocess.run(
        [str(BIN / "ruff"), "format", "--check", "--diff", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-8000:]


@pytest.mark.lint
def test_snakefmt_check_passes():
    proc = subprocess.run(
        [str(BIN / "snakefmt"), "--check", "--diff", "workflow"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-8000:]


@pytest.mark.parametrize("profile", ["default", "slurm"])
def test_every_profile_key_is_commented(profile):
    lines = (REPO / "profiles" / profile / "config.yaml").read_text().splitlines()
    yaml.safe_load("\n".join(lines))
    uncommented = [
        line
        for i, line in enumerate(lines)
        if re.match(r"^\s*[\w-]+:", line) and not lines[i - 1].lstrip().startswith("#")
    ]
    assert not uncommented, f"profiles/{profile}: keys without a comment above: {uncommented}"


def test_slurm_profile_takes_account_and_partition_from_the_environment():
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    assert profile["executor"] == "slurm"
    resources = profile["default-resources"]
    assert resources["slurm_account"] == "'$USERFAIR_SLURM_ACCOUNT'"
    assert resources["slurm_partition"] == "'$USERFAIR_SLURM_PARTITION'"
