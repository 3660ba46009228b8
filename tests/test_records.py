"""The typed records at the seams: a measurement built from its operation and the helper's answer, the
CSV columns derived from it, run.json's versions, and a run directory written before the records existed
(tests/fixtures/run-0741864, from main at 0741864) still reporting and comparing with the same numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.run.helper import measure_args
from stibium_py.errors import MeasurementError
from stibium_py.rundir.measurement import COLUMNS
from stibium_py.rundir.answers import DROPPED_KEYS, failed, from_answer
from stibium_py.rundir.op import Op
from stibium_py.rundir.record import RUN_FORMAT, RecordError, RunRecord, ops_digest
from stibium_py.rundir.store import MeasurementLog
from stibium_py.rundir.csvread import read_measurements

FIXTURE = Path(__file__).parent / "fixtures" / "run-0741864"
OP = Op(seq=3, test="t", kind="pattern", op="write", access="random", size_bytes=1 << 20, granularity_bytes=4096,
        stride_bytes=0, trial=1, file="t/data.bin", bytes=65536, engine="direct", fill="random", sync="fsync",
        seed=11, data_seed=12, existing=False)


def _answer(**changes):
    answer = {"op": "write", "access": "random", "granularity_bytes": 4096, "stride_bytes": 0, "bytes": 65536,
              "seconds": 0.01, "engine": "direct", "engine_requested": "direct", "seed": 11, "fill": "random",
              "sync": "fsync", "span_bytes": 1 << 20, "path": "/abs/t/data.bin", "requests": 16}
    answer.update(changes)
    return answer


def test_a_measurement_takes_the_operation_and_the_helpers_numbers():
    m = from_answer(OP, True, _answer(), started_s=1.5)
    assert (m.seq, m.test, m.file, m.bytes, m.seconds, m.started_s, m.requests) == \
        (3, "t", "t/data.bin", 65536, 0.01, 1.5, 16)
    assert m.ok and m.rate_bytes_per_s == pytest.approx(6553600)


@pytest.mark.parametrize("key, value, planned", [("op", "read", "'write'"), ("granularity_bytes", 8192, "4096"),
                                                 ("bytes", 4096, "65536"), ("engine_requested", "buffered",
                                                                            "'direct'"),
                                                 ("span_bytes", 2 << 20, "1048576"), ("sync", "none", "'fsync'")])
def test_an_answer_that_disagrees_with_its_operation_is_refused(key, value, planned):
    with pytest.raises(MeasurementError) as e:
        from_answer(OP, True, _answer(**{key: value}), started_s=0.0)
    assert str(e.value) == (f"operation 3: the helper measured {key}={value!r} where the plan asked for {planned}; "
                            f"reinstall stibium so that the helper and the package match")


def test_an_unknown_key_is_refused_and_a_failure_keeps_its_error():
    with pytest.raises(MeasurementError, match=r"the helper answered keys this stibium does not know \(lat_p42_s\)"):
        from_answer(OP, True, _answer(lat_p42_s=1.0), started_s=0.0)
    m = from_answer(OP, False, {"error": "disk full", "errno": 28, "strerror": "No space left on device",
                                "bytes": 0, "removed_partial_file": True}, started_s=2.0)
    assert (m.error, m.errno, m.strerror, m.seconds, m.removed_partial_file, m.ok) == \
        ("disk full", 28, "No space left on device", None, True, False)
    assert failed(OP, "hung", 3.0).error == "hung"


def test_every_key_the_real_helper_answers_is_a_column_or_dropped_on_purpose(helper, disk_dir):
    import subprocess
    path = disk_dir / "t" / "data.bin"
    path.parent.mkdir()
    op = Op(**{**OP.__dict__, "engine": "buffered"})
    out = subprocess.run([str(helper), *measure_args(op, path)], capture_output=True, text=True)
    answer = json.loads(out.stdout)
    assert set(answer) <= set(COLUMNS) | set(DROPPED_KEYS)
    m = from_answer(op, out.returncode == 0, answer, started_s=0.0)
    size = path.stat().st_size      # random blocks of the span: the file ends at the last block written
    assert m.ok and m.bytes == 65536 and size <= 1 << 20 and size % 4096 == 0


def test_rows_round_trip_and_an_older_column_set_reads_none(tmp_path):
    m = from_answer(OP, True, _answer(direct_honoured=True, lat_p50_s=1e-4), started_s=0.25)
    log = MeasurementLog(tmp_path)
    log.append(m)
    log.close()
    rows, damaged = read_measurements(tmp_path)
    assert rows.rows() == [m] and damaged == 0
    first = COLUMNS[: COLUMNS.index("end_ns") + 1]     # the first format's columns
    text = (tmp_path / "measurements.csv").read_text().splitlines()
    cut = [",".join(line.split(",")[: len(first)]) for line in text]
    (tmp_path / "measurements.csv").write_text("\n".join(cut) + "\n")
    (old,), _ = read_measurements(tmp_path)   # a table iterates as its measurements
    assert old.seconds == m.seconds and old.syscalls is None and old.engine_requested is None


def test_run_json_of_format_1_is_migrated_and_format_2_round_trips():
    data = json.loads((FIXTURE / "run.json").read_text())
    assert data["format"] == "stibium-run/1" and len(data["expanded"]["ops"]) == 30
    record = RunRecord.from_json(data, "run.json")
    assert record.expanded["ops_count"] == 30
    assert record.expanded["ops_sha256"] == ops_digest(data["expanded"]["ops"])
    assert "ops" not in record.expanded and record.plan.name == "fixture" and record.status == "complete"
    again = RunRecord.from_json(json.loads(json.dumps(record.to_json())), "run.json")
    assert again == record and again.to_json()["format"] == RUN_FORMAT
    with pytest.raises(RecordError, match="not a stibium run.json"):
        RunRecord.from_json({"format": "stibium-run/9"}, "run.json")


def test_a_run_directory_from_before_the_records_reports_the_same_numbers(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    result = CliRunner().invoke(main, ["report", str(run), "--json"])
    assert result.exit_code == 0, result.output
    new = json.loads(result.output)
    old = json.loads((FIXTURE / "summary.json").read_text())
    old["settings"]["noise_band"] = new["settings"]["noise_band"]    # recorded since
    for t in old["tests"]:        # a latency's interval held to 0 s or more since (docs/methods.md)
        for e in (t.get("latency_s"), ((t.get("references") or {}).get("ols") or {}).get("latency_s")):
            if e and e.get("low") is not None and e["low"] < 0:
                e["low"] = 0.0
                e["method"] += "; held to 0 or more (the range a latency can take)"
    for summary in (old, new):    # least squares computed in closed form since, to the last few bits
        for t in summary["tests"]:
            ols = (t.get("references") or {}).get("ols") or {}
            for e in (ols.get("rate_bytes_per_s"), ols.get("latency_s")):
                if e:
                    e["method"] = "ols"
    for t in old["tests"]:        # the same numbers under the names without their library (analysis/stats)
        for ref, was, now in (("siegel", "siegel repeated medians (scipy)", "siegel repeated medians"),
                              ("biweight", "tukey-biweight rlm (statsmodels), started from theil-sen",
                               "tukey-biweight rlm, started from theil-sen")):
            line = (t.get("references") or {}).get(ref)
            if line:
                assert line["method"] == was
                line["method"] = now
    for t in new["tests"]:        # the latency histogram is kept since; the fixture's rows have none
        for point in t.get("points", []):
            assert point.pop("lat_hist_ns") is None
            # requests in flight since: the fixture's rows read one at a time, and IOPS has its interval
            assert (point.pop("queue_depth"), point.pop("threads"), point.pop("io_method")) == (1, 1, "")
            assert point.pop("iops_estimate")["estimate"] == pytest.approx(point["iops"], rel=1e-9)
            # held against memory speed since: the fixture's run.json has no memory reads
            assert (point.pop("memory_share"), point.pop("below_cache")) == (None, False)
        if t["kind"] == "pattern":
            assert t.pop("queue_depth_knees") == []
            assert t.pop("instrument") == "helper"       # instruments since: every row of then is the helper's
        else:
            assert t.pop("below_cache") == []
    assert _close(new, old)
    assert (run / "report.html").stat().st_size > 0


def _close(a, b) -> bool:
    """Equal, floats to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9)
    return a == b


def test_a_run_directory_from_before_the_records_compares(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(FIXTURE, a)
    shutil.copytree(FIXTURE, b)
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--json", "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    cmp = json.loads(result.output)
    assert cmp["same_machine"] and cmp["differences"] == []
    assert all(r["ratio"]["estimate"] == pytest.approx(1.0) for r in cmp["rows"])
    assert len(cmp["rows"]) == 2 + 4      # files write and read; pat read and write at 4 KiB and 64 KiB


def test_the_generated_reference_pages_are_up_to_date():
    from stibium_py.report.reference import PAGES
    docs = Path(__file__).parent.parent / "docs"
    for name, make in PAGES.items():
        assert (docs / name).read_text(encoding="utf-8") == make(), \
            f"docs/{name} is out of date: run `python -m stibium_py.report.reference docs`"


def test_every_column_is_described():
    from stibium_py.rundir.descriptions import DESCRIPTIONS
    assert list(DESCRIPTIONS) == list(COLUMNS)


def test_a_table_holds_the_same_measurements_and_the_same_rule_of_validity():
    from stibium_py.rundir.table import Table
    ms = [from_answer(OP, True, _answer(seconds=s), started_s=0.0) for s in (0.01, 0.0, -1.0)]
    ms += [failed(OP, "hung", 1.0), ms[0]._replace(error=None, direct_honoured=False)]
    table = Table.from_rows(ms)
    assert table.rows() == ms and len(table) == 5
    assert table.ok.tolist() == [m.ok for m in ms] == [True, False, False, False, True]
    assert table.valid().rows() == [ms[0], ms[4]]
    assert table.take([4]).row(0).direct_honoured is False


def test_series_json_is_a_typed_record_that_keeps_newer_keys():
    from stibium_py.rundir.record import SeriesRecord
    record = SeriesRecord(plan="quick", runs=5, source="plans/quick.yaml", target="/t", started_utc="2026-11-23T01:00:00Z",
                          seed=3, keep_files=True)
    data = record.to_json()
    assert data["format"] == "stibium-series/1" and data["runs"] == 5 and data["status"] == "running"
    assert SeriesRecord.from_json(data, "series.json") == record
    newer = SeriesRecord.from_json({**data, "from_the_future": [1]}, "series.json")
    assert newer.to_json()["from_the_future"] == [1]
    with pytest.raises(RecordError) as e:
        SeriesRecord.from_json({**data, "runs": "five"}, "s/series.json")
    assert str(e.value) == "s/series.json: its runs is missing or damaged; restore it from a copy of the series"
    with pytest.raises(RecordError, match="not a stibium-series/1 file"):
        SeriesRecord.from_json({"format": "stibium-run/2"}, "series.json")


def test_json_files_hold_the_same_values_with_plain_containers_on_one_line():
    import math
    from stibium_py.rundir.store import json_text
    data = {"format": "x", "settings": {"seed": 1, "ceiling": math.inf},
            "tests": [{"name": "files", "points": [{"seq": 3, "rate": 1.5, "file": "a/b"}, {"seq": 4, "rate": math.nan}],
                       "empty": [], "nothing": {}, "pair": (1, 2), "by_seq": {7: "seven", None: 0, True: 1, 2.5: "x"},
                       "where": Path("/t"), "runs": {1: {"a": [1]}, None: {"b": {}}}}]}
    text = json_text(data)
    expected = json.dumps({"format": "x", "settings": {"seed": 1, "ceiling": None},
                           "tests": [{"name": "files", "points": [{"seq": 3, "rate": 1.5, "file": "a/b"},
                                                                  {"seq": 4, "rate": None}],
                                      "empty": [], "nothing": {}, "pair": [1, 2],
                                      "by_seq": {7: "seven", None: 0, True: 1, 2.5: "x"}, "where": "/t",
                                      "runs": {1: {"a": [1]}, None: {"b": {}}}}]})
    assert json.loads(text) == json.loads(expected)
    lines = text.splitlines()
    assert '      "points": [' in lines and '        {"seq": 3, "rate": 1.5, "file": "a/b"},' in lines
    assert '  "settings": {"seed": 1, "ceiling": null},' in lines and text.endswith("}\n")
    # text outside ASCII escaped, as json.dumps does, in a value and in a key, on a line of its own or inside one
    accents = json_text({"caf\u00e9": {"na\u00efve": [1]}, "t\u00e9st": ["r\u00e9sum\u00e9", 2]})
    assert accents == ('{\n  "caf\\u00e9": {\n    "na\\u00efve": [1]\n  },\n'
                       '  "t\\u00e9st": ["r\\u00e9sum\\u00e9", 2]\n}\n')


def test_a_kind_s_own_part_of_an_operation_is_flat_in_its_dict_as_before_the_parts_were_apart():
    """A stream's frames and a tree's phase are parts of their own in `Op`; run.json's operations and their digest
    (what resume checks a run directory by) keep them flat, so that a run made before still resumes."""
    from dataclasses import replace
    from stibium_py.rundir.op import Frames, Phase
    stream = replace(OP, kind="stream", chunk_bytes=4096, frames=Frames(24.0, 2, 1, 3, "dpx"))
    assert stream.as_dict() == {**OP.as_dict(), "kind": "stream", "chunk_bytes": 4096, "fps": 24.0, "streams": 2,
                                "stream": 1, "buffer_frames": 3, "sequence": "dpx"}
    movie = replace(stream, frames=Frames(24.0, 1, 0, 0))          # the first stream, no buffer, a movie
    assert movie.as_dict() == {**OP.as_dict(), "kind": "stream", "chunk_bytes": 4096, "fps": 24.0, "streams": 1}
    tree = replace(OP, kind="tree", op="create", phase=Phase(120))
    assert tree.as_dict() == {**OP.as_dict(), "kind": "tree", "op": "create", "files": 120}
    assert "frames" not in OP.as_dict() and "phase" not in OP.as_dict()


def test_a_kind_s_own_columns_are_a_typed_part_of_the_measurement_and_flat_in_the_csv_and_the_table():
    """A verify's, a stream's and a tree's columns are parts of their own (`m.blocks`, `m.frames`, `m.tree`), None on
    every other row; built and replaced by the columns' names, kept flat and in their order in the CSV and the
    table, and whole across a pickle (the rows many clients send rank 0)."""
    import pickle
    from stibium_py.rundir.measurement import COLUMNS, BlockCounts, FrameFacts, Measurement
    from stibium_py.rundir.measurement import PhaseCounts as TreeCounts
    from stibium_py.rundir.table import Table
    plain = from_answer(OP, True, _answer(), started_s=1.5)
    assert (plain.tree, plain.frames, plain.blocks) == (None, None, None)
    framed = plain._replace(fps=25.0, streams=2, stream=1, buffer_frames=3)
    assert framed.frames == FrameFacts(25.0, 2, 1, 3) and framed._replace(stream=0).frames == FrameFacts(25.0, 2, 0, 3)
    assert framed._replace(fps=None, streams=None, stream=None, buffer_frames=None).frames is None
    signed = plain._replace(block_bytes=4096, first_block=16, ok_blocks=15, moved_blocks=1, corrupt_blocks=0,
                            unreadable_blocks=0, period_blocks=8, bad_blocks="[]")
    assert signed.blocks == BlockCounts(4096, 16, 15, 1, 0, 0, 8, "[]")
    phase = plain._replace(entries=120, caches_dropped=False)
    assert phase.tree == TreeCounts(entries=120, caches_dropped=False)
    for m in (plain, framed, signed, phase):
        cells = m.to_row()
        assert list(cells) == list(COLUMNS) and len(m.flat()) == len(COLUMNS)
        assert Measurement.from_row({k: str(v) for k, v in cells.items()}, frozenset(COLUMNS)) == m
        assert pickle.loads(pickle.dumps(m)) == m
    table = Table.from_rows([plain, framed, signed, phase])
    fps = table.col("fps")
    assert fps[0] != fps[0] and fps[1] == 25.0 and table.col("entries")[3] == 120     # a number not known: NaN
    assert table.rows() == [plain, framed, signed, phase]
    assert signed.to_row()["ok_blocks"] == 15 and signed.to_row()["fps"] == ""
    assert phase.to_row()["caches_dropped"] == "false"


def test_an_operation_s_dict_is_what_asdict_gives_for_every_kind_of_the_shipped_plans_and_a_verify(tmp_path):
    """as_dict takes the record's own fields rather than a deep copy of each (dataclasses.asdict, 15 s of a verify's
    190,000 operations): the same keys in the same order, with the same values and types, for every operation of the
    shipped plans (those that need no file beside them) and of a verify."""
    from dataclasses import asdict
    from stibium_py.plan import load_plan
    from stibium_py.plan.expand import expand

    def flat(op: Op) -> dict:
        out = asdict(op)
        out.update(out.pop("phase") or {})
        out.update(out.pop("frames") or {})
        return out

    verify = tmp_path / "v.yaml"
    verify.write_text("name: v\ntests:\n  - name: fill\n    kind: verify\n    bytes: 10MiB\n    file_size: 4MiB\n")
    plans = [p for p in sorted((Path(__file__).parent.parent / "plans").glob("*.yaml")) if "replay" not in p.name]
    kinds = set()
    for path in [*plans, verify]:
        plan, _ = load_plan(path)
        for op in expand(plan, 1, 10**13).ops:
            mine, theirs = op.as_dict(), flat(op)
            assert list(mine.items()) == [(k, v) for k, v in theirs.items() if k in mine], path
            assert [type(v) for v in mine.values()] == [type(theirs[k]) for k in mine]
            # what is left out is a field at its unset value (as_dict keeps the digest of plans made before it)
            assert {theirs[k] for k in theirs if k not in mine} <= {1, 0, 0.0, None, "", "helper"}
            kinds.add(op.kind)
    assert kinds == {"files", "pattern", "stream", "sustained", "tree", "verify"}


def test_a_table_lists_each_column_as_its_cells_one_by_one(tmp_path):
    """Table.values, which lists whole columns where every cell is already the record's value (ints, text, floats
    none of which is missing), gives what converting each cell gives (table._value, as Table.value does for one):
    the same values of the same types, None where a field is missing, in every column, with and without missing
    cells, read back from measurements.csv as well as built from records."""
    from stibium_py.rundir.table import Table, _value
    whole = from_answer(OP, True, _answer(direct_honoured=True, lat_p50_s=1e-4), started_s=0.25)
    bare = from_answer(OP, True, _answer(), started_s=0.5)
    log = MeasurementLog(tmp_path)
    for m in (whole, bare):
        log.append(m)
    log.close()
    read, _ = read_measurements(tmp_path)
    for table in (Table.from_rows([whole, whole]), Table.from_rows([whole, bare]), Table.from_rows([bare]), read):
        for name in COLUMNS:
            cells = [_value(name, v) for v in table.col(name).tolist()]
            listed = table.values(name)
            assert listed == cells and [type(v) for v in listed] == [type(v) for v in cells], name
            assert [table.value(k, name) for k in range(len(table))] == cells, name
