"""Reads faster than the link to the store (link.py): each client's rate of each read point (its kind's
estimator, as the clients' table computes it) against the most that client's link carries. A rate above it
by more than LINK_MARGIN did not cross the link: something on the client's side answered it (its page cache,
a FUSE client's cache), not the store. The store's own memory is not found this way: what it answers crosses
the link and is held to the link's rate. Only reads of the random fill are judged: a file system that
compresses what it sends (sshfs -o compression=yes) carries compressible data faster than its link. Pure:
measurements and links in, notices out."""

from __future__ import annotations

import math

import numpy as np

from .. import fills
from ..machine.link import Link
from ..rundir.table import Table
from ..units import format_rate
from .rates import by_point, draw_inputs, label, point_rate
from .warnings import Notice

# A point's rate from a few dozen timed reads is within a few percent of what the reads did; a rate more
# than 5 % above the link's cannot be that error, and the link (its framing, the protocol) carries less than its
# rate of file data, never more.
LINK_MARGIN = 0.05
SHOWN_POINTS = 3             # a test's fast points named in its notice; the rest counted


def faster_than_link(rows: Table, links: dict[int, Link], hosts: dict[int, str]) -> list[Notice]:
    """A notice per read point where a client read faster than its link carries (rows: every client's own,
    with their rank; one client's rows have none and are rank 0's)."""
    valid = rows.valid()
    if not len(valid) or not any(link.bytes_per_s for link in links.values()):
        return []
    keep = (valid.col("op") == "read") & (valid.col("fill") == fills.RANDOM)
    reads = valid.take(np.flatnonzero(keep))
    found: dict[str, list[tuple[str, list[tuple[int, float, Link]]]]] = {}     # by test: each fast point
    for key, point in by_point(reads).items():
        ranks = np.array([0 if r is None or (isinstance(r, float) and math.isnan(r)) else int(r)
                          for r in point.col("rank")])
        fast = []
        for rank in sorted(set(ranks.tolist())):
            link = links.get(rank)
            if link is None or not link.bytes_per_s:
                continue
            kind, x, y = draw_inputs(point.take(np.flatnonzero(ranks == rank)))
            rate = point_rate(kind, x, y, 0, 0, 0.95).rate.estimate
            if math.isfinite(rate) and rate > link.bytes_per_s * (1 + LINK_MARGIN):
                fast.append((rank, rate, link))
        if fast:
            found.setdefault(key.test, []).append((label(key), fast))
    out = []
    for test, points in found.items():
        said = "; ".join(f"{where}: " + ", ".join(
            f"{_client(rank, hosts, len(links))} at {format_rate(rate)} over a link of {format_rate(link.bytes_per_s)} "
            f"({link.said})" for rank, rate, link in fast) for where, fast in points[:SHOWN_POINTS])
        more = f"; and {len(points) - SHOWN_POINTS} more of its points" if len(points) > SHOWN_POINTS else ""
        out.append(Notice("warning", f"{test} (read)",
                          f"reads came back faster than the link to the store carries ({said}{more}): they did not "
                          f"cross it, so this side of the link answered them (the client's own cache), not "
                          f"{points[0][1][0][2].server}",
                          "read uncached (engine: direct; between: evict) or mount the store without a client "
                          "cache; where the link is faster than that figure, give its rate with --link-rate"))
    return out


def _client(rank: int, hosts: dict[int, str], clients: int) -> str:
    host = hosts.get(rank)
    if clients <= 1:
        return f"this client ({host})" if host else "this client"
    return f"rank {rank} ({host})" if host else f"rank {rank}"


def links_of(target_facts: dict, clients: dict) -> dict[int, Link]:
    """Each client's link from run.json: clients.links by rank under many clients, else target_facts.link as
    rank 0's; a damaged entry is left out (Link.from_json)."""
    listed = clients.get("links") if isinstance(clients, dict) else None
    if isinstance(listed, list):
        found = {rank: Link.from_json(entry) for rank, entry in enumerate(listed)}
    else:
        found = {0: Link.from_json(target_facts.get("link")) if isinstance(target_facts, dict) else None}
    return {rank: link for rank, link in found.items() if link is not None}
