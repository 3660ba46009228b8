"""A run's numbers, read from its run directory: one run (pipeline, with each test's definition in definitions),
two sides compared (compare), a series of runs (series)."""
