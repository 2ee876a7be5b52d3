"""User similarity: the pairwise similarities of the paper and UF (``pairwise``) and the
one registry of the similarities PUF can read (``registry``; docs/method.md#user-similarity)."""
