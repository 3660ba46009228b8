"""The cost of turning many clients' rows into their aggregate (analysis/clients.aggregate): synthetic rows
of STEPS steps by 4 ranks.

    python tests/bench/bench_aggregate.py [steps]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_clients import _row  # noqa: E402

from stibium_py.analysis.clients import aggregate  # noqa: E402
from stibium_py.rundir.table import Table


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    rows = Table.from_rows([_row(s, r, s + 0.01 * r, s + 0.5 + 0.01 * r) for s in range(steps) for r in range(4)])
    t = time.perf_counter()
    agg = aggregate(rows, 4)
    took = time.perf_counter() - t
    print(f"{len(rows)} rows, {len(agg)} steps: {took:.2f} s ({took / len(agg) * 1e3:.3f} ms a step)")


if __name__ == "__main__":
    main()
