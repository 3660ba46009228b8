"""JSON from strangers read within bounds (rundir/jsonread.py): each bound at its edge, each refusal in its words."""

from __future__ import annotations

import json

import pytest

from stibium_py.errors import JsonRefused
from stibium_py.rundir.jsonread import MAX_DEPTH, MAX_INT_DIGITS, load_json


def _refused(text: str) -> str:
    with pytest.raises(JsonRefused) as e:
        load_json(text, "r/run.json", "restore it from a copy")
    return str(e.value)


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_the_bounds_are_what_the_files_need():
    assert (MAX_DEPTH, MAX_INT_DIGITS) == (64, 30)


def test_nesting_is_read_to_its_bound_and_refused_past_it():
    assert load_json(_nested(MAX_DEPTH), "f", "x") == json.loads(_nested(MAX_DEPTH))
    assert _refused(_nested(MAX_DEPTH + 1)) == "r/run.json: nested deeper than 64 levels; restore it from a copy"
    # objects count as lists do, and a deep branch beside shallow ones is found
    deep = '{"a": 1, "b": [' + '{"c": ' * (MAX_DEPTH - 1) + "0" + "}" * (MAX_DEPTH - 1) + "]}"
    assert _refused(deep) == "r/run.json: nested deeper than 64 levels; restore it from a copy"
    ok = '[{"a": []}, ' + _nested(MAX_DEPTH - 1) + "]"
    assert load_json(ok, "f", "x")[0] == {"a": []}


def test_nesting_past_what_the_interpreter_can_parse_is_the_same_one_line():
    assert _refused(_nested(200_000)) == "r/run.json: nested deeper than 64 levels; restore it from a copy"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_constant_that_is_not_a_number_is_refused(constant):
    assert _refused(f'{{"seconds": {constant}}}') == \
        f"r/run.json: holds {constant}, which is not a number; restore it from a copy"


def test_a_float_too_large_is_refused_with_its_first_40_characters():
    assert _refused('{"bytes": 1e400}') == "r/run.json: holds the number 1e400, too large for a float; restore it " \
                                           "from a copy"
    long = "9" * 50 + ".5e400"
    assert _refused(f"[{long}]") == f"r/run.json: holds the number {long[:40]}, too large for a float; restore it " \
                                    f"from a copy"
    assert load_json("[1.5e300, -2.25]", "f", "x") == [1.5e300, -2.25]


def test_a_whole_number_is_read_to_30_digits_of_either_sign():
    most = "9" * MAX_INT_DIGITS
    assert load_json(f"[{most}, -{most}, 0, 7]", "f", "x") == [int(most), -int(most), 0, 7]
    assert _refused(f"[{most}9]") == "r/run.json: holds a whole number of 31 digits; restore it from a copy"
    assert _refused(f"[-{most}9]") == "r/run.json: holds a whole number of 31 digits; restore it from a copy"


def test_what_is_not_json_is_left_to_json_s_own_error():
    with pytest.raises(json.JSONDecodeError):
        load_json("{", "f", "x")


def test_scalars_and_empty_containers_read_as_they_are():
    assert load_json("3", "f", "x") == 3
    assert load_json('"a"', "f", "x") == "a"
    assert load_json("{}", "f", "x") == {}
