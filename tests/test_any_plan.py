"""Any valid plan runs to its report, and every word of it is true (issue: every word true). Hypothesis builds
small valid plans of every kind at their edges (one trial, one repeat, one size, one granularity, one thread,
the fewest rounds; mixes, steady state, stonewall, fio as the bench beside it, a rate, read-back, each tree phase) and runs each with the compiled
helper on a real disk, then `report` and `compare` of it with a second run of the same plan. It asserts: exit
status 0, no internal error; no None, NaN or inf in the terminal, summary.json or the page's words; no interval
bound below zero for a quantity that cannot be negative; no estimate outside its own interval. The seed is fixed
(derandomize), and the count keeps the whole test within a minute or two."""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from stibium_py.cli import main

EXAMPLES = 10          # plans a kind (their first test of it): 40 plans in all

SIZES = ["4KiB", "16KiB", "64KiB"]


def _one_or_list(values: list[Any]) -> st.SearchStrategy:
    """A value, or a list of one or two of them: a plan's edges are one of a thing and the fewest that differ."""
    return st.one_of(st.sampled_from(values), st.lists(st.sampled_from(values), min_size=1, max_size=2, unique=True))


files_tests = st.fixed_dictionaries({
    "kind": st.just("files"),
    "sizes": st.lists(st.sampled_from(["4KB", "20KB", "64KiB", "200KB"]), min_size=1, max_size=3, unique=True),
    "repeats": st.integers(1, 3),
}, optional={
    "write_order": st.sampled_from(["as-listed", "cycle", "random"]),
    "read_order": st.sampled_from(["as-written", "random", "directory"]),
    "between": st.sampled_from(["none", "evict"]),
    "engine": st.sampled_from(["direct", "buffered"]),
})


@st.composite
def pattern_tests(draw) -> dict[str, Any]:
    test: dict[str, Any] = {"kind": "pattern",
                            "granularities": draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=2,
                                                           unique=True)),
                            "access": draw(_one_or_list(["sequential", "random", "strided"])),
                            "bytes": "256KiB", "span": "4MiB"}
    how = draw(st.sampled_from(["op", "mix", "both"]))
    if how in ("op", "both"):
        test["op"] = draw(_one_or_list(["read", "write"]))
    if how in ("mix", "both"):
        test["read_fraction"] = draw(st.sampled_from([0.5, 0.7, [0.3, 0.7]]))
    if "strided" in (test["access"] if isinstance(test["access"], list) else [test["access"]]):
        test["strides"] = [draw(st.sampled_from(["4KiB", "16KiB"]))]
    if draw(st.booleans()):
        test["steady"] = {"window": 3, "max_rounds": draw(st.integers(3, 4))}
    else:
        test["trials"] = draw(st.integers(1, 3))
    test["queue_depth"] = draw(st.sampled_from([1, 2, [1, 2]]))
    test["threads"] = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()):
        test["stonewall"] = "10s"
    elif draw(st.integers(0, 3)) == 0:
        test["bench"] = "fio"             # fio beside the road test, a quarter of the tests without a stonewall
    else:                                 # an open loop, a third of the rest
        if draw(st.integers(0, 2)) == 0:
            test["rate"] = draw(st.sampled_from(["4000 IOPS", ["1000/s", "8k IOPS"], "40MB/s"]))
            if draw(st.booleans()):
                test["arrivals"] = "poisson"
    return test


sustained_tests = st.fixed_dictionaries({
    "kind": st.just("sustained"), "bytes": st.sampled_from(["2MiB", "3MiB"]), "file_size": st.just("1MiB"),
    "granularity": st.sampled_from(["64KiB", "256KiB"]), "chunk": st.just("1MiB"),
}, optional={"read_back": st.booleans(), "queue_depth": st.sampled_from([1, 2])})

@st.composite
def tree_tests(draw) -> dict[str, Any]:
    files = draw(st.integers(1, 6))
    test: dict[str, Any] = {"kind": "tree", "files": files, "file_size": draw(st.sampled_from(["4KB", ["1KB", "8KB"]])),
                            "trials": draw(st.integers(1, 2)), "dirs": draw(st.integers(1, min(files, 3)))}
    if draw(st.booleans()) and files > 1:
        test["threads"] = draw(st.sampled_from([1, 2, [1, 2]]))
    if draw(st.booleans()):
        test["phases"] = draw(st.sampled_from([["create"], ["create", "read"], ["create", "stat", "list", "rename",
                                                                                  "delete"],
                                               ["create", "read", "copy", "delete"]]))
    return test


verify_tests = st.fixed_dictionaries({
    "kind": st.just("verify"), "bytes": st.sampled_from(["1MiB", "3MiB"]),
    "file_size": st.sampled_from(["1MiB", "2MiB"]), "chunk": st.sampled_from(["64KiB", "1MiB"]),
})

@st.composite
def replay_tests(draw) -> dict[str, Any]:
    """A replay of the recorded program beside the plan (written there by the test: tests/fixtures/replay)."""
    test: dict[str, Any] = {"kind": "replay", "trace": REPLAYED.name, "trials": draw(st.integers(1, 2)),
                            "timing": draw(st.sampled_from(["as-fast", "as-recorded"]))}
    if test["timing"] == "as-fast" and draw(st.booleans()):
        test["think"] = draw(st.sampled_from(["drop", "keep"]))
    if draw(st.booleans()):
        test["between"] = "none"
    return test


REPLAYED = Path(__file__).parent / "fixtures" / "replay" / "save.trace"

KINDS = {"files": files_tests, "pattern": pattern_tests(), "sustained": sustained_tests, "tree": tree_tests(),
         "verify": verify_tests, "replay": replay_tests()}


def plans(first: str) -> st.SearchStrategy:
    """A plan whose first test is of that kind, and maybe a second of any kind (each kind drawn as often: left to
    itself hypothesis draws the simplest kind far more often than the others)."""
    @st.composite
    def plan(draw) -> dict[str, Any]:
        tests = [draw(KINDS[first])] + draw(st.lists(st.one_of(*KINDS.values()), max_size=1))
        for i, test in enumerate(tests):
            test["name"] = f"t{i}-{test['kind']}"
        return {"name": "edge", "runs": draw(st.sampled_from([1, 1, 2])), "tests": tests}
    return plan()


def _words(text: str) -> list[str]:
    """The words that never stand for a measured value: Python's None, NaN and infinities."""
    return re.findall(r"\b(?:None|nan|NaN|inf|-inf|Infinity)\b", text)


def _page_words(html: str) -> str:
    """The page's text a reader sees: the HTML without its scripts (plotly.js, the figures' data) and tags."""
    text = re.sub(r"<script\b.*?</script>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", text)


POSITIVE = re.compile(r"(_bytes_per_s|_s|iops|ratio|files_per_s|names_per_s|rate)$")


def _intervals(node: Any, key: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every estimate in summary.json ({estimate, low, high}), with the key it stands under."""
    out = []
    if isinstance(node, dict):
        if "estimate" in node and "low" in node and "high" in node:
            out.append((key, node))
        for k, v in node.items():
            out += _intervals(v, str(k))
    elif isinstance(node, list):
        for v in node:
            out += _intervals(v, key)
    return out


def _check_summary(summary: dict[str, Any]) -> None:
    for key, e in _intervals(summary):
        est, low, high = e["estimate"], e["low"], e["high"]
        for v in (est, low, high):
            assert v is None or (isinstance(v, (int, float)) and math.isfinite(v)), (key, e)
        if low is not None and high is not None and est is not None:
            assert low <= est * (1 + 1e-9) + 1e-15 and est <= high * (1 + 1e-9) + 1e-15, (key, e)
        if POSITIVE.search(key) and est is not None and est > 0 and low is not None:
            assert low >= 0, (key, e)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.mark.timeout(900)
@pytest.mark.filterwarnings("error::RuntimeWarning")       # numpy's warnings are NaN or inf arithmetic somewhere
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("first", list(KINDS))
@given(data=st.data())
def test_any_valid_plan_runs_reports_and_compares_with_every_word_true(disk_dir, first, data):
    plan = data.draw(plans(first))
    for test in plan["tests"]:          # what was tried, in --hypothesis-show-statistics
        event(test["kind"] + (" with fio beside it" if test.get("bench") else "") + (" at a rate" if test.get("rate")
                                                                                   else ""))
    folder = Path(tempfile.mkdtemp(dir=disk_dir))
    path = folder / "edge.yaml"
    path.write_text(json.dumps(plan, indent=1))         # JSON is YAML: the plan as a reader would write it
    shutil.copy(REPLAYED, folder / REPLAYED.name)       # the trace a replay test names, beside the plan
    runs = []          # a run directory each, or a series of runs (plan runs: 2)
    for i in range(2):
        code, out = _cli("run", str(path), "--target", str(folder / "t"), "--out", str(folder / f"r{i}"))
        assert code == 0, f"{json.dumps(plan)}\n{out}"
        assert "internal error" not in out and not _words(out), out
        (run,) = (folder / f"r{i}").iterdir()
        runs.append(run)
    code, out = _cli("compare", str(runs[0]), str(runs[0]), "--out", str(folder / "self.html"))
    assert code == 0 and "internal error" not in out and not _words(out), out
    summary_text = (runs[0] / "summary.json").read_text()
    assert not _words(summary_text), _words(summary_text)
    _check_summary(json.loads(summary_text))
    page = _page_words((runs[0] / "report.html").read_text())
    assert not _words(page), [page[max(0, m.start() - 80):m.end() + 80] for m in re.finditer(r"\bNone\b|\bnan\b", page)]
    code, out = _cli("report", str(runs[0]))
    assert code == 0 and not _words(out), out
    code, out = _cli("compare", str(runs[0]), str(runs[1]), "--out", str(folder / "c.html"))
    assert code == 0 and "internal error" not in out and not _words(out), out
    compare_page = _page_words((folder / "c.html").read_text())
    assert not _words(compare_page)
    code, out = _cli("compare", str(runs[0]), str(runs[1]), "--json", "--out", str(folder / "c2.html"))
    assert code == 0, out
    _check_summary(json.loads(out))
    shutil.rmtree(folder)


def test_an_imported_fio_result_reports_and_compares_with_unknowns_in_words(tmp_path):
    fixtures = Path(__file__).parent / "fixtures" / "fio"
    code, out = _cli("import", "fio", str(fixtures / "shapes.json"), str(fixtures / "shapes-2.json"), "--out",
                     str(tmp_path / "a"))
    assert code == 0 and not _words(out), out
    code, out = _cli("import", "fio", str(fixtures / "shapes-3.json"), "--out", str(tmp_path / "b"))
    assert code == 0, out
    (a,), (b,) = (tmp_path / "a").iterdir(), (tmp_path / "b").iterdir()
    page = _page_words((a / "report.html").read_text())
    assert not _words(page), [page[max(0, m.start() - 80):m.end() + 40] for m in re.finditer(r"\bNone\b", page)]
    code, out = _cli("compare", str(a), str(b), "--out", str(tmp_path / "c.html"))
    assert code == 0 and not _words(out), out
    page = _page_words((tmp_path / "c.html").read_text())
    assert not _words(page), [page[max(0, m.start() - 80):m.end() + 40] for m in re.finditer(r"\bNone\b", page)]
    assert "?" not in " ".join(re.findall(r"B: [^<]*", (tmp_path / "c.html").read_text()))
