# figures stage: filled in by its issue.
