"""How long headless Chromium takes to open a report and draw every figure, and a screenshot of it.

    python3 tests/bench/bench_report_browser.py RUN_DIR [--screenshot out.png] [--rounds 3]

Times Chromium from start to the DOM dump after every figure was drawn (the figures' divs carry
Plotly's class and an svg), median of the rounds, with Chromium's own start-up on an empty page
measured beside it. Target: at most 5 s for a report of 1 000 000 measurements."""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_report_browser import CHROMIUM, open_in_chromium  # noqa: E402


def timed_open(page: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    dom, _ = open_in_chromium(page, ["--dump-dom"])
    return time.perf_counter() - t0, dom


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
        empty.write_text("<!DOCTYPE html><html><body>empty</body></html>")
        base, opened = [], []
        for _ in range(a.rounds):
            base.append(timed_open(empty)[0])
            seconds, dom = timed_open(report)
            opened.append(seconds)
    figures = re.findall(r'<div id="fig\d+"[^>]*class="([^"]*)"', dom)
    drawn = sum("js-plotly-plot" in c for c in figures)
    print(f"{report} ({report.stat().st_size / 1e6:.2f} MB): opened and drawn in {statistics.median(opened):.2f} s "
          f"(median of {a.rounds}; Chromium on an empty page {statistics.median(base):.2f} s); "
          f"{drawn} of {len(figures)} figures drawn")
    if a.screenshot:
        open_in_chromium(report, [f"--screenshot={a.screenshot.resolve()}", "--window-size=1300,2600",
                                  "--hide-scrollbars"])
        print(f"screenshot: {a.screenshot}")


if __name__ == "__main__":
    main()
