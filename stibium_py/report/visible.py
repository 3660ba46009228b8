"""Text from a record as a terminal shows it. Names, labels, hosts and sentences in a run directory, an export or
a history database come from strangers: a control character there (an escape sequence that sets the window's
title or clears the screen, a carriage return that writes over a line, a bidirectional override that shows a name
reversed) is shown as a visible escape, and rich's markup ([bold], [/x]) as the characters it is made of."""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and Unicode's bidirectional overrides and isolates
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with each control character as an escape (\\x1b, \\u202e)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


def as_markup(text: str) -> str:
    """`text` for a place where rich reads markup (a table's cell, a printed line): visible, its markup escaped."""
    from rich.markup import escape
    return escape(visible(text))
