# models stage: filled in by its issue.
