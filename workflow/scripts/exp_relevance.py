"""Rule exp_relevance: the Fig. 2 experiment (varying relevance) of one dataset."""

import logging

from userfair import experiments, similarity
from userfair.inputs import load_split_inputs
from userfair.io import write_dataset_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    inputs = load_split_inputs(snakemake.input.train, snakemake.input.test)
    jacc = similarity.load(snakemake.input.jacc, inputs.users)
    genre = None
    if snakemake.input.genre:
        genre = similarity.load(snakemake.input.genre[0], inputs.users).raw()
    sim_uf = similarity.uf_similarity(jacc.raw(), genre, p.gamma)
    settings = experiments.Settings(p.k, p.epsilon, p.block_size, p.device, p.envy_utility)
    frame = experiments.run_relevance(inputs, jacc.sim, sim_uf, settings, p.seed)
    write_dataset_parquet(frame, snakemake.wildcards.dataset, snakemake.output[0])
    logging.info("\n%s", frame.pivot(index="share", columns="measure", values="value"))
