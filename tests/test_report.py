"""The HTML report: one self-contained file, every figure present, every string
from the plan escaped."""

from __future__ import annotations

import re

from click.testing import CliRunner

from stibium_py.cli import main

PLAN = """\
name: evil
description: "<script>alert(1)</script> & friends"
tests:
  - name: files
    kind: files
    sizes: [100KB, 1MB, 4MB]
    repeats: 2
  - name: pat
    kind: pattern
    op: read
    access: [random, strided]
    granularities: [4KiB, 64KiB]
    strides: [0, 4KiB]
    bytes: 256KiB
    span: 1MiB
    trials: 2
"""


def test_report_is_self_contained_and_escaped(disk_dir):
    plan = disk_dir / "evil.yaml"
    plan.write_text(PLAN)
    result = CliRunner().invoke(main, ["run", str(plan), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r")])
    assert result.exit_code == 0, result.output
    html = next((disk_dir / "r").iterdir()).joinpath("report.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in html
    assert not re.search(r"<script[^>]+src=", html)           # nothing loaded from elsewhere
    assert html.count("plotly.js v") <= 2 and "Plotly.newPlot" in html
    # files test: 4 figures per op (2 ops); pattern test: throughput, latency, stride heatmap
    assert html.count("Plotly.newPlot") == 4 * 2 + 3
