"""Rule genres: the .item file (item genres) of the items in one dataset's split."""

import logging

from userfair import catalogue, data
from userfair.io import read_inter
from userfair.joblog import job_log

with job_log(snakemake):
    dataset = catalogue.resolve(snakemake.wildcards.dataset, snakemake.params.declaration)
    genres = data.read_item_genres(dataset, snakemake.params.source)
    splits = dict(zip(data.SPLITS, map(read_inter, snakemake.input.splits)))
    items = data.split_item_genres(genres, splits)
    data.write_item_genres(items, snakemake.output[0])
    logging.info("%s: %d items", snakemake.output[0], len(items))
