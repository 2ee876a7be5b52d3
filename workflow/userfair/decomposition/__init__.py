"""Who is treated unfairly: each user's share of every measure, dense and streamed
(``decompose``, ``decompose_stream``, ``decompose_columns``) and the worst cases in words
(``worst_cases``; docs/method.md#who)."""
