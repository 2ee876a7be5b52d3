"""The streamed route: every pair measure without an m x m array, by row passes over the
users' train rows (``streaming``, ``stream_rows``, ``pair_records`` and their compiled
kernels) and cosine PUF by items (``puf_items``; docs/method.md#streamed-route)."""
