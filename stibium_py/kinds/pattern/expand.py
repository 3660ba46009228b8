"""A pattern test as operations (Op), in run order, every random choice drawn from the plan's seed."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...rundir.op import Op
from ...plan.expand import (ExpandedTest, check_count, checked_granularity, derive_seed, in_flight_counts,
                            in_flight_pairs, seconds_of, size_of, sizes_of)
from ...errors import SizeError
from ...plan.model import ENGINES, Access, Where
from ...units import format_bytes, parse_rate
from .load import TARGET_KEYS, rate_grid, slo_text
from .model import PatternTest


def expand_test(test: PatternTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    units = s["units"]
    grans = [checked_granularity(g, where / "granularities" / i)
             for i, g in enumerate(sizes_of(test.granularities, units, where / "granularities"))]
    strides = [size_of(v, units, where / "strides" / i) if v != 0 else 0 for i, v in enumerate(test.strides)]
    if not strides:
        raise (where / "strides").error("the list is empty; use [0] for no stride")
    duration_s = seconds_of(test.duration, where / "duration") if test.duration is not None else 0.0
    warmup_s = seconds_of(test.warmup, where / "warmup") if test.warmup is not None else 0.0
    stonewall_s = seconds_of(test.stonewall, where / "stonewall") if test.stonewall is not None else 0.0
    if test.bytes is not None:
        moved = size_of(test.bytes, units, where / "bytes")
    elif test.span is not None:
        moved = size_of(test.span, units, where / "span")      # by time: a pass goes over the whole span
    else:
        raise where.error("a test by duration needs span (the file its requests go round in) or bytes (a pass)")
    ops_list: list[tuple[str, float | None]] = [
        (op, None) for op in ([] if test.op is None else [test.op] if isinstance(test.op, str) else
                              list(dict.fromkeys(test.op)))]
    ops_list += [("mixed", f) for f in _read_fractions(test.read_fraction, where / "read_fraction")]
    accesses = [test.access] if isinstance(test.access, str) else list(dict.fromkeys(test.access))
    if not ops_list or not accesses:
        raise where.error("op and access need at least one value")
    if any(st for st in strides) and "strided" not in accesses:
        raise (where / "strides").error("a stride needs strided access; add 'strided' to access or use strides: [0]")
    depths, threads = in_flight_counts(test, s["engine"], where)
    fill_list = s["fill"] if isinstance(s["fill"], list) else [s["fill"]]
    swept = len(fill_list) > 1           # plans of one fill draw the seeds they drew
    rates_of = _rates(test, s["engine"], units, where)
    # (op, read fraction, access, granularity, stride, depth, threads, fill, (rate, target), instrument): a rate of
    # bytes is each granularity's requests a second; a target's search has a grid of them
    combos: list[tuple[str, float | None, Access, int, int, int, int, Any, tuple[float, str], str]] = []
    for op, fraction in ops_list:
        for access in accesses:
            for g in grans:
                for st in strides if access == "strided" else [0]:
                    for qd in depths:
                        for t in threads:
                            for fill in fill_list:
                                for rate in rates_of(g):
                                    combos.append((op, fraction, access, g, st, qd, t, fill, rate, "helper"))
    road_points = len(combos)
    if test.bench_job is not None:    # the plan's own job file, once a trial, after the points
        combos.append((*combos[0][:-1], "fio"))      # bench_job is fio's (the model holds it to bench: fio)
    elif test.bench is not None:      # the bench's twin of every point, after them (plans without one draw as before)
        for i, fraction in enumerate(_read_fractions(test.read_fraction, where / "read_fraction")):
            if abs(fraction * 100 - round(fraction * 100)) > 1e-9:
                raise (where / "read_fraction" / i).error(
                    f"fio takes the read share in whole percent (rwmixread); {fraction:g} is not, as bench: fio needs")
        combos += [(*c[:-1], test.bench) for c in combos]
    job = test.bench_job or ""
    trials = test.steady.max_rounds if test.steady is not None else test.trials
    window, max_rounds = (test.steady.window, test.steady.max_rounds) if test.steady is not None else (0, 0)
    check_count(len(combos) * trials, where / ("steady" if test.steady is not None else "trials"))
    needed = 0
    for op, _f, access, g, st, _qd, t, _fill, _rate, instrument in combos[:road_points] if job else combos:
        if instrument != "helper" and moved % (g * t):
            raise (where / "bytes").error(f"bench: {instrument} gives each of the {t} threads the same whole requests; "
                                          f"{moved} bytes is not a multiple of {g} x {t} bytes: change bytes or "
                                          f"granularities")
        if moved % g and access != "sequential":
            raise (where / "bytes").error(f"{moved} bytes is not a multiple of the granularity {g}, "
                                          f"as {access} access needs")
        n = -(-moved // g)
        needed = max(needed, n * (g + st) - st if access == "strided" else moved)
    span = size_of(test.span, units, where / "span") if test.span is not None else needed
    if span < needed:
        raise (where / "span").error(f"the requests need {needed} bytes but span is {span}; raise span or lower bytes")
    big = [g for g in grans if g > span]
    if big:
        raise (where / "granularities").error(f"{big[0]} bytes is larger than the span ({span} bytes)")
    layout = f"{test.name}/data.bin"
    rng = np.random.default_rng(derive_seed(s["seed"], test.name, "order"))
    ops: list[Op] = []
    for trial in range(trials):
        for ci in rng.permutation(len(combos)):
            op, fraction, access, g, st, qd, t, fill, (rate, slo), instrument = combos[ci]
            fresh = op == "write" and test.layout == "fresh"
            mix = () if fraction is None else (fraction,)        # plans without a mix draw the seeds they drew
            bench = () if instrument == "helper" else (instrument,)
            by_job = bool(job) and ci >= road_points      # the job file's run: its bytes are the job's, known when fio ends
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="pattern", op=op, access=access,
                          size_bytes=span, granularity_bytes=g, stride_bytes=st, trial=trial,
                          file=f"{test.name}/fresh-{seq0 + len(ops)}.bin" if fresh else layout,
                          bytes=0 if by_job else moved, engine=s["engine"], fill=fill,
                          sync=s["sync"] if op != "read" else "none",
                          seed=derive_seed(s["seed"], test.name, trial, op, *mix, access, g, st,
                                            *in_flight_pairs(qd, t), *bench, *((fill,) if swept else ()),
                                            *((rate,) if rate else ())),
                          data_seed=s["seed"], existing=not fresh, queue_depth=qd, threads=t, read_fraction=fraction,
                          duration_s=duration_s, warmup_s=warmup_s, steady_window=window,
                          steady_max_rounds=max_rounds, stonewall_s=stonewall_s, instrument=instrument,
                          rate_per_s=rate, arrivals=test.arrivals if rate else "", slo=slo,
                          bench_job=job if by_job else ""))
    needs_layout = any(o.existing for o in ops)
    return ExpandedTest(name=test.name, kind="pattern", ops=ops, layout_file=layout if needs_layout else "",
                        layout_bytes=span if needs_layout else 0,
                        files_bytes=(span if needs_layout else 0) + (span if test.layout == "fresh" else 0),
                        precondition_bytes=2 * span if test.precondition else 0)



MAX_RATE_PER_S = 1e7        # the helper's bound on --rate


def _rates(test: PatternTest, engine: str, units: str, where: Where) -> Callable[[int], list[tuple[float, str]]]:
    """A test's rates for a granularity, as (requests a second, target): the plan's list in its order without
    repeats, or a target's grid (load.rate_grid); [(0, "")] for a closed loop."""
    if test.rate is None and test.slo is None:
        return lambda g: [(0.0, "")]
    at = where / ("rate" if test.slo is None else "slo")
    if ENGINES[engine].one_at_a_time:
        raise at.error(f"the {engine} engine moves one request at a time from the calling thread; a rate issues each "
                       f"request from a thread of its own: use engine: direct or buffered")

    def parsed(value: Any, here: Where) -> tuple[float, str]:
        try:
            return parse_rate(value, units)
        except SizeError as e:
            raise here.error(str(e)) from None

    def per_s(rate: tuple[float, str], g: int, here: Where) -> float:
        number, what = rate
        out = number / g if what == "bytes" else number
        if out > MAX_RATE_PER_S:
            asked = f"{format_bytes(number)}/s in requests of {format_bytes(g)} is " if what == "bytes" else ""
            raise here.error(f"{asked}{out:g} requests a second; the helper issues at most {MAX_RATE_PER_S:g} a "
                             f"second: lower {'rate' if test.slo is None else 'slo.highest'}")
        return out

    if test.slo is not None:
        slo = test.slo
        targets = {k: seconds_of(getattr(slo, k), at / k) for k in TARGET_KEYS if getattr(slo, k) is not None}
        lowest, highest = parsed(slo.lowest, at / "lowest"), parsed(slo.highest, at / "highest")

        def grid(g: int) -> list[tuple[float, str]]:
            low, high = per_s(lowest, g, at / "lowest"), per_s(highest, g, at / "highest")
            if low > high:
                raise at.error(f"slo.lowest ({low:g} requests a second) is above slo.highest ({high:g}): lower "
                               f"lowest or raise highest")
            rates = rate_grid(low, high)
            return [(r, slo_text(targets, rates[-1])) for r in rates]
        return grid
    assert test.rate is not None
    values = test.rate if isinstance(test.rate, list) else [test.rate]
    listed = list(dict.fromkeys(parsed(v, where / "rate" / i if isinstance(test.rate, list) else where / "rate")
                                for i, v in enumerate(values)))
    return lambda g: [(per_s(rate, g, where / "rate"), "") for rate in listed]


def _read_fractions(spec: float | list[float] | None, where: Where) -> list[float]:
    """A test's read shares, each from 0 to 1, in the order given, without repeats."""
    if spec is None:
        return []
    values = [spec] if not isinstance(spec, list) else list(spec)
    if not values:
        raise where.error("the list is empty; give a share such as 0.7, or leave read_fraction out")
    for i, v in enumerate(values):
        if not 0 <= v <= 1:
            raise (where if not isinstance(spec, list) else where / i).error(
                f"a share of the requests is from 0 to 1 (0.7: 70 % reads), not {v:g}")
    return list(dict.fromkeys(float(v) for v in values))
