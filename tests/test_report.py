"""The HTML report: one self-contained file, every figure present, every string
from the plan escaped."""

from __future__ import annotations

import re

import numpy as np

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
    # files test: 4 figures per op (2 ops); pattern test: throughput, latency, stride heatmap, latency CDF
    assert html.count("Plotly.newPlot") == 4 * 2 + 4


def _pattern_rows(granularities, accesses=("sequential",), trials=3):
    from stibium_py.rundir.measurement import Measurement
    from stibium_py.rundir.table import Table
    rows = []
    for access in accesses:
        for g in granularities:
            for t in range(trials):
                rows.append(Measurement(seq=len(rows), test="p", op="read", kind="pattern", access=access,
                                        size_bytes=1 << 30, granularity_bytes=g, stride_bytes=0, trial=t, file="p",
                                        bytes=64 << 20, seconds=0.1 + 0.01 * t + g / 1e9, started_s=float(len(rows)),
                                        engine="direct", requests=(64 << 20) // g, lat_p50_s=g / 1e9,
                                        lat_p90_s=2 * g / 1e9, lat_p99_s=3 * g / 1e9, lat_p999_s=4 * g / 1e9,
                                        lat_max_s=5 * g / 1e9))
    return Table.from_rows(rows)


def test_many_granularities_give_a_latency_heatmap_per_access():
    from stibium_py.kinds.pattern.result import pattern_result
    from stibium_py.kinds.pattern import figures
    e = pattern_result("p", "read", _pattern_rows([4096 << k for k in range(4)], ("sequential", "random", "strided")),
                       200, 1, 0.95)
    fig = figures.latency_percentiles([e])
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert len(heat) == 3 and all(np.asarray(t.z).shape == (4, 5) for t in heat)
    assert list(heat[0].x) == ["p50", "p90", "p99", "p99.9", "max"]
    assert heat[0].text[0][0] == "0.0041 ms" and heat[0].text[3][4] == f"{5 * 32768 / 1e6:.3g} ms"


def test_one_granularity_shows_its_trials_not_a_granularity_axis():
    from stibium_py.kinds.pattern.result import pattern_result
    from stibium_py.kinds.pattern import figures
    e = pattern_result("p", "read", _pattern_rows([1 << 20], trials=5), 200, 1, 0.95)
    fig = figures.throughput_vs_granularity([e])
    (trace,) = fig.data
    assert list(trace.x) == [1, 2, 3, 4, 5]
    assert np.allclose(trace.y, [(64 << 20) / (0.1 + 0.01 * t + (1 << 20) / 1e9) for t in range(5)])
    assert fig.layout["xaxis"]["title"]["text"] == "trial" and fig.layout["xaxis"].get("type") != "log"
    # whole trials on the axis: no tick at 1.5
    assert (fig.layout["xaxis"]["tickformat"], fig.layout["xaxis"]["dtick"]) == ("d", 1)


def test_facts_nobody_could_read_are_said_unknown(tmp_path):
    # a target whose device cannot be resolved (a container, a chroot) and a file system that does not say
    # whether it honours direct I/O (a network share): the page says unknown, never Python's None
    from synthetic import make_run
    from stibium_py.report.publish import publish_report
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    publish_report(run, None, False)
    page = (run / "report.html").read_text()
    assert "None" not in page.split("<script")[0]
    assert " on unknown (unknown, unknown), mount options unknown</td>" in page
    assert "<td>unknown, honoured: unknown (`stibium selftest --target` on it measures it), alignment unknown B</td>" \
        in page
    assert "<td>host — unknown unknown, unknown, unknown CPUs, unknown RAM</td>" in page


def test_a_long_figure_title_goes_on_over_lines_that_fit_and_the_figure_grows_to_hold_them():
    # plotly.js cuts a title at the figure's edge: "source-tree-with-a-rather-long-name: files per second by phase a"
    from stibium_py.report import plot
    from stibium_py.report.figures import TITLE_CHARS, TITLE_LINE_PX, layout
    short = layout(plot.Figure(), "reads: rate against size", "size", "seconds")
    assert short.layout["title"]["text"] == "reads: rate against size" and short.layout["height"] == 420
    long = layout(plot.Figure(), "source-tree-with-a-rather-long-name: files per second by phase and threads "
                  "(median over trials and its interval)", "threads", "files/s")
    lines = long.layout["title"]["text"].split("<br>")
    assert len(lines) == 2 and all(len(line) <= TITLE_CHARS for line in lines)
    assert " ".join(lines) == ("source-tree-with-a-rather-long-name: files per second by phase and threads (median "
                               "over trials and its interval)")
    assert long.layout["height"] == 420 + TITLE_LINE_PX and long.layout["margin"]["t"] == 50 + TITLE_LINE_PX
    escaped = layout(plot.Figure(), "a <b> & c", "x", "y")
    assert escaped.layout["title"]["text"] == "a &lt;b&gt; &amp; c"
