"""JSON from strangers read within bounds: run.json and series.json of a run directory someone sent, fio's output
given to `stibium import fio`. Python's json accepts what no writer of these files writes and what stibium
cannot use: NaN and Infinity, numbers that overflow a float (1e400 reads as inf), integers of thousands of
digits, and nesting as deep as the interpreter's recursion allows (then a RecursionError). Here each is refused
in one line that names the file (`JsonRefused`, a ValueError); a file that is not JSON at all still raises
json's own JSONDecodeError, whose position the callers turn into their own words."""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import JsonRefused

MAX_DEPTH = 64                 # run.json nests 5 levels, fio's json+ 6: a file past 64 is not one of them
MAX_INT_DIGITS = 30            # a byte count of 2^64 has 20 digits




class _Unusable(Exception):
    """A number json would read but no writer of these files writes (the reason in words)."""


def load_json(text: str, where: str, todo: str) -> Any:
    """`text` as JSON, refused (JsonRefused: "{where}: {what}; {todo}") where it nests past MAX_DEPTH or holds a
    number that is NaN, infinite, overflows a float or has more than MAX_INT_DIGITS digits."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise JsonRefused(f"{where}: nested deeper than {MAX_DEPTH} levels; {todo}") from None
    except _Unusable as e:
        raise JsonRefused(f"{where}: holds {e}; {todo}") from None
    if _depth(data) > MAX_DEPTH:
        raise JsonRefused(f"{where}: nested deeper than {MAX_DEPTH} levels; {todo}")
    return data


def _constant(name: str) -> Any:
    raise _Unusable(f"{name}, which is not a number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unusable(f"the number {text[:40]}, too large for a float")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Unusable(f"a whole number of {len(text.lstrip('-'))} digits")
    return int(text)


def _depth(data: Any) -> int:
    """How deep containers nest in data (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
