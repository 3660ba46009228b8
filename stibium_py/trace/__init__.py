"""Traces: what a program did to its files, recorded (record.py, strace.py) and kept as data (model.py), summarised
(summary.py). A trace holds no file contents and no real names: docs/trace-format.md."""
