"""Rule exp_extreme: the Fig. 4 experiment (MostFair / MostUnfair) of one dataset."""

import logging

from userfair import experiments
from userfair.inputs import load_split_inputs
from userfair.io import write_dataset_parquet
from userfair.joblog import job_log

with job_log(snakemake):
    p = snakemake.params
    inputs = load_split_inputs(snakemake.input.train, snakemake.input.test)
    settings = experiments.Settings(p.k, p.epsilon, p.block_size, p.device)
    frame = experiments.run_extreme(inputs, settings, p.seed)
    write_dataset_parquet(frame, snakemake.wildcards.dataset, snakemake.output[0])
    logging.info("\n%s", frame.to_string())
