"""Steady state against a device of known speed (docs/truth-devices.md): Recipe B's rate switched to half
while a test by rounds runs. The rounds measured before the switch must stay out of the steady window, and the steady rate is the second rate. Each round is a test by time whose warm-up spends the rate
filter's free burst, so that a round's rate is the filter's rate and not its burst."""

from __future__ import annotations

import pytest

from conftest import entry, stibium_run
from test_truth import report_value

pytestmark = pytest.mark.truth

PLAN = """\
name: truth-steady
tests:
  - name: rounds
    kind: pattern
    op: read
    access: sequential
    granularities: [256KiB]
    span: 4MiB
    duration: 1
    warmup: 0.3
    steady: {window: 10, max_rounds: 25}
"""
SWITCH_AFTER_ROUNDS = 6


def test_a_rate_switched_mid_run_is_steady_only_after_the_switch_at_the_second_rate(tmp_path, device_b):
    full = int(device_b.read_bytes_per_s * 8)
    switched = {}

    def halve_after_six_rounds(rows: int, run_dir) -> None:
        if rows >= SWITCH_AFTER_ROUNDS and not switched:
            device_b.set_rate_bits_per_s(full // 2)
            switched["rows"] = rows
    summary, run_dir = stibium_run(tmp_path, device_b, PLAN, on_row=halve_after_six_rounds)
    e = entry(summary, "rounds", "read")
    st = e["steady"]
    rates = st["points"][0]["rates_bytes_per_s"]
    print("TRUTH rounds (MB/s):", " ".join(f"{r / 1e6:.2f}" for r in rates))
    assert st["steady"], st["points"][0]["verdict"]["why"]
    first, last = st["window_rounds"]
    # the switch came once `rows` rounds were written, before the next round's warm-up ended
    print(f"TRUTH steady window: rounds {first}-{last}, the switch after round {switched['rows']}")
    assert first >= switched["rows"] + 1 and last == st["rounds"] == first + 9
    rate = e["points"][0]["throughput_bytes_per_s"]["estimate"]
    assert abs(report_value("steady rate against the second rate", full / 16, rate)) < 0.03
