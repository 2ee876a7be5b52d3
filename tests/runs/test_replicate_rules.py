"""The replicate rules are `use rule BASE as replicate_BASE with:` of the rules that make
replicate 0's files (workflow/rules/replicates.smk, groups.smk): in the DAG Snakemake builds,
every replicate job's params equal its base job's on the same dataset (and model), but for
what the replicate sets itself (the split's seed). Three DAGs on a copy of the tiny run:
the opt-in measures on (graded relevance, the genre similarity), the streamed route over
two parts, and a dataset split at random whose split each replicate redraws."""

import pytest
import yaml

from dag_jobs import dag_jobs

from conftest import copy_run
from test_replicate_split_workflow import RANDOM_SPLIT

# replicate rule -> (its base rule, the params it sets itself)
BASES = {
    "replicate_split": ("split", {"temporal", "seed"}),
    "replicate_genres": ("genres", set()),
    "replicate_similarity": ("similarity", set()),
    "replicate_sums": ("measure_sums", set()),
    "replicate_measures": ("measures", set()),
    "replicate_uncertainty": ("uncertainty", set()),
    "replicate_groups": ("groups", set()),
}
OPT_IN = {
    "training": {"replicates": 2},
    "measures": {"relevance": ["binary", "graded"], "similarities": ["cos", "jacc", "genre"]},
}
STREAMED = {"training": {"replicates": 2}, "measures": {"stream_above": 10, "scatter": 2}}


def pairs(jobs):
    """(replicate job, its base job) for every replicate job of a rule in BASES."""
    base_jobs = {}
    for job in jobs:
        base_jobs[job["rule"], tuple(sorted(job["wildcards"].items()))] = job
    found = []
    for job in jobs:
        if job["rule"] not in BASES:
            continue
        wildcards = {k: v for k, v in job["wildcards"].items() if k != "replicate"}
        key = (BASES[job["rule"]][0], tuple(sorted(wildcards.items())))
        # the base job of a rule over datasets alone (split, genres, similarity) has no model
        found.append((job, base_jobs.get(key)))
    return found


@pytest.fixture(scope="module")
def dags(tiny_run, tmp_path_factory):
    run = copy_run(tiny_run, tmp_path_factory.mktemp("replicate-rules") / "run")
    found = {}
    for name, overlay in (("opt-in", OPT_IN), ("streamed", STREAMED), ("redrawn", RANDOM_SPLIT)):
        path = run.test_dir / "config" / f"{name}.yaml"
        path.write_text(yaml.safe_dump(overlay))
        found[name] = dag_jobs(
            run.repo / "workflow" / "Snakefile",
            run.test_dir,
            run.test_dir / "config" / "config.yaml",
            path,
        )
    return found


@pytest.mark.slow
def test_a_replicate_jobs_params_are_its_base_jobs_but_its_own(dags):
    seen = set()
    for name, jobs in dags.items():
        for job, base in pairs(jobs):
            rule = job["rule"]
            assert base is not None, (name, job)  # replicate 0's job is in the same DAG
            own = BASES[rule][1]
            mine = {k: v for k, v in job["params"].items() if k not in own}
            theirs = {k: v for k, v in base["params"].items() if k not in own}
            assert mine == theirs, (name, rule, job["wildcards"], mine, theirs)
            assert own <= set(job["params"]), (name, rule)
            if own:
                assert any(job["params"][k] != base["params"][k] for k in own), (name, rule)
            seen.add(rule)
    # every replicate rule was compared in one of the three DAGs (replicate_genres needs a
    # redrawn dataset with genres, which the tiny run has not)
    assert seen == set(BASES) - {"replicate_genres"}, seen


@pytest.mark.slow
def test_the_replicate_measures_get_the_opt_in_params(dags):
    """The drift the base rules now rule out: replicate r's measures and bootstrap compute the
    opt-in measures as replicate 0's do (the params graded and extra_similarities)."""
    jobs = [
        j for j in dags["opt-in"] if j["rule"] in ("replicate_measures", "replicate_uncertainty")
    ]
    assert {j["rule"] for j in jobs} == {"replicate_measures", "replicate_uncertainty"}
    for job in jobs:
        assert job["params"]["graded"] == "True" and "genre" in job["params"]["extra_similarities"]
