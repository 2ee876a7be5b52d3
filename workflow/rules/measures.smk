# measures stage: filled in by its issue.
