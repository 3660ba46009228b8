"""A helper in Python for the runner's tests (stibium_py.run.helper.HelperFactory): it writes and reads the
files the runner names, with buffered I/O, and answers as the compiled helper does, with seconds from a
model (a fixed rate and latency) so that the numbers are known. No compiled binary is needed; the tests
of the real helper stay in test_helper.py and the truth tests.

`interrupt_at`: the measurement (by its position among the measurements asked for) at which the fake
raises KeyboardInterrupt, as a Ctrl-C during a run does. `slower`: a factor on the modelled seconds of each
measurement (by that position), for a rate that moves. `compressing`: writes of data of stated ratios take the
time of the bytes a compressing, deduplicating device would keep (fills.py): a 50 % compressible fill half."""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from stibium_py.run.helper import HelperResult, raw_clock_ns

RATE_BYTES_PER_S = 500e6
LATENCY_S = 1e-4


def _flags(args: list[str]) -> dict[str, str | bool]:
    out: dict[str, str | bool] = {}
    i = 1
    while i < len(args):
        key = args[i][2:].replace("-", "_")
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[key] = args[i + 1]
            i += 2
        else:
            out[key] = True
            i += 1
    return out


@dataclass
class FakeHelper:
    """One fake session; `calls` records every command it was given."""

    interrupt_at: int | None = None
    calls: list[list[str]] = field(default_factory=list)
    measured: int = 0
    slower: Callable[[int], float] = lambda k: 1.0
    compressing: bool = False
    frame_s: Callable[[str, int], float] | None = None
    bad: dict[int, dict[str, Any]] = field(default_factory=dict)     # sign: the fill's bad blocks, by index

    def __enter__(self) -> "FakeHelper":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def kill(self) -> None:
        pass

    def call(self, args: list[str], timeout_s: float | None = None,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             on_stonewall: Callable[[int], int] | None = None) -> HelperResult:
        self.calls.append(list(args))
        f = _flags(args)
        path = Path(str(f["path"]))
        if args[0] == "evict":
            return HelperResult(0, {"path": str(path)})
        if args[0] == "residency":
            return HelperResult(0, {"path": str(path), "resident": 0.0})
        if args[0] == "sign":
            return self._sign(f, path, on_row)
        if args[0] not in ("read", "write"):
            return HelperResult(2, {"error": f"the fake helper does not know {args[0]}"})
        moved = int(str(f["bytes"]))
        granularity = int(str(f.get("granularity", moved)))
        timed = "latency" not in f          # a layout and the memory probe ask for no latencies
        stonewall: dict[str, Any] = {}
        if "stonewall" in f:                # the requests the model's time allows by it, then the wear-out's
            per_request_s = (LATENCY_S + granularity / RATE_BYTES_PER_S) * self.slower(self.measured)
            requests = -(-moved // granularity)
            done = min(requests, int(float(str(f["stonewall"])) / per_request_s))
            reached = on_stonewall(done) if "wearout" in f and on_stonewall is not None else done
            stonewall = {"stonewall_s": float(str(f["stonewall"])), "stonewall_requests": done,
                         "stonewall_seconds": done * per_request_s, "wearout_requests": reached - done,
                         "pass_requests": requests}
            moved = min(moved, reached * granularity)
        if timed and self.interrupt_at is not None and self.measured == self.interrupt_at:
            raise KeyboardInterrupt
        if args[0] == "write":
            mode = "r+b" if "existing" in f and path.exists() else "wb"
            with open(path, mode) as out:
                out.write(os.urandom(moved))
        else:
            with open(path, "rb") as src:
                src.read(moved)
        kept = moved
        if self.compressing and args[0] == "write" and str(f.get("fill", "random")).startswith(("compressible", "dedupe")):
            shares = dict(part.split("=") for part in str(f["fill"]).split(","))
            kept = moved * (100 - int(shares.get("compressible", 0))) // 100 * (100 - int(shares.get("dedupe", 0))) // 100
        if "fps" in f:                      # a stream: its frames on the deadline schedule, without sleeping
            return self._frames(args, f, path, moved, on_row)
        seconds = (LATENCY_S + kept / RATE_BYTES_PER_S) * (self.slower(self.measured) if timed else 1.0)
        frame = re.fullmatch(r"(\d+x-t\d+-s\d+)/(\d{7})\.\w+", f"{path.parent.name}/{path.name}")
        clock: dict[str, int] = {}
        if frame is not None and timed and self.frame_s is not None:    # an image sequence's frame, in real time
            seconds = self.frame_s(frame.group(1), int(frame.group(2)))
            start = raw_clock_ns() or 0
            time.sleep(seconds)
            clock = {"start_ns": start, "end_ns": start + round(seconds * 1e9)}
        answer: dict[str, Any] = {**stonewall, **clock,
            "op": args[0], "path": str(path), "bytes": moved, "seconds": seconds,
            "access": str(f.get("access", "sequential")), "granularity_bytes": granularity,
            "stride_bytes": int(str(f.get("stride", 0))), "engine_requested": str(f.get("engine", "direct")),
            "engine": str(f.get("engine", "direct")), "requests": -(-moved // granularity),
            "queue_depth": int(str(f.get("queue_depth", 1))), "threads": int(str(f.get("threads", 1))),
            "resident_before": 0.0 if args[0] == "read" else None,
        }
        if "span" in f:
            answer["span_bytes"] = int(str(f["span"]))
        if "sync" in f:
            answer["sync"] = f["sync"]
        if "seed" in f:
            answer["seed"] = int(str(f["seed"]))
        if "fill" in f:
            answer["fill"] = f["fill"]
        if timed:
            self.measured += 1
        return HelperResult(0, answer)


    def _frames(self, args: list[str], f: dict[str, str | bool], path: Path, moved: int,
                on_row: Callable[[dict[str, Any]], None] | None) -> HelperResult:
        """The helper's --fps schedule on a clock of its own: frame k issued at t0 + k / fps or when frame k - 1
        ended, whichever is later, taking `frame_s(path name, k)` seconds (the model's time by default)."""
        if self.interrupt_at is not None and self.measured == self.interrupt_at:
            raise KeyboardInterrupt
        frame = int(str(f["chunk"]))
        period_ns = 1e9 / float(str(f["fps"]))
        t0 = end = 10**12
        for k in range(moved // frame):
            start = max(end, t0 + round(k * period_ns))
            took = self.frame_s(path.name, k) if self.frame_s else LATENCY_S + frame / RATE_BYTES_PER_S
            end = start + round(took * 1e9)
            if on_row is not None:
                on_row({"chunk": k, "chunk_bytes": frame, "bytes_done": (k + 1) * frame, "requests": 1,
                        "start_ns": start, "end_ns": end, "gap_ns": 0, "seconds": (end - start) / 1e9,
                        "lat_p50_s": took, "lat_p99_s": took, "lat_max_s": took})
        self.measured += 1
        return HelperResult(0, {"op": args[0], "path": str(path), "bytes": moved, "seconds": (end - t0) / 1e9,
                                "access": "sequential", "granularity_bytes": frame, "stride_bytes": 0,
                                "engine_requested": str(f.get("engine", "direct")),
                                "engine": str(f.get("engine", "direct")), "requests": moved // frame,
                                "queue_depth": 1, "threads": 1, "chunks": moved // frame, "start_ns": t0,
                                "end_ns": end, "fill": f.get("fill", "random"),
                                **({"sync": f["sync"]} if "sync" in f else {})})

    def _sign(self, f: dict[str, str | bool], path: Path, on_row: Callable[[dict[str, Any]], None] | None) -> HelperResult:
        """The helper's sign on the model's clock: a write makes the file (its bytes, not signed), a read finds every
        block as written but those `bad` names (the fill's block index -> what it is, as the helper lists it)."""
        if self.interrupt_at is not None and self.measured == self.interrupt_at:
            raise KeyboardInterrupt
        blocks, first, chunk = int(str(f["blocks"])), int(str(f["first"])), int(str(f["chunk"]))
        total = blocks * int(str(f["block"]))
        write = f["op"] == "write"
        if write:
            path.write_bytes(os.urandom(total))
        elif not path.exists():
            return HelperResult(1, {"error": f"cannot open {path}: No such file or directory", "errno": 2})
        t0 = end = 10**12
        for k in range(-(-total // chunk)):
            moved = min(chunk, total - k * chunk)
            start, end = end, end + round((LATENCY_S + moved / RATE_BYTES_PER_S) * 1e9)
            if on_row is not None:
                on_row({"chunk": k, "chunk_bytes": moved, "bytes_done": k * chunk + moved, "requests": 1,
                        "start_ns": start, "end_ns": end, "seconds": (end - start) / 1e9})
        self.measured += 1
        answer: dict[str, Any] = {"path": str(path), "op": f["op"], "blocks": blocks, "bytes": total, "start_ns": t0,
                                  "end_ns": end, "seconds": (end - t0) / 1e9, "direct_honoured": True,
                                  "fs_type": "fake"}
        if write:
            return HelperResult(0, {**answer, "sync_used": "fsync", "sync_seconds": 0.001})
        mine = {b: found for b, found in self.bad.items() if first <= b < first + blocks}
        kinds = [found["kind"] for found in mine.values()]
        holds = [abs(found["holds"] - b) for b, found in mine.items() if found["kind"] == "moved"]
        period = 0
        for distance in holds:
            period = math.gcd(period, distance)
        return HelperResult(0, {**answer, "ok": blocks - len(mine), "moved": kinds.count("moved"),
                                "corrupt": kinds.count("corrupt"), "unreadable": kinds.count("unreadable"),
                                "period_blocks": period,
                                "bad": [{"block": b, **found} for b, found in sorted(mine.items())][:64]})


@dataclass
class FakeHelpers:
    """The factory the runner is given: `info` answered, one FakeHelper per session."""

    interrupt_at: int | None = None
    sessions: list[FakeHelper] = field(default_factory=list)
    once_calls: list[list[str]] = field(default_factory=list)
    slower: Callable[[int], float] = lambda k: 1.0
    compressing: bool = False
    frame_s: Callable[[str, int], float] | None = None     # a stream's frame k of a file: its seconds
    bad: dict[int, dict[str, Any]] = field(default_factory=dict)     # sign: the fill's bad blocks, by index

    def once(self, args: list[str]) -> HelperResult:
        self.once_calls.append(list(args))
        return HelperResult(0, {"helper_version": "fake", "platform": "linux", "engines": ["direct", "buffered"],
                                "clock": "fake", "target": {"fs_type": "fake"}})

    def session(self) -> FakeHelper:
        self.sessions.append(FakeHelper(self.interrupt_at, slower=self.slower, compressing=self.compressing,
                                        frame_s=self.frame_s, bad=self.bad))
        self.interrupt_at = None            # the next session (a resume) runs to the end
        return self.sessions[-1]
