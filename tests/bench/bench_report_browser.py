"""How long headless Chromium takes to open a report and draw every figure, and a screenshot of it.

    python3 tests/bench/bench_report_browser.py RUN_DIR [--screenshot out.png] [--rounds 3]

Times Chromium from its launch to the moment the page says every figure is drawn: the page logs
"stibium: N figures drawn" to the console once every Plotly.newPlot has resolved, and Chromium stamps
each log line with the wall clock, so the time is the page's real one (the DOM dump that follows waits
out Chromium's virtual-time budget, which has nothing to do with the page). Median of the rounds, with
Chromium's own start-up to its first console line on an empty page beside it, and the whole process
(launch to exit) for reference. Target: at most 5 s for a report of 1 000 000 measurements."""

from __future__ import annotations

import argparse
import datetime
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_report_browser import CHROMIUM, open_in_chromium  # noqa: E402


_STAMP = re.compile(r"^\[\d+:\d+:(\d{4})/(\d{6}\.\d+):INFO:CONSOLE[^\]]*\] \"([^\"]*)\"")


def console_times(log: str, launched: datetime.datetime) -> list[tuple[float, str]]:
    """(seconds after launch, message) of each console line, from Chromium's wall-clock stamps."""
    out = []
    for line in log.splitlines():
        m = _STAMP.match(line)
        if m:
            stamp = datetime.datetime.strptime(f"{launched.year}{m.group(1)}{m.group(2)}", "%Y%m%d%H%M%S.%f")
            out.append(((stamp - launched).total_seconds(), m.group(3)))
    return out


def timed_open(page: Path, says: str) -> tuple[float | None, float, str]:
    """(launch to the first console line containing `says`, launch to exit, DOM)."""
    launched = datetime.datetime.now()
    t0 = time.perf_counter()
    dom, log = open_in_chromium(page, ["--dump-dom"])
    whole = time.perf_counter() - t0
    times = console_times(log, launched)
    drawn = [t for t, msg in times if says in msg]
    return (drawn[0] if drawn else None), whole, dom


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--screenshot", type=Path)
    a = ap.parse_args()
    if CHROMIUM is None:
        raise SystemExit("Chromium is not installed (Debian: apt-get install chromium)")
    report = a.run_dir / "report.html"
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.html"
        empty.write_text("<!DOCTYPE html><html><body><script>console.log('empty page')</script></body></html>")
        base, opened, wholes = [], [], []
        for _ in range(a.rounds):
            base.append(timed_open(empty, "empty page")[0])
            seconds, whole, dom = timed_open(report, "figures drawn")
            if seconds is None:
                raise SystemExit(f"{report}: the page never said its figures were drawn")
            opened.append(seconds)
            wholes.append(whole)
    figures = re.findall(r'<div id="fig\d+"[^>]*class="([^"]*)"', dom)
    drawn = sum("js-plotly-plot" in c for c in figures)
    print(f"{report} ({report.stat().st_size / 1e6:.2f} MB): every figure drawn {statistics.median(opened):.2f} s "
          f"after launch (median of {a.rounds}: {', '.join(f'{x:.2f}' for x in opened)}); Chromium's first "
          f"console line on an empty page {statistics.median(base):.2f} s; whole process with the DOM dump "
          f"{statistics.median(wholes):.2f} s; {drawn} of {len(figures)} figures drawn")
    if a.screenshot:
        open_in_chromium(report, [f"--screenshot={a.screenshot.resolve()}", "--window-size=1300,2600",
                                  "--hide-scrollbars"])
        print(f"screenshot: {a.screenshot}")


if __name__ == "__main__":
    main()
