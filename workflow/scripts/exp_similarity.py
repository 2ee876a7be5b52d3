"""Rule exp_similarity: the Fig. 3 experiment (varying similarity) of one dataset."""

import logging

from userfair import experiments, similarity
from userfair.inputs import load_inputs
from userfair.io import write_dataset_parquet
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
    jacc = similarity.load(snakemake.input.jacc, inputs.users)
    settings = experiments.Settings(p.k, p.epsilon, p.block_size, p.device)
    frame = experiments.run_similarity(inputs, jacc, p.weibull_shapes, settings, p.seed)
    frame.insert(0, "model", p.model)
    write_dataset_parquet(frame, snakemake.wildcards.dataset, snakemake.output[0])
    logging.info("\n%s", frame.to_string())
