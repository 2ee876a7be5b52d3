"""Rule measures: every Eff and Fair measure of one dataset x model, with seconds."""

import logging

from userfair import evaluate, similarity
from userfair.inputs import load_inputs
from userfair.io import write_json
from userfair.joblog import job_log
from userfair.measures import NAMES

with job_log(snakemake):
    p = snakemake.params
    inputs = load_inputs(
        snakemake.input.train,
        snakemake.input.test,
        snakemake.input.topk,
        k=p.k,
        valid=snakemake.input.valid,
    )
    # cos and jacc always; the genre similarity (1 - JS) only when gamma < 1 needs it
    paths = {"cos": snakemake.input.cos, "jacc": snakemake.input.jacc}
    paths.update({"genre": path for path in snakemake.input.genre})
    similarities = {kind: similarity.load(path, inputs.users) for kind, path in paths.items()}
    result = evaluate.evaluate(
        inputs,
        k=p.k,
        epsilon=p.epsilon,
        gamma=p.gamma,
        similarities=similarities,
        block_size=p.block_size,
        device=p.device,
        envy_utility=p.envy_utility,
    )
    write_json(evaluate.as_json(result), snakemake.output[0])
    logging.info("%s: %s", snakemake.output[0], {k: result[k] for k in NAMES})
