"""Rule uncertainty: the bootstrap resamples of every measure of one dataset x model."""

import logging

from userfair import similarity, uncertainty
from userfair.inputs import load_inputs
from userfair.io import atomic_path
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    inputs = load_inputs(
        snakemake.input.train,
        snakemake.input.test,
        snakemake.input.topk,
        k=p.k,
        valid=snakemake.input.valid,
    )
    similarities = similarity.load_dataset(
        snakemake.input.cos, snakemake.input.jacc, snakemake.input.genre, inputs.users
    )
    # The same seed for every model of a dataset: the same resampled users (paired).
    weights = uncertainty.resample_weights(len(inputs.users), p.resamples, p.seed)
    logging.info("%d resamples of %d users (seed %d)", p.resamples, len(inputs.users), p.seed)
    frame = uncertainty.bootstrap(
        inputs,
        weights,
        similarities=similarities,
        k=p.k,
        epsilon=p.epsilon,
        gamma=p.gamma,
        envy_utility=p.envy_utility,
        block_size=p.block_size,
        device=p.device,
    )
    with atomic_path(snakemake.output[0]) as tmp:
        frame.to_parquet(tmp)
    logging.info("%s: %d resamples", snakemake.output[0], len(frame))
