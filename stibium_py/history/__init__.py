"""The history: every run that ended (complete or interrupted) remembered in an SQLite database per user, by
drive; the run directories stay the source of truth (docs/history.md). Reading a run (entry.py), the
database (db.py), where it lives (where.py), the hook a run calls as it ends (remember.py), the export and
import (exchange.py). The statistics across runs are analysis/history.py's; the views report/history_*.py."""
