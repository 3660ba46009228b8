"""The helper's tick-to-nanosecond conversion (sb_ticks_to_ns), a pure C function,
compiled here with a small driver and checked against exact integer arithmetic:
Intel's 1/1 and Apple Silicon's 125/3 timebases, up to intervals where a naive
ticks * numer would overflow 64 bits."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HELPER_SRC = Path(__file__).resolve().parent.parent / "helper"

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sb_clock.h"
int main(int argc, char **argv) {
    for (int i = 1; i + 2 < argc; i += 3)
        printf("%llu\n", (unsigned long long)sb_ticks_to_ns(strtoull(argv[i], 0, 10),
               (uint32_t)strtoul(argv[i + 1], 0, 10), (uint32_t)strtoul(argv[i + 2], 0, 10)));
    return 0;
}
"""

CASES = [
    (0, 1, 1), (1, 1, 1), (123456789, 1, 1), (2**64 - 1, 1, 1),       # Intel: identity
    (3, 125, 3), (1, 125, 3), (2, 125, 3), (24_000_000, 125, 3),       # Apple Silicon: 24 MHz
    (86400 * 24_000_000, 125, 3),                                       # one day
    (7 * 86400 * 24_000_000 + 2, 125, 3),                               # a week and two ticks
    (200_000_000_000_000_000, 125, 3),            # ticks * 125 = 2.5e19 > 2^64: a naive product overflows
    (2**63, 1, 2), (10**18, 3, 7),                                      # other timebases
]


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("clock")
    (d / "driver.c").write_text(DRIVER)
    exe = d / "driver"
    subprocess.run([cc, "-O2", "-D_GNU_SOURCE", f"-I{HELPER_SRC}", str(d / "driver.c"), str(HELPER_SRC / "sb_clock.c"),
                    "-o", str(exe)], check=True)
    return exe


def test_conversion_is_exact(driver):
    args = [str(v) for case in CASES for v in case]
    out = subprocess.run([str(driver), *args], capture_output=True, text=True, check=True).stdout.split()
    expected = [str(ticks * numer // denom) for ticks, numer, denom in CASES]
    assert out == expected
