# data stage: filled in by its issue.
