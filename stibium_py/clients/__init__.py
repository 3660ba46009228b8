"""Many clients: the ranks of a run (team: one process, or an MPI job's) and how they share the store (sharing)."""
