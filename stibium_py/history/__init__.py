"""The history: every run that ended (complete or interrupted) remembered by drive in a SQLite file per user,
and in a team's PostgreSQL database where a person names one; the run directories stay the source of truth
(docs/history.md). Reading a run (entry.py), the schema both share (schema.py), what the history asks of a
database (store.py), the machine's file (db.py), the team's database (team.py), where they live (where.py), the
hook a run calls as it ends (remember.py), the export and import (exchange.py), the commands' work (actions.py:
add, rebuild, check, push, notes), a check's confirming runs (confirm.py). The statistics across runs are
analysis/history.py's; the views report/history_*.py."""
