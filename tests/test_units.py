"""Size parsing and formatting."""

import pytest

from stibium_py.units import SizeError, format_bytes, format_rate, parse_bytes


@pytest.mark.parametrize("text,units,expected", [
    ("10KB", "decimal", 10_000), ("10KB", "binary", 10_240), ("4KiB", "decimal", 4096), ("2GB", "decimal", 2 * 10**9),
    ("2GiB", "decimal", 2 * 2**30), ("1.5MB", "decimal", 1_500_000), ("512", "decimal", 512), ("7 B", "decimal", 7),
    (4096, "decimal", 4096), ("1MiB", "decimal", 2**20), ("3kB", "decimal", 3000),
])
def test_parse(text, units, expected):
    assert parse_bytes(text, units) == expected


@pytest.mark.parametrize("bad,message", [
    ("10XB", "unknown unit 'XB' in '10XB'; use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB"),
    ("ten", "cannot read the size 'ten'; write a number with a unit, such as 10MB or 4KiB"),
    (-5, "-5 is negative; sizes are positive"),
    ("1.5B", "'1.5B' is not a whole number of bytes"),
    (True, "True is not a size; write a number with a unit, such as 10MB"),
    ("4mb", "unit 'mb' in '4mb' is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (a lower-case m is milli, a "
            "lower-case b a bit): did you mean 4MB or 4MiB?"),
    ("1mib", "unit 'mib' in '1mib' is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (a lower-case m is milli, a "
             "lower-case b a bit): did you mean 1MB or 1MiB?"),
    ("8Kb", "unit 'Kb' in '8Kb' is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (a lower-case m is milli, a "
            "lower-case b a bit): did you mean 8KB or 8KiB?"),
    ("2KIB", "unit 'KIB' in '2KIB' is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (a lower-case m is milli, a "
             "lower-case b a bit): did you mean 2KB or 2KiB?"),
])
def test_parse_errors(bad, message):
    with pytest.raises(SizeError) as e:
        parse_bytes(bad)
    assert str(e.value) == message


def test_format():
    assert format_bytes(10_000) == "10 KB"
    assert format_bytes(4096, "binary") == "4 KiB"
    assert format_bytes(999) == "999 B"
    assert format_rate(52_428_800) == "52.4 MB/s"
