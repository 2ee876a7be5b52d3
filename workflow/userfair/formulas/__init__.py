"""The measures' formulas on arrays in memory: per-user effectiveness (binary and
graded), the fairness measures (SD, Gini, envy, UF, PUF), the group measures and the
agreement between measures (docs/method.md)."""
