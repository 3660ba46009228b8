"""The link between this client and its store: which network interface carries a network file system's
traffic, and the most it can carry. A read of the store that comes back faster than that did not cross the
link: something on this side answered it (the client's own cache). The store's own memory cannot be told
apart this way: what it answers crosses the link too.

The rate is the interface's negotiated speed, read where the operating system states it (Linux:
/sys/class/net/IF/speed, in Mb/s; macOS: the media `ifconfig` prints, such as `1000baseT`), an upper bound
on what the link carries (a switch or a shaper further on can only be slower), or the rate a person gives
with `stibium run --link-rate` (never a plan: a plan that claimed a slow link would make stibium call honest
reads cached). Pure where it can be: mount sources, routing tables and ifconfig's text are arguments."""

from __future__ import annotations

import ipaddress
import re
import socket
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import stack

# file systems whose mount source names a server (macOS's `df` names smbfs and afpfs sources too)
SERVER_FS = stack.NETWORK_FS | {"smbfs", "afpfs", "nfs", "webdav"}
LOOKUP_SECONDS = 2.0        # a server's name not resolved in this time: its link is not named
# what run.json may say a server and an interface are (it comes from strangers, and both are printed): a host
# name's characters or an address; an interface's name
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}|[0-9A-Fa-f:.]{2,45}")
INTERFACE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,31}")


@dataclass(frozen=True)
class Link:
    """The link to the store: the server, the interface, the most it carries and where that figure came from."""

    server: str
    interface: str | None
    bytes_per_s: float | None
    source: str              # "negotiated" (the interface's speed), "given" (--link-rate), "loopback", "unknown"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> "Link | None":
        """A link from run.json (strangers' files): exactly its fields, of their types; else None."""
        if not isinstance(data, dict) or set(data) != {"server", "interface", "bytes_per_s", "source"}:
            return None
        rate, server, interface, source = data["bytes_per_s"], data["server"], data["interface"], data["source"]
        if not isinstance(server, str) or not SERVER_NAME.fullmatch(server):
            return None
        if not (interface is None or isinstance(interface, str) and INTERFACE_NAME.fullmatch(interface)):
            return None
        if source not in ("negotiated", "given", "loopback", "unknown"):
            return None
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0
                                 or rate == float("inf")):
            return None
        return cls(server, interface, None if rate is None else float(rate), source)

    @property
    def said(self) -> str:
        """How the rate is known, in words: "eth0's negotiated speed", "the link rate given with --link-rate"."""
        if self.source == "given":
            return "the link rate given with --link-rate"
        return f"{self.interface}'s negotiated speed"


def server_of(source: str | None, fs_type: str | None) -> str | None:
    """The server a network file system's mount source names: `//[user@]host[:port]/share` (SMB, AFP),
    `[user@]host:/path` (NFS, sshfs; `[v6 address]:/path`), `http(s)://host/...` (WebDAV); None for
    any other file system or a source of another shape."""
    if not source or not fs_type or not (fs_type in SERVER_FS or fs_type.startswith("nfs")):
        return None
    m = re.match(r"^https?://(?:[^@/]*@)?(\[[^\]]+\]|[^/:]+)", source)
    if m is None:
        m = re.match(r"^//(?:[^@/]*@)?(\[[^\]]+\]|[^/:]+)", source)
    if m is None:
        m = re.match(r"^(?:[^@/:]*@)?(\[[^\]]+\]|[^/:\[\]]+):", source)
    if m is None:
        return None
    host = m.group(1).strip("[]")
    return host if SERVER_NAME.fullmatch(host) else None


def parse_rate(text: str) -> float:
    """Bytes per second from a link rate as people write it: 1Gb/s, 2.5 Gbit/s, 100Mb/s (bits, decimal),
    or 110MB/s, 20 MiB/s (bytes). Raises ValueError with what to write."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKMGT]?)(i?)(b|bit|B)(?:ps|/s)\s*", text)
    if m is None:
        raise ValueError(f"{text!r} is not a rate; write it as 1Gb/s, 100Mb/s or 110MB/s")
    number, prefix, binary, unit = float(m.group(1)), m.group(2).upper(), m.group(3), m.group(4)
    scale = (1024 if binary else 1000) ** "_KMGT".index(prefix or "_")
    value = number * scale / (8 if unit in ("b", "bit") else 1)
    if not value > 0:
        raise ValueError(f"{text!r} is not above zero; give the rate of the slowest link to the store")
    return value


# ------------------------------------------------------------------ which interface carries the traffic

def _v4_route_interface(addr: ipaddress.IPv4Address, route_text: str) -> str | None:
    """The interface of the longest prefix that holds addr in /proc/net/route (little-endian hex fields)."""
    best: tuple[int, str] | None = None
    for line in route_text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        try:
            dest = int.from_bytes(bytes.fromhex(f[1]), "little")
            mask = int.from_bytes(bytes.fromhex(f[7]), "little")
            flags = int(f[3], 16)
        except ValueError:
            continue
        if not flags & 0x1:           # RTF_UP
            continue
        if int(addr) & mask == dest & mask:
            length = bin(mask).count("1")
            if best is None or length > best[0]:
                best = (length, f[0])
    return best[1] if best else None


def _v6_route_interface(addr: ipaddress.IPv6Address, route_text: str) -> str | None:
    """The same in /proc/net/ipv6_route: destination, its prefix length (hex), ..., the interface last."""
    best: tuple[int, str] | None = None
    for line in route_text.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        try:
            dest, length, flags = int(f[0], 16), int(f[1], 16), int(f[8], 16)
        except ValueError:
            continue
        if not flags & 0x1 or f[9] == "lo" and not addr.is_loopback:
            continue
        shift = 128 - length
        if int(addr) >> shift == dest >> shift and (best is None or length > best[0]):
            best = (length, f[9])
    return best[1] if best else None


def linux_interface(address: str, proc_net: Path = Path("/proc/net")) -> str | None:
    addr = ipaddress.ip_address(address)
    name = "route" if addr.version == 4 else "ipv6_route"
    try:
        text = (proc_net / name).read_text()
    except OSError:
        return None
    if addr.version == 4:
        assert isinstance(addr, ipaddress.IPv4Address)
        return "lo" if addr.is_loopback else _v4_route_interface(addr, text)
    assert isinstance(addr, ipaddress.IPv6Address)
    return "lo" if addr.is_loopback else _v6_route_interface(addr, text)


def darwin_route_interface(route_get_text: str) -> str | None:
    """The interface from macOS `route -n get ADDRESS`: its line `  interface: en0`."""
    m = re.search(r"^\s*interface:\s*(\S+)\s*$", route_get_text, re.M)
    return m.group(1) if m else None


# ------------------------------------------------------------------ the interface's speed

def linux_speed_bytes_per_s(interface: str, sys_net: Path = Path("/sys/class/net")) -> float | None:
    """/sys/class/net/IF/speed is the negotiated speed in Mb/s; -1 (or a read that fails) where the driver
    states none (Wi-Fi, some virtual interfaces, a link that is down)."""
    try:
        mbit = int((sys_net / interface / "speed").read_text().strip())
    except (OSError, ValueError):
        return None
    return mbit * 1e6 / 8 if mbit > 0 else None


def darwin_speed_bytes_per_s(ifconfig_text: str) -> float | None:
    """The speed in the media subtype macOS `ifconfig IF` prints, `media: autoselect (1000baseT
    <full-duplex>)`: xnu's bsd/net/if_media.h names Ethernet subtypes by their rate in Mb/s (10baseT/UTP,
    100baseTX, 1000baseT, 2500Base-T, 5000Base-T) or Gb/s (10Gbase-T, 25GBase-CR, 40Gbase-SR4, 100GBase-...);
    Wi-Fi's media names no rate: None."""
    m = re.search(r"^\s*media:.*?\(?\b([0-9]+)(G?)base", ifconfig_text, re.M | re.I)
    if m is None:
        return None
    mbit = int(m.group(1)) * (1000 if m.group(2).upper() == "G" else 1)
    return mbit * 1e6 / 8 if mbit > 0 else None


def _resolve(host: str) -> str | None:
    """The server's first address, or None where the name does not resolve within LOOKUP_SECONDS."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    found: list[str] = []

    def lookup() -> None:
        try:
            found.append(socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)[0][4][0])
        except (OSError, IndexError, UnicodeError):
            pass
    t = threading.Thread(target=lookup, daemon=True)
    t.start()
    t.join(LOOKUP_SECONDS)
    return found[0] if found else None


def _command(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def link_of(device: str | None, fs_type: str | None, given_bytes_per_s: float | None = None) -> Link | None:
    """The link to the store of a target whose mount source is `device`; None where the file system names no
    server. A rate given with --link-rate is the link's, whatever the interface says."""
    server = server_of(device, fs_type)
    if server is None:
        return None
    address = _resolve(server)
    interface = None
    if address is not None:
        if sys.platform == "darwin":
            interface = darwin_route_interface(_command(["/sbin/route", "-n", "get", address]))
        else:
            interface = linux_interface(address)
        if interface is not None and not INTERFACE_NAME.fullmatch(interface):
            interface = None
    if given_bytes_per_s is not None:
        return Link(server, interface, given_bytes_per_s, "given")
    if address is not None and ipaddress.ip_address(address).is_loopback:
        return Link(server, interface, None, "loopback")          # nothing to cross: this machine's own server
    if interface is None:
        return Link(server, None, None, "unknown")
    speed = darwin_speed_bytes_per_s(_command(["/sbin/ifconfig", interface])) if sys.platform == "darwin" \
        else linux_speed_bytes_per_s(interface)
    return Link(server, interface, speed, "negotiated" if speed else "unknown")
