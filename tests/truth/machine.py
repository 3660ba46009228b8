"""How much of the machine's CPU time the hypervisor took while a truth test ran, printed beside each attempt that
missed (tests/truth/conftest.py).

A device of known speed is only as exact as the machine that runs it: nbdkit's rate filter, the FUSE servers and the
veth links of the hosts' tests are processes and kernel threads on this machine's CPUs, and every instrument on
them, fio as well as stibium, reads what they deliver. A virtual machine's CPUs are at times taken by its host: on
2026-11-30 the truth tests here saw 0-13 % of their time stolen (/proc/stat's steal), passing and missing alike,
so the share is information for whoever reads a miss, not a rule that decides one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CpuTicks:
    """The all-CPU line of /proc/stat: total time and the part the hypervisor took, in clock ticks."""
    total: int
    steal: int


def parse_cpu_line(stat_text: str) -> CpuTicks:
    """From /proc/stat's text, its first line: `cpu user nice system idle iowait irq softirq steal guest guest_nice`.
    guest time is counted inside user time already (proc(5)), so it is not added again."""
    fields = stat_text.split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu":
        raise ValueError(f"not /proc/stat's all-CPU line: {fields[:1]}")
    ticks = [int(v) for v in fields[1:9]]
    return CpuTicks(total=sum(ticks), steal=ticks[7] if len(ticks) > 7 else 0)


def cpu_ticks(stat: Path = Path("/proc/stat")) -> CpuTicks | None:
    """The machine's ticks now, or None where /proc/stat cannot be read."""
    try:
        return parse_cpu_line(stat.read_text())
    except (OSError, ValueError):
        return None


def stolen_share(before: CpuTicks | None, after: CpuTicks | None) -> float | None:
    """The share of the CPUs' time the hypervisor took between two readings; None where either is missing or no
    tick passed."""
    if before is None or after is None or after.total <= before.total:
        return None
    return (after.steal - before.steal) / (after.total - before.total)


def stolen_words(before: CpuTicks | None, after: CpuTicks | None) -> str:
    share = stolen_share(before, after)
    return "the hypervisor's share of the CPUs not read" if share is None else \
        f"the hypervisor took {share:.1%} of the CPUs"
