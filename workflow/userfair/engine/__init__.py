"""Where and how the pair work runs: the route choice (``route``), the block products'
backend (``_backend``), the warm-up before the clock (``warmup``) and the routes of the
plugin measures (``generic_routes``)."""
