"""How a verify test is drawn: the verdict in one sentence first, then what was written and read back, on the
terminal and on the page (with the blocks counted, the first bad ones listed and the rates along the fill); its row
of the summary table; what `plan show` says of it. Draws only: every number comes from its results."""

from __future__ import annotations

from statistics import median
from typing import Any

from ...plan.expand import SUSTAINED_RATES_BYTES_PER_S
from ...report.build import KindView
from ...report.page import esc, figure, table
from ...units import format_bytes, format_rate, format_seconds, format_size
from .earlier.verdict import bad_text
from .earlier.view import METHODS, counts_table, curves
from .analysis import VerifyResult, first_bad_line


def headline(e: VerifyResult, compact: bool) -> tuple[str, str, str]:
    """The median chunk's rate (no interval: a verify is done once; the lines under the table say its verdict)."""
    if not e.rates:
        return (e.op if compact else f"{e.name} {e.op}"), "-", "-"
    rate = format_rate(median(r for _, r in e.rates))
    return (e.op, rate, "-") if compact else (f"{e.name} {e.op}", f"{rate} (median chunk)", "-")


def _by_test(results: list[VerifyResult]) -> dict[str, dict[str, VerifyResult]]:
    out: dict[str, dict[str, VerifyResult]] = {}
    for e in results:
        out.setdefault(e.name, {})[e.op] = e
    return out


def verdict(name: str, ops: dict[str, VerifyResult]) -> str:
    """The test's verdict in one sentence: the read back's, or that nothing was read back yet."""
    read, write = ops.get("read"), ops.get("write")
    if read is not None:
        return f"{name}: {read.sentence()}"
    written = write.bytes if write is not None else 0
    return (f"{name}: not finished: {written:,} bytes written, none read back yet; resume the run to check them")


def details(ops: dict[str, VerifyResult]) -> list[str]:
    out = []
    write, read = ops.get("write"), ops.get("read")
    if write is not None:
        out.append(f"written: {format_bytes(write.bytes)} in {write.files:,} file{'s' if write.files != 1 else ''}, "
                   f"blocks of {write.block_bytes:,} bytes, uncached, each file ended by a full sync "
                   f"({format_seconds(write.sync_seconds)} in all)" + (f"; {write.rate_text()}" if write.rates else ""))
    if read is not None:
        cached = ("" if read.resident_max is None else
                  "; none of it was in the page cache when read" if read.resident_max == 0 else
                  f"; up to {read.resident_max:.0%} of a file was still in the page cache when read")
        files = read.files + read.rejected_files
        out.append(f"read back: {format_bytes(read.read_bytes)} in {files:,} file{'s' if files != 1 else ''}, "
                   f"uncached{cached}"
                   + (f"; {read.rate_text()}" if read.rates else ""))
        if read.bad:
            out.append(first_bad_line(read))
        if read.moved_blocks and read.period_blocks:
            out.append(f"the moved blocks repeat every {read.period_blocks:,} blocks "
                       f"({format_bytes(read.period_blocks * read.block_bytes)}): what the drive really keeps")
    return out


def lines(results: list[VerifyResult], width: int) -> list[Any]:
    """Each verify test's verdict first, then its details."""
    out: list[Any] = []
    for name, ops in _by_test(results).items():
        out.append(verdict(name, ops))
        out.extend(f"  {line}" for line in details(ops))
    return out


def sections(results: list[VerifyResult], n: int) -> tuple[list[str], int]:
    out = []
    for name, ops in _by_test(results).items():
        read, write = ops.get("read"), ops.get("write")
        html = [f"<h2>Verify: {esc(name)}</h2><p><b>{esc(verdict(name, ops))}</b></p>",
                "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in details(ops)) + "</ul>"]
        if read is not None:
            unknown = read.unknown_bytes // read.block_bytes
            written = max(read.written_bytes, read.read_bytes) // read.block_bytes
            html.append(counts_table(read.ok_blocks, read.moved_blocks, read.corrupt_blocks, read.unreadable_blocks,
                                     written - read.checked_blocks - unknown, read.block_bytes, unknown))
            if read.bad:
                bad = read.moved_blocks + read.corrupt_blocks + read.unreadable_blocks
                html.append(f"<h3>Bad blocks</h3><p>The first {len(read.bad)} of {bad:,}.</p>" + table(
                    ["block", "found", "where", "what"],
                    [[f"{b.block:,}", b.kind, read.where(k), bad_text(b)] for k, b in enumerate(read.bad)]))
        write_rates = write.rates if write is not None else []
        read_rates = read.rates if read is not None else []
        if write_rates or read_rates:
            html.append(figure(curves(write_rates, read_rates), f"fig{n}"))
            n += 1
        html.append(f"<p class=\"muted\">{esc(METHODS)}</p>")
        out.append("".join(html))
    return out, n


def plan_note(test: Any) -> str:
    """What a verify test will write, read and check, and how long it takes, in words."""
    writes = [o for o in test.ops if o.op == "write"]
    total = sum(o.bytes for o in writes)
    of_free = (f", {total / test.free_bytes:.0%} of the {format_bytes(test.free_bytes)} free on the target now"
               if test.free_bytes else "")
    times = " and ".join(f"{format_seconds(2 * total / r)} at {format_bytes(r)}/s" for r in SUSTAINED_RATES_BYTES_PER_S)
    # the bytes as the run says them when it starts ("wears the drive: 298 MB"): the same number, one unit
    return (f"  {test.name}: fills {total:,} bytes ({format_bytes(total)}){of_free} in {len(writes)} "
            f"file{'s' if len(writes) > 1 else ''} of {format_size(writes[0].size_bytes)}"
            f"{' (the last one the rest)' if len(writes) > 1 and writes[-1].bytes != writes[0].bytes else ''}, every "
            f"block signed, {format_size(writes[0].chunk_bytes)} a request, each file fully synced; then empties the "
            f"page cache and reads every block back; takes about {times} (written and read).\n"
            f"  [yellow]Wears the drive:[/] {format_bytes(total)} of real writes to its flash count against its "
            f"rated endurance (TBW); the files are removed at the end.")


VIEW = KindView(headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", sections, lines, lines_first=True)
