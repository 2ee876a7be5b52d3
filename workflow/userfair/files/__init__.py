"""Inputs and files: the split and top-k arrays every measure reads (``inputs``), top-k
lists as other tools write them (``runfiles``), atomic writes and safe reads (``io``,
``safe_pth``)."""
