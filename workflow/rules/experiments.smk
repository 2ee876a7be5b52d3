# experiments stage: filled in by its issue.
