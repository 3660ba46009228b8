"""The report in a real browser: headless Chromium opens report.html from disk,
with every network request refused, and every figure must render (Plotly marks
its div js-plotly-plot and draws an svg in it) with no JavaScript error logged."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

PLAN = """\
name: browser
description: a report for the browser test
tests:
  - name: files
    kind: files
    sizes: [100KB, 1MB, 4MB]
    repeats: 3
  - name: pat
    kind: pattern
    op: [read, write]
    access: [sequential, random]
    granularities: [4KiB, 64KiB]
    bytes: 256KiB
    span: 1MiB
    trials: 2
"""


def open_in_chromium(page: Path, extra: list[str] | None = None) -> tuple[str, str]:
    """The DOM after the scripts ran, and Chromium's log (console messages included)."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", *(extra or []),
             page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    return proc.stdout, proc.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
def test_every_figure_renders_without_javascript_errors(disk_dir):
    plan = disk_dir / "browser.yaml"
    plan.write_text(PLAN)
    result = CliRunner().invoke(main, ["run", str(plan), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r")])
    assert result.exit_code == 0, result.output
    report = next((disk_dir / "r").iterdir()) / "report.html"
    dom, log = open_in_chromium(report, ["--dump-dom"])
    figures = re.findall(r'<div id="fig\d+"[^>]*class="([^"]*)"', dom)
    assert len(figures) == 4 * 2 + 3          # files: 4 figures x 2 ops; pattern: throughput, latency, latency CDF
    assert all("js-plotly-plot" in classes for classes in figures), figures
    assert dom.count('class="main-svg"') >= len(figures)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
def test_the_comparison_page_renders_without_javascript_errors(tmp_path):
    from synthetic import make_run
    a = make_run(tmp_path / "a", rate_bytes_per_s=2e8, seed=1, host="<b>machine-a</b>")
    b = make_run(tmp_path / "b", rate_bytes_per_s=3e8, seed=2, host="machine-b")
    page = tmp_path / "compare.html"
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert "<b>machine-a</b>" not in page.read_text()     # escaped
    dom, log = open_in_chromium(page, ["--dump-dom"])
    figures = re.findall(r'<div id="(forest|overlay\d+)"[^>]*class="([^"]*)"', dom)
    assert [f[0] for f in figures] == ["forest", "overlay0", "overlay1", "overlay2"]
    assert all("js-plotly-plot" in classes for _, classes in figures)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
def test_a_history_page_with_hostile_names_draws_every_figure_and_runs_no_script_of_theirs(tmp_path):
    """Run, series and drive names from a received export or run directory that try to leave the page's script
    elements (</script>, <!--<script>) or run their own (an onerror): every figure drawn, no script error, and
    the page's text shows the names as written."""
    from dataclasses import replace
    from stibium_py.history.db import History
    from stibium_py.history.entry import Drive
    from test_history import _day, _entry
    hostile = '<!--<script>x</script><img src=x onerror="document.title=1">'
    drive = Drive("serial:M:S", f"M {hostile}", "M", "S", "F1")
    entries = [replace(_entry(f"run-{i}", _day(i), 100e6 if i < 6 else 70e6, drive=drive),
                       name=hostile if i == 3 else f"run-{i}", series=hostile if i == 4 else None) for i in range(12)]
    database = tmp_path / "h.sqlite"
    with History(database) as history:
        history.add_many(entries)
    result = CliRunner().invoke(main, ["history", "--history", str(database), "--out", str(tmp_path / "pages")])
    assert result.exit_code == 0, result.output
    page, = (tmp_path / "pages").glob("*.html")
    dom, log = open_in_chromium(page, ["--dump-dom"])
    figures = re.findall(r'<div id="point-\d+"[^>]*class="([^"]*)"', dom)
    assert figures and all("js-plotly-plot" in classes for classes in figures), figures
    assert dom.count('class="main-svg"') >= len(figures)
    assert "<title>stibium history" in dom                     # no onerror of theirs ran (it would set the title)
    assert dom.count("&lt;!--&lt;script&gt;x&lt;/script&gt;&lt;img") >= 2      # the names shown as text
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
def test_the_labs_site_renders_in_chromium_and_every_link_resolves(tmp_path):
    """Three machines' runs of one plan on a drive each (and a second plan on one), with a note: the index names the
    three machines and drives, each page draws its figures without a script error, every relative link of every page
    names a page of the site, and the plan's page sets the three drives side by side."""
    from dataclasses import replace
    from stibium_py.history.db import History
    from stibium_py.history.entry import Drive, Note
    from test_history import _day, _entry
    database = tmp_path / "h.sqlite"
    entries = []
    for h, host in enumerate(["node-a", "node-b", "mac-studio"]):
        drive = Drive(f"serial:M:S{h}", f"M (serial S{h})", "M", f"S{h}", "F1")
        for i in range(8):
            rate = (100e6 + 20e6 * h) * (0.8 if h == 1 and i >= 5 else 1.0)
            entries.append(replace(_entry(f"{host}-run-{i}", _day(i * 3 + h), rate, drive=drive), host=host,
                                   run_key=f"{host}/{_day(i * 3 + h)}", plan_name="quick" if i != 7 else "other"))
    with History(database) as history:
        history.add_many(entries)
        history.add_note(Note(None, "serial:M:S1", "moved to the NAS", True, _day(20)))
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["history", "--history", str(database), "site", "--out", str(out)])
    assert result.exit_code == 0 and result.output.strip() == f"history site: {out / 'index.html'} (3 drives)"
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == 1 + 3 + 2
    index = (out / "index.html").read_text()
    for name in ("node-a", "node-b", "mac-studio", "M (serial S0)", "M (serial S2)", "moved to the NAS"):
        assert name in index
    for page in pages:
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            assert (page.parent / href).resolve().is_file(), (page, href)
    for page in pages:
        dom, log = open_in_chromium(page, ["--dump-dom"])
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        assert not [line for line in console if "Uncaught" in line or "Error" in line], (page, console)
        drawn = re.search(r'data-figures-drawn="(\d+)"', dom)
        assert drawn is not None and int(drawn.group(1)) == page.read_text().count("Plotly.newPlot("), page
    [quick] = [p for p in (out / "plans").glob("quick-*.html")]
    text = quick.read_text()
    assert "quick on every drive" in text and all(f"M (serial S{h})" in text for h in range(3))
    assert "moved to the NAS" in text                     # a drive's note on every page that shows the drive
