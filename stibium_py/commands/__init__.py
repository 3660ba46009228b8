"""The commands of `stibium`, by what they do (the program and its group are cli.py's): running a plan, a verify
and a resume (running.py); reading results: report, compare, import, plan, plans, info, selftest (results.py);
the history (history.py); and what they share (common.py: the terminal, one-line errors, the options several
take)."""
