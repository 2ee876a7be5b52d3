"""Rule exp_gamma: UF and PUF with sim_UF for every gamma (appendix), one dataset."""

import logging

from userfair import experiments, similarity
from userfair.inputs import load_inputs, load_split_inputs
from userfair.io import write_dataset_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    dataset = snakemake.wildcards.dataset
    split = load_split_inputs(snakemake.input.train, snakemake.input.test)
    jacc = similarity.load(snakemake.input.jacc, split.users).raw()
    genre = similarity.load(snakemake.input.genre, split.users).raw()
    settings = experiments.Settings(p.k, p.epsilon, p.block_size, p.device)
    runs = {
        model: load_inputs(
            snakemake.input.train, snakemake.input.test, topk, k=p.k, valid=snakemake.input.valid
        )
        for model, topk in zip(p.models, snakemake.input.topk)
    }
    models = experiments.run_gamma_models(runs, jacc, genre, p.gammas, settings)
    write_dataset_parquet(models, dataset, snakemake.output.models)
    relevance = experiments.run_gamma_relevance(split, jacc, genre, p.gammas, settings, p.seed)
    write_dataset_parquet(relevance, dataset, snakemake.output.relevance)
    logging.info("real runs:\n%s", models.to_string())
