"""The opt-in measures (graded relevance, the other user similarities): their values
(``variants``), per-user shares (``variant_parts``) and bootstrap
(``variant_uncertainty``; docs/measures.md#opt-in-measures)."""
