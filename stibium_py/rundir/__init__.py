"""The run directory and what it holds (docs/run-directory.md): run.json as a typed record (record), each
operation (op) and measurement (measurement) and measurements.csv read column by column (table), written and
read back (store), files from strangers read within bounds (received, jsonread), and whether a run that says
`running` still runs (liveness)."""
