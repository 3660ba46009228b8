"""What the measurement record costs where records are made one by one: built with keywords (the driver, a row a
measurement), a table of them (Table.from_rows: small files read row by row, the rounds of a test by rounds), a row's
CSV cells (MeasurementLog, a row a measurement), and the records back from a table (Table.rows). Medians of 5, 100,000
pattern rows. A report's million rows are read column by column (csvread._read_measurements) and make no record.

Measured 2026-11-27 here, three times in turn with the commit before the kinds' parts (flat record, then typed
parts): building 7.7-8.0 and 7.2-8.3 us a record, from_rows 1.91-1.96 and 1.77-1.93 s, CSV cells 23.7-24.0 and
23.4-24.1 us a row: within the noise.

    python3 tests/bench/bench_records.py
"""

from __future__ import annotations

from common import timed
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.table import Table

ROWS = 100_000
BASE = dict(seq=1, test="t", op="read", kind="pattern", access="random", size_bytes=1 << 20, granularity_bytes=4096,
            stride_bytes=0, trial=0, file="t/data.bin", bytes=4096, seconds=0.001, engine="direct")


def main() -> None:
    rows = [Measurement(**BASE) for _ in range(ROWS)]
    table = Table.from_rows(rows)
    print(f"build: {timed(lambda: [Measurement(**BASE) for _ in range(ROWS)], 5) / ROWS * 1e6:.1f} us a record")
    print(f"from_rows: {timed(lambda: Table.from_rows(rows), 5):.2f} s for {ROWS:,}")
    print(f"CSV cells: {timed(lambda: [m.to_row() for m in rows], 5) / ROWS * 1e6:.1f} us a row")
    print(f"rows(): {timed(table.rows, 5):.2f} s for {ROWS:,}")


if __name__ == "__main__":
    main()
