"""Uncertainty: the bootstrap over the evaluated users (``uncertainty``), inference on its
resamples (``inference``) and over training replicates (``replicates``;
docs/method.md#uncertainty)."""
