"""How a verify is drawn: the verdict in one sentence first, then the details, on the terminal; the same on its
page, with the bad blocks listed and the write and read rates drawn along the fill. Draws only: every number
comes from the Verdict."""

from __future__ import annotations

from ..report import plot
from ..report.figures import layout
from ..report.page import esc, figure, page, table
from .verdict import Verdict, bad_text


def lines(v: Verdict) -> list[str]:
    return [v.sentence(), *v.details()]


def _curves(v: Verdict) -> plot.Figure:
    fig = plot.Figure()
    for (name, rates), colour in zip((("written", v.write_rates), ("read back", v.read_rates)), plot.QUALITATIVE):
        fig.add_trace(plot.Scatter(x=[done / 1e9 for done, _ in rates], y=[r / 1e6 for _, r in rates],
                                   mode="lines", name=name, line={"color": colour, "width": 1}))
    return layout(fig, "each chunk's rate along the fill (where a drive's fast cache ends, the write rate falls)",
                  "GB of the fill done", "MB/s")


def render(v: Verdict) -> str:
    s = v.state
    rows = [[f"{b.block:,}", b.kind, esc(v.where(b.block)), esc(bad_text(b))] for b in v.bad]
    bad = (f"<h2>Bad blocks</h2><p>The first {len(v.bad)} of {v.moved + v.corrupt + v.unreadable:,}.</p>"
           + table(["block", "found", "where", "what"], rows)) if v.bad else ""
    counts = table(["", "blocks", "bytes"], [
        ["read back as written", f"{v.ok_blocks:,}", f"{v.ok_bytes:,}"],
        ["hold another block of the fill", f"{v.moved:,}", f"{v.moved * s.block_bytes:,}"],
        ["corrupted", f"{v.corrupt:,}", f"{v.corrupt * s.block_bytes:,}"],
        ["unreadable", f"{v.unreadable:,}", f"{v.unreadable * s.block_bytes:,}"],
        ["not yet read back", f"{s.blocks - v.checked_blocks:,}", f"{(s.blocks - v.checked_blocks) * s.block_bytes:,}"]])
    sections = [f"<h1>stibium verify: {esc(s.target)}</h1>", f"<p><b>{esc(v.sentence())}</b></p>",
                "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in v.details()) + "</ul>", counts, bad]
    if v.write_rates or v.read_rates:
        sections.append(figure(_curves(v), "fig0"))
    sections.append("<h2>Methods</h2><p class=\"muted\">Every block of the fill carries the verify's id, its own "
                    "index, a checksum and a payload drawn from a seed and the index; each was written uncached "
                    "with a full sync at the end of its file, the page cache emptied of every file, and every block "
                    "read back uncached and compared with what was written. A verify proves what it read back, "
                    "once: not that the drive keeps it tomorrow.</p>")
    return page("stibium verify", sections)
