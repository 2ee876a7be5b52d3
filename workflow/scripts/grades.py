"""Rule grades: the grade of every interaction rule preprocess keeps (graded relevance only)."""

from userfair.workflow.joblog import job_log
from userfair.workflow.steps.data import grades

with job_log(snakemake):
    p = snakemake.params
    grades(
        snakemake.wildcards.dataset,
        p.declaration,
        p.source,
        snakemake.output[0],
        min_rating=p.min_rating,
        core=p.core,
    )
