"""Rule exp_extreme: the Fig. 4 experiment (MostFair / MostUnfair) of one dataset."""

import logging

from userfair import experiments

logging.basicConfig(
    filename=snakemake.log[0],
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(name)s: %(message)s",
)
try:
    p = snakemake.params
    inputs = experiments.split_inputs(snakemake.input.train, snakemake.input.test)
    settings = experiments.Settings(p.k, p.epsilon, p.block_size, p.device)
    frame = experiments.run_extreme(inputs, settings, p.seed)
    experiments.save_table(frame, snakemake.wildcards.dataset, snakemake.output[0])
    logging.info("\n%s", frame.to_string())
except Exception:
    logging.exception("exp_extreme of %s failed", snakemake.wildcards.dataset)
    raise
