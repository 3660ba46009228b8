"""What a plan says of a pattern test: its pydantic model, every key described (docs/plan-format.md is made from it)."""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import ConfigDict, Field, StrictFloat, StrictInt, field_validator, model_validator

from ... import fills

from ...plan.model import Access, Fill, IoOp, Seconds, Size, Sizes, Steady, TestBase, _Strict


RateText = Union[StrictInt, StrictFloat, str]


class Slo(_Strict):
    """A target for the response time: the rate is searched for the highest that meets it (docs/load.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)   # p99.9, or p999

    p50: Seconds | None = Field(None, description="the median response time at most this, such as 500us or 0.5ms")
    p90: Seconds | None = Field(None, description="the 90th percentile at most this")
    p99: Seconds | None = Field(None, description="the 99th percentile at most this, such as 2ms")
    p999: Seconds | None = Field(None, alias="p99.9", description="the 99.9th percentile at most this (p99.9; p999 "
                                 "is taken too)")
    max: Seconds | None = Field(None, description="the longest response time at most this")
    lowest: RateText = Field("100 IOPS", json_schema_extra={"type_words": "rate"}, description="the search's first rate (each client's), doubled while it "
                             "meets the target")
    highest: RateText = Field("1M IOPS", json_schema_extra={"type_words": "rate"}, description="the most the search asks for (each client's)")

    @model_validator(mode="after")
    def _a_target(self) -> "Slo":
        if all(getattr(self, k) is None for k in ("p50", "p90", "p99", "p999", "max")):
            raise ValueError("give a target: p50, p90, p99, p99.9 or max, such as {p99: 2ms}")
        return self


class PatternTest(TestBase):
    """Requests of one granularity inside one file, over several trials."""

    kind: Literal["pattern"] = Field(description="pattern: requests of a granularity inside one file")
    op: IoOp | list[IoOp] | None = Field(None, description="read | write, or both as a list (give op, read_fraction "
                                         "or both)")
    read_fraction: float | list[float] | None = Field(
        None, description="mixed reads and writes: the share of each measurement's requests that read, 0 to 1 (0.7: "
        "CrystalDiskMark's 70/30 mix), or a list; each request a read or a write by a draw from the seed")
    # wider than TestBase's fill (a list sweeps fills): pydantic takes the subclass's field, which mypy holds to be
    # an incompatible override of the base's attribute
    fill: Fill | list[Fill] | None = Field(  # type: ignore[assignment]
        None, description="overrides defaults.fill; for writes, a list (such as [random, {compressible: 50%}, 0x00]) "
        "measures every point with each fill, to show whether the device or file system compresses or dedups")
    access: Access | list[Access] = Field("sequential", description="sequential | strided | random, or a list")
    granularities: Sizes = Field(description="request sizes, 4 KB to 2 GB: a list or {from, to, count|factor}")
    strides: list[Size] = Field([0], description="bytes skipped after each request (strided access)")
    bytes: Size | None = Field(None, description="bytes moved per trial; with duration, per pass over the requests "
                               "(default: the span)")
    span: Size | None = Field(None, description="size of the file the requests fall in (>= bytes; default = bytes)")
    duration: Seconds | None = Field(
        None, description="run each trial for this long instead of for its bytes, such as 30s or 5min: the "
        "requests go round their pattern until the time is spent (fio's runtime with time_based)")
    warmup: Seconds | None = Field(
        None, description="with duration: first run this long, such as 5s; the warm-up's requests are counted in "
        "their own columns and kept out of the rate (fio's ramp_time)")
    queue_depth: Union[StrictInt, list[StrictInt]] = Field(
        1, description="requests in flight per thread, 1 to 256, or a list such as [1, 8, 32]")
    threads: Union[StrictInt, list[StrictInt]] = Field(
        1, description="threads, each with its own part of the requests, 1 to 64, or a list such as [1, 4]")
    trials: int = Field(5, ge=1, le=10000,
                        description="repeats of each (op, access, granularity, stride, queue depth, threads)")
    layout: Literal["laid-out", "fresh"] = Field(
        "laid-out", description="writes go into a file laid out beforehand, or a fresh file per trial")
    steady: Steady | None = Field(
        None, description="rounds until steady instead of trials: {window: 10, max_rounds: 25}; each round "
        "measures every point once, and the rounds stop when every point is steady over the last window")
    precondition: bool = Field(
        False, description="before the first measurement, write the whole span twice sequentially in 128 KiB "
        "requests (PTS's workload-independent preconditioning), so that random writes meet a written device")
    stonewall: Seconds | None = Field(
        None, description="stop each measurement of its bytes this long after it starts, such as 30s; with many "
        "clients every client then goes on until it has done as many requests as the furthest one (wear-out), as "
        "IOR's -D with stoneWallingWearOut")
    rate: Union[StrictInt, StrictFloat, str, list[Union[StrictInt, StrictFloat, str]]] | None = Field(
        None, json_schema_extra={"type_words": "rate or list of rate"}, description="an open loop: each client issues its requests at this rate whatever is still in flight, "
        "such as 20000 IOPS, 20k IOPS, 500/s or 200MB/s (bytes a second, made requests by each granularity); a list "
        "makes a point of each. Every request's due time is set in advance; its response time is counted from it "
        "(a wait for a free slot or a stalled device included), its service time from its issue (docs/load.md)")
    slo: Slo | None = Field(
        None, json_schema_extra={"type_words": "target"}, description="a target for the response time, such as {p99: 2ms}: instead of a list of rates, the rate is "
        "searched (from slo.lowest, doubling while the target is met, then halving the gap to 1/16 of an octave), "
        "each rate measured with its trials; a rate meets the target where the upper end of its percentile's "
        "interval over the trials is under it. The answer: the highest rate that met it and the lowest that did not")
    arrivals: Literal["constant", "poisson"] = Field(
        "constant", description="with rate: constant spaces the due times evenly; poisson draws the gaps from an "
        "exponential distribution (from the plan's seed), as independent clients send them")
    bench: Literal["fio"] | None = Field(
        None, description="fio: every point is measured by fio too, as the equivalent fio job on the same file, its "
        "trials interleaved with the helper's; the report sets the bench's rate beside the road test's (docs/fio.md)")
    bench_job: str | None = Field(
        None, description="with bench: fio, a fio job file of your own (its path relative to the plan's folder), run "
        "as it is once a trial instead of each point's equivalent job: each of its jobs a row, its point read from "
        "fio's output and set beside the road test's point of the same shape (docs/fio.md)")

    @field_validator("fill", mode="before")
    @classmethod
    def _fill(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value if value is None else fills.canonical(value)
        if not value:
            raise ValueError("the list of fills is empty; give one fill, or leave fill out for defaults.fill")
        return list(dict.fromkeys(fills.canonical(v) for v in value))

    @model_validator(mode="after")
    def _fills_for_writes(self) -> "PatternTest":
        if isinstance(self.fill, list) and len(self.fill) > 1:
            ops = {self.op} if isinstance(self.op, str) else set(self.op or [])
            if self.read_fraction is not None or ops != {"write"}:
                raise ValueError("a list of fills is for writes (op: write): reads read the file as it was laid "
                                 "out, in one fill; give op: write, or one fill")
            if self.bench is not None:
                raise ValueError("bench: fio measures one fill a test; give one fill, or leave out bench")
        return self

    @model_validator(mode="after")
    def _what_and_how_long(self) -> "PatternTest":
        if self.op is None and self.read_fraction is None:
            raise ValueError("give op (read, write or both), read_fraction (mixed reads and writes), or both")
        if self.bytes is None and self.duration is None:
            raise ValueError("give bytes (moved per trial) or duration (how long each trial runs)")
        if self.warmup is not None and self.duration is None:
            raise ValueError("warmup needs duration: the warm-up is the first part of a trial that runs for a time")
        if self.steady is not None and "trials" in self.model_fields_set:
            raise ValueError("give trials or steady, not both: with steady, the rounds are the trials "
                             "(steady.max_rounds at most)")
        if self.precondition and self.layout == "fresh":
            raise ValueError("precondition writes the laid-out file; it needs layout: laid-out")
        if self.stonewall is not None and self.duration is not None:
            raise ValueError("stonewall caps a measurement of its bytes; with duration each trial is bounded by "
                             "time already: give one or the other")
        if self.bench_job is not None and (not self.bench_job.strip() or "\x00" in self.bench_job
                                           or len(self.bench_job) > 1024):
            raise ValueError("bench_job is the job file's path relative to the plan's folder, such as jobs/reads.fio "
                             "(not empty, no NUL byte, at most 1024 characters)")
        if self.bench_job is not None and self.bench is None:
            raise ValueError("bench_job is the job file fio runs as the bench; it needs bench: fio")
        if self.slo is not None:
            if self.rate is not None:
                raise ValueError("give rate (the rates to measure) or slo (a target whose rate is searched), not both")
            if self.steady is not None:
                raise ValueError("slo searches the rate, each with its trials; it does not go with steady's "
                                 "rounds: give trials")
        if self.rate is not None or self.slo is not None:
            if self.stonewall is not None:
                raise ValueError("rate issues each request at its due time; a stonewall cuts a measurement of its "
                                 "bytes short: give one or the other (duration bounds a trial by time)")
            if self.bench is not None:
                raise ValueError("bench: fio does not go with a rate: fio times a rated request's completion when it "
                                 "reaps it, after its sleep until the next one's time (docs/load.md); leave out bench "
                                 "or rate")
            if isinstance(self.rate, list) and not self.rate:
                raise ValueError("the list of rates is empty; give a rate such as 20000 IOPS, or leave rate out")
        if self.rate is None and self.slo is None and "arrivals" in self.model_fields_set:
            raise ValueError("arrivals say how a rate's requests are spaced; give rate or slo too, or leave arrivals "
                             "out")
        if self.bench is not None and self.stonewall is not None:
            raise ValueError("bench: fio cannot take a stonewall: fio's runtime stops a job, but it cannot go on to "
                             "the count another client reached; leave out stonewall or bench")
        return self

    @model_validator(mode="after")
    def _shared_is_laid_out(self) -> "PatternTest":
        if self.clients.layout == "shared" and self.layout == "fresh":
            raise ValueError("clients.layout: shared needs layout: laid-out (the clients write into one file laid "
                             "out beforehand, each in its own segment)")
        return self
