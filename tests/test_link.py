"""The link to the store (link.py, analysis/link_speed.py): the server a mount source names, the interface the
routing table sends it to (as Linux's /proc/net and macOS's `route -n get` write it), the speed the system
states (sysfs; the media macOS's ifconfig prints), a rate a person gives, and reads faster than the link named
as answered on this side of it, for one client and for many."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from stibium_py.analysis.link_speed import LINK_MARGIN, faster_than_link, links_of
from stibium_py.cli import main
from stibium_py.machine.link import (Link, _v4_route_interface, _v6_route_interface, darwin_route_interface,
    darwin_speed_bytes_per_s, link_of, linux_speed_bytes_per_s, parse_rate, server_of)
from stibium_py.rundir.measurement import Measurement
from stibium_py.results.pipeline import summarize_run
from stibium_py.rundir.table import Table
from synthetic import make_run


@pytest.mark.parametrize("source, fs_type, server", [
    ("root@nas:/srv/share", "fuse.sshfs", "nas"),
    ("nas.local:/export/media", "nfs4", "nas.local"),
    ("[fe80::1]:/export", "nfs", "fe80::1"),
    ("//guest@studio-nas._smb._tcp.local/Media", "smbfs", "studio-nas._smb._tcp.local"),   # macOS df
    ("//10.0.0.5/share", "cifs", "10.0.0.5"),
    ("https://dav.example.com/remote.php/webdav", "webdav", "dav.example.com"),
    ("/dev/nvme0n1p2", "ext4", None),
    ("/dev/disk3s5", "apfs", None),
    ("tmpfs", "tmpfs", None),
    ("not a source", "nfs", None),
])
def test_the_server_a_mount_source_names(source, fs_type, server):
    assert server_of(source, fs_type) == server


@pytest.mark.parametrize("text, bytes_per_s", [("1Gb/s", 125e6), ("100Mb/s", 12.5e6), ("2.5Gbit/s", 312.5e6),
                                                ("10Gbps", 1.25e9), ("110MB/s", 110e6), ("20 MiB/s", 20 * 2 ** 20)])
def test_a_link_rate_as_people_write_it(text, bytes_per_s):
    assert parse_rate(text) == pytest.approx(bytes_per_s)


def test_a_link_rate_that_is_not_one_gets_one_line_and_nothing_is_made(tmp_path):
    result = CliRunner().invoke(main, ["run", "quick", "--target", str(tmp_path / "t"), "--out", str(tmp_path / "r"),
                                       "--link-rate", "fast"])
    assert result.exit_code == 2
    assert result.output == "stibium: --link-rate: 'fast' is not a rate; write it as 1Gb/s, 100Mb/s or 110MB/s\n"
    result = CliRunner().invoke(main, ["run", "quick", "--target", str(tmp_path / "t"), "--out", str(tmp_path / "r"),
                                       "--link-rate", "1Gb/s"])
    assert result.exit_code == 2
    assert result.output.startswith(f"stibium: --link-rate is the rate of the link to a store across a network, and "
                                    f"{tmp_path / 't'} is on ")
    assert result.output.endswith("of this machine; leave --link-rate out\n")
    assert list(tmp_path.iterdir()) == []


# /proc/net/route as Linux writes it: little-endian hex, a default route and two networks
ROUTE = """Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
eth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0
eth1\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0
eth2\t0005000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
"""
# /proc/net/ipv6_route: destination, prefix length, source, its length, next hop, metric, refs, use, flags, iface
ROUTE6 = """fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
fd000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth3
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
"""


def test_the_interface_is_the_longest_route_that_holds_the_server():
    import ipaddress
    v4 = ipaddress.IPv4Address
    assert _v4_route_interface(v4("10.0.5.9"), ROUTE) == "eth2"      # 10.0.5.0/24 over 10.0.0.0/8
    assert _v4_route_interface(v4("10.9.0.1"), ROUTE) == "eth1"
    assert _v4_route_interface(v4("192.168.0.7"), ROUTE) == "eth0"
    assert _v4_route_interface(v4("8.8.8.8"), ROUTE) == "eth0"       # the default route
    v6 = ipaddress.IPv6Address
    assert _v6_route_interface(v6("fd12::5"), ROUTE6) == "eth3"
    assert _v6_route_interface(v6("2001:db8::1"), ROUTE6) == "eth0"


def test_the_speed_the_system_states():
    # macOS `route -n get` and `ifconfig` (xnu's media names: bsd/net/if_media.h)
    assert darwin_route_interface("   route to: 10.0.1.20\ndestination: 10.0.1.0\n  interface: en7\n      flags: "
                                  "<UP,DONE,CLONING>\n") == "en7"
    assert darwin_speed_bytes_per_s("en7: flags=8863<UP>\n\tmedia: autoselect (10Gbase-T <full-duplex>)\n"
                                    "\tstatus: active\n") == 1.25e9
    assert darwin_speed_bytes_per_s("en0: flags=8863<UP>\n\tmedia: autoselect (1000baseT <full-duplex>)\n") == 125e6
    assert darwin_speed_bytes_per_s("en0: flags=8863<UP>\n\tmedia: autoselect (2500Base-T <full-duplex>)\n") == \
        312.5e6
    assert darwin_speed_bytes_per_s("en1: flags=8863<UP>\n\tmedia: autoselect\n\tstatus: active\n") is None  # Wi-Fi


def test_sysfs_speed_in_mbit_and_none_where_the_driver_states_none(tmp_path):
    for name, text in (("eth0", "1000\n"), ("wlan0", "-1\n"), ("veth1", "10000\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "speed").write_text(text)
    assert linux_speed_bytes_per_s("eth0", tmp_path) == 125e6
    assert linux_speed_bytes_per_s("veth1", tmp_path) == 1.25e9
    assert linux_speed_bytes_per_s("wlan0", tmp_path) is None
    assert linux_speed_bytes_per_s("gone", tmp_path) is None


def test_a_given_rate_is_the_links_and_a_local_file_system_has_none():
    assert link_of("/dev/sda1", "ext4", 125e6) is None
    assert link_of("root@127.0.0.1:/srv", "fuse.sshfs") == Link("127.0.0.1", "lo", None, "loopback")
    given = link_of("root@127.0.0.1:/srv", "fuse.sshfs", 20e6)
    assert (given.bytes_per_s, given.source, given.said) == (20e6, "given", "the link rate given with --link-rate")


def test_a_link_from_a_strangers_run_json_is_read_strictly():
    good = {"server": "nas", "interface": "eth0", "bytes_per_s": 125e6, "source": "negotiated"}
    assert Link.from_json(good) == Link("nas", "eth0", 125e6, "negotiated")
    for bad in ({**good, "bytes_per_s": -1}, {**good, "bytes_per_s": "fast"}, {**good, "bytes_per_s": float("nan")},
                {**good, "bytes_per_s": True}, {**good, "source": "rumour"}, {**good, "extra": 1}, [good], None,
                {**good, "server": 3}, {**good, "server": "nas\x1b[2J"}, {**good, "interface": "eth0\nwarning: x"},
                {**good, "server": "[bold]nas"}):
        assert Link.from_json(bad) is None, bad
    assert links_of({"link": good}, {}) == {0: Link("nas", "eth0", 125e6, "negotiated")}
    assert links_of({}, {"links": [good, None, {**good, "bytes_per_s": 0}]}) == \
        {0: Link("nas", "eth0", 125e6, "negotiated")}


def _with_link(run, link):
    record = json.loads((run / "run.json").read_text())
    record["target_facts"]["link"] = link
    (run / "run.json").write_text(json.dumps(record))


def test_reads_faster_than_one_clients_link_are_named_and_reads_below_it_are_not(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=400e6, repeats=3, trials=3, host="edit-1")
    _with_link(run, {"server": "nas", "interface": "eth0", "bytes_per_s": 125e6, "source": "negotiated"})
    _, _, summary = summarize_run(run)
    found = [w for w in summary.warnings if "faster than the link" in w.message]
    assert [w.test for w in found] == ["files (read)", "pat (read)"]       # the writes are not judged
    assert found[0].message.startswith("reads came back faster than the link to the store carries (files read: "
                                       "this client (edit-1) at 39")       # 400 MB/s within noise
    assert found[0].message.endswith("over a link of 125 MB/s (eth0's negotiated speed)): they did not cross it, so "
                                     "this side of the link answered them (the client's own cache), not nas")
    assert found[1].message.count("this client (edit-1) at") == 3 and "; and 1 more of its points)" in found[1].message
    _with_link(run, {"server": "nas", "interface": "eth0", "bytes_per_s": 400e6 * (1 + LINK_MARGIN) * 1.03,
                     "source": "given"})
    _, _, summary = summarize_run(run)
    assert not [w for w in summary.warnings if "faster than the link" in w.message]


def test_a_strangers_host_names_reach_no_sentence_unless_they_are_host_names(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=400e6, repeats=3, trials=3, host="edit-1\x1b[31m")
    _with_link(run, {"server": "nas", "interface": "eth0", "bytes_per_s": 125e6, "source": "negotiated"})
    _, _, summary = summarize_run(run)
    (first, *_) = [w for w in summary.warnings if "faster than the link" in w.message]
    assert "(files read: this client at 39" in first.message and "\x1b" not in first.message


def _read(seq, rank, seconds, fill="random"):
    return Measurement(seq=seq, test="p", op="read", kind="pattern", access="sequential", size_bytes=64 << 20,
                       granularity_bytes=1 << 20, stride_bytes=0, trial=seq, file=f"client-{rank}/p/data.bin",
                       bytes=64 << 20, seconds=seconds, started_s=float(seq), engine="direct", rank=rank,
                       host=f"bay-{rank}", fill=fill)


def test_among_many_clients_only_the_one_faster_than_its_own_link_is_named():
    rng = np.random.default_rng(3)
    # ranks 0 and 1 read at 20 MB/s over 20 MB/s links; rank 2 at 900 MB/s over the same
    rows = [_read(s, r, (64 << 20) / (900e6 if r == 2 else 19.6e6) * math.exp(rng.normal(0, 0.02)))
            for s in range(5) for r in range(3)]
    links = {r: Link("nas", "eth0", 20e6, "given") for r in range(3)}
    hosts = {r: f"bay-{r}" for r in range(3)}
    (notice,) = faster_than_link(Table.from_rows(rows), links, hosts)
    assert "rank 2 (bay-2) at 9" in notice.message and "rank 0" not in notice.message and "rank 1" not in \
        notice.message
    assert "over a link of 20 MB/s (the link rate given with --link-rate)" in notice.message
    # the same rates of a compressible fill: a file system that compresses on the wire may carry them
    compressible = [_read(s, r, (64 << 20) / 900e6, fill="compressible 50%") for s in range(5) for r in range(3)]
    assert faster_than_link(Table.from_rows(compressible), links, hosts) == []
    assert faster_than_link(Table.from_rows(rows), {r: Link("nas", None, None, "unknown") for r in range(3)},
                            hosts) == []


def _reads(rate_bytes_per_s: float, ranks=(None,), granularities=(1 << 20,), hosts: bool = True) -> Table:
    """Three trials of a sequential read per rank and granularity, each at exactly the rate (the median)."""
    rows = []
    for g_i, g in enumerate(granularities):
        for t in range(3):
            for r in ranks:
                seq = len(rows)
                rows.append(Measurement(seq=seq, test="p", op="read", kind="pattern", access="sequential",
                                        size_bytes=64 << 20, granularity_bytes=g, stride_bytes=0, trial=t,
                                        file="p/data.bin", bytes=64 << 20, seconds=(64 << 20) / rate_bytes_per_s,
                                        started_s=float(seq), engine="direct", rank=r,
                                        host=(f"bay-{r}" if hosts and r is not None else None), fill="random"))
    return Table.from_rows(rows)


def test_a_read_is_judged_faster_than_its_link_only_past_the_margin():
    link = {0: Link("nas", "eth0", 100e6, "negotiated")}
    edge = 100e6 * (1 + LINK_MARGIN)
    assert faster_than_link(_reads(edge * 0.999), link, {}) == []
    (notice,) = faster_than_link(_reads(edge * 1.001), link, {})
    assert notice.level == "warning" and notice.test == "p (read)"
    assert notice.message == ("reads came back faster than the link to the store carries (p read sequential 1 MiB: "
                              "this client at 105 MB/s over a link of 100 MB/s (eth0's negotiated speed)): they did "
                              "not cross it, so this side of the link answered them (the client's own cache), not nas")
    assert notice.what_to_do == ("read uncached (engine: direct; between: evict) or mount the store without a client "
                                 "cache; where the link is faster than that figure, give its rate with --link-rate")
    assert faster_than_link(_reads(edge * 1.001).take(np.array([], dtype=np.int64)), link, {}) == []
    # a rate exactly at the margin is not past it (105,000,000 B in 1 s against 100 MB/s x 1.05)
    at_edge = Table.from_rows([m._replace(bytes=105_000_000, size_bytes=105_000_000, seconds=1.0)
                               for m in _reads(edge).rows()])
    assert faster_than_link(at_edge, link, {}) == []
    assert len(faster_than_link(Table.from_rows([m._replace(bytes=105_000_001) for m in at_edge.rows()]), link,
                                {})) == 1


def test_a_test_s_fast_points_are_named_to_three_and_the_rest_counted():
    link = {0: Link("nas", "eth0", 100e6, "given")}
    three = faster_than_link(_reads(300e6, granularities=(1 << 20, 2 << 20, 4 << 20)), link, {0: "edit-1"})
    assert three[0].message.count("this client (edit-1) at 300 MB/s") == 3 and "more of its points" not in \
        three[0].message
    assert "(the link rate given with --link-rate); p read sequential 2 MiB: this client" in three[0].message
    four = faster_than_link(_reads(300e6, granularities=(1 << 20, 2 << 20, 4 << 20, 8 << 20)), link, {0: "edit-1"})
    assert four[0].message.count("this client (edit-1) at 300 MB/s") == 3 and \
        "; and 1 more of its points)" in four[0].message


def test_each_client_is_named_by_its_rank_and_host_where_it_has_one():
    links = {r: Link("nas", None, 20e6, "given") for r in range(2)}
    (notice,) = faster_than_link(_reads(900e6, ranks=(0, 1)), links, {1: "bay-1"})
    assert "p read sequential 1 MiB: rank 0 at 900 MB/s over a link of 20 MB/s (the link rate given with " \
           "--link-rate), rank 1 (bay-1) at 900 MB/s over" in notice.message
    # a client without a link of known rate is not judged; the others are
    (only,) = faster_than_link(_reads(900e6, ranks=(0, 1)), {0: Link("nas", None, None, "unknown"), 1: links[1]},
                               {})
    assert "rank 1 at 900 MB/s" in only.message and "rank 0" not in only.message
    assert faster_than_link(_reads(900e6, ranks=(0, 1)), {0: links[0]}, {})[0].message.count(" at 900 MB/s") == 1


def test_a_strangers_run_json_whose_clients_or_facts_are_not_records_gives_no_link_and_no_error():
    good = {"server": "nas", "interface": "eth0", "bytes_per_s": 125e6, "source": "negotiated"}
    assert links_of({"link": good}, ["not", "a", "record"]) == {0: Link("nas", "eth0", 125e6, "negotiated")}
    assert links_of(["not a record"], {}) == {}
