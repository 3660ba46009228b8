"""How a verify is drawn: the verdict in one sentence first, then the details, on the terminal; the same on its
page, with the bad blocks listed and the write and read rates drawn along the fill. Draws only: every number
comes from the Verdict."""

from __future__ import annotations

from ....report import plot
from ....report.figures import layout
from ....report.page import esc, figure, page, table
from .verdict import Verdict, bad_text


def lines(v: Verdict) -> list[str]:
    return [v.sentence(), *v.details()]


def curves(write_rates: list[tuple[int, float]], read_rates: list[tuple[int, float]]) -> plot.Figure:
    """Each chunk's rate along the fill, written and read back (a verify's, and a plan's verify test's)."""
    fig = plot.Figure()
    for (name, rates), colour in zip((("written", write_rates), ("read back", read_rates)), plot.QUALITATIVE):
        fig.add_trace(plot.Scatter(x=[done / 1e9 for done, _ in rates], y=[r / 1e6 for _, r in rates],
                                   mode="lines", name=name, line={"color": colour, "width": 1}))
    return layout(fig, "each chunk's rate along the fill (where a drive's fast cache ends, the write rate falls)",
                  "GB of the fill done", "MB/s")


def counts_table(ok: int, moved: int, corrupt: int, unreadable: int, not_read: int, block_bytes: int,
                 unknown: int = 0) -> str:
    """The blocks of a fill by what they read back as, those read back whose counts are not believed (a plan's
    record changed after its run; shown only where there are some), and those not read back yet."""
    rows = [("read back as written", ok), ("hold another block of the fill", moved), ("corrupted", corrupt),
            ("unreadable", unreadable)]
    rows += [("read back, counts not believed", unknown)] if unknown else []
    return table(["", "blocks", "bytes"], [[what, f"{n:,}", f"{n * block_bytes:,}"]
                                           for what, n in (*rows, ("not yet read back", not_read))])


METHODS = ("Every block of the fill carries the verify's id, its own index, a checksum and a payload drawn from a "
           "seed and the index; each was written uncached with a full sync at the end of its file, the page cache "
           "emptied of every file, and every block read back uncached and compared with what was written. A verify "
           "proves what it read back, once: not that the drive keeps it tomorrow.")


def render(v: Verdict) -> str:
    s = v.state
    rows = [[f"{b.block:,}", b.kind, esc(v.where(b.block)), esc(bad_text(b))] for b in v.bad]
    bad = (f"<h2>Bad blocks</h2><p>The first {len(v.bad)} of {v.moved + v.corrupt + v.unreadable:,}.</p>"
           + table(["block", "found", "where", "what"], rows)) if v.bad else ""
    counts = counts_table(v.ok_blocks, v.moved, v.corrupt, v.unreadable, s.blocks - v.checked_blocks, s.block_bytes)
    sections = [f"<h1>stibium verify: {esc(s.target)}</h1>", f"<p><b>{esc(v.sentence())}</b></p>",
                "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in v.details()) + "</ul>", counts, bad]
    if v.write_rates or v.read_rates:
        sections.append(figure(curves(v.write_rates, v.read_rates), "fig0"))
    sections.append(f"<h2>Methods</h2><p class=\"muted\">{esc(METHODS)}</p>")
    return page("stibium verify", sections)
