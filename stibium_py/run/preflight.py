"""Checks made before a run writes anything: the target folder, the space it needs, the memory the
helper's buffers need, and what `between: drop-caches` needs; and dropping the caches itself.
Each refusal is a RunError with one line that says what to do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .. import registry
from ..errors import RunError
from ..machine import sysinfo
from ..paths import folder_to_write
from ..plan import Expanded
from ..plan.expand import space_wanted
from ..units import format_bytes

WORK_MARKER = ".stibium-run"
# files the Finder writes into any folder a user opens (its view settings, a localized name): not the user's data
FOLDER_VIEW_FILES = (".DS_Store", ".localized")
# The helper's buffers: the largest request, beside a write stream of up to 64 MiB (a buffer of
# 256 MiB or more frees the other one), and the process itself.
HELPER_OVERHEAD_BYTES = 128 * 2**20
# What "fits comfortably" means: the buffers may take at most this share of the available memory,
# so the page cache and the rest of the machine keep room.
MEMORY_SHARE = 0.8


def largest_request_bytes(expanded: Expanded) -> int:
    """The largest single request of the plan: what the helper's buffer must hold."""
    return max((min(o.granularity_bytes, o.bytes) for o in expanded.ops), default=0)


def largest_read_slots_bytes(expanded: Expanded) -> int:
    """Reads with requests in flight hold a request's worth of buffer for each of them."""
    return max((min(o.granularity_bytes, o.bytes) * o.queue_depth * o.threads for o in expanded.ops
                if o.reads), default=0)


def memory_needed_bytes(largest_request: int) -> int:
    return largest_request + HELPER_OVERHEAD_BYTES


def check_memory(largest_request: int, available_bytes: int | None, read_slots: int = 0) -> None:
    """Refuse a plan whose largest request (or reads in flight) does not fit comfortably in the available
    memory."""
    if available_bytes is None:
        return
    need = memory_needed_bytes(max(largest_request, read_slots))
    if need <= MEMORY_SHARE * available_bytes:
        return
    what = (f"the plan's largest request is {format_bytes(largest_request)}" if largest_request >= read_slots else
            f"the plan's reads in flight hold {format_bytes(read_slots)} (a request's worth for each)")
    raise RunError(f"{what}: the helper needs about {format_bytes(need)} of memory for it, but only "
                   f"{format_bytes(available_bytes)} is available; use smaller sizes or granularities"
                   f"{', or fewer requests in flight' if read_slots > largest_request else ''}, or free memory", 2)


def foreign_entries(folder: Path) -> list[str]:
    """What a target holds that stibium did not put there: anything but test folders of its own (with their
    marker), the Finder's view files, and the helper's probe file (`.stibium-probe-PID`, made and removed at once
    by another client's check of the same folder, which this one may list in between; on a FUSE file system such
    as sshfs, a file removed while it is open shows for that moment as `.fuse_hidden` and 16 hex digits, libfuse's
    name for it, until its last descriptor closes: a deleted file, no one's data)."""
    return [p.name for p in folder.iterdir() if p.name not in FOLDER_VIEW_FILES
            and not (p.name.startswith("stibium-") and (p / WORK_MARKER).exists())
            and not re.fullmatch(r"\.stibium-probe-\d{1,10}", p.name)
            and not re.fullmatch(r"\.fuse_hidden[0-9a-f]{16}", p.name)]


def check_target(target: Path, needed_bytes: int, allow_nonempty: bool, whole_drive: bool = False) -> None:
    """Refuse, before anything is written, a target stibium should not or cannot use. whole_drive (a person's
    word: `stibium verify` names the drive itself, as its argument) lets the test folder go at a file system's root
    or in the home folder."""
    target = target.expanduser()
    where = "" if whole_drive else " with --target"       # the folder is the argument of `stibium verify`
    # loops, long names, file parts, kernel file systems; the existing part is a folder (writability below)
    existing = folder_to_write(target, "target", f"choose a folder{where}", check_writable=False)
    resolved = target.resolve()
    if not whole_drive and (resolved == Path(resolved.anchor) or os.path.ismount(resolved)):
        raise RunError(f"target {target} is the root of a file system; use a folder inside it, "
                       f"such as {resolved / 'stibium-test'}", 2)
    if not whole_drive and resolved == Path.home().resolve():
        raise RunError(f"target {target} is your home folder itself; use a folder inside it, "
                       f"such as {resolved / 'stibium-test'}", 2)
    if os.statvfs(existing).f_flag & os.ST_RDONLY:
        raise RunError(f"target {target} is on a read-only file system; choose another folder{where}", 2)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise RunError(f"target {target} is not writable by this user; choose another folder{where}", 2)
    if target.is_dir() and not allow_nonempty:
        foreign = foreign_entries(target)
        if foreign:
            raise RunError(f"target {target} holds files stibium did not create ({foreign[0]}, ...); use an empty "
                           f"folder or pass --allow-nonempty", 2)
    free = shutil.disk_usage(existing).free
    want = space_wanted(needed_bytes)
    if free < want:
        raise RunError(f"target {target} has {format_bytes(free)} free but the plan needs {format_bytes(needed_bytes)} "
                       f"plus a margin ({format_bytes(want)}); free some space or choose another folder{where}", 2)


# sudo searches only its secure_path, which lacks ~/.local/bin where install.sh links stibium for a user
SUDO_HOW = 'sudo "$(command -v stibium)" run ... (sudo does not search ~/.local/bin)'


def between_refusal(platform: str, euid: int, purge: str | None, drop_caches_writable: bool) -> str | None:
    """Why between: drop-caches cannot run here (root on Linux, root and `purge` on macOS), or None."""
    if platform == "darwin":
        if purge is None:
            return "between: drop-caches needs macOS's `purge`, which is not on this Mac; use between: evict"
        if euid != 0:
            return f"between: drop-caches needs `purge` run as root on macOS; run stibium as root with {SUDO_HOW}, " \
                   f"or use between: evict"
        return None
    if euid != 0 or not drop_caches_writable:
        return (f"between: drop-caches needs root on Linux (it writes /proc/sys/vm/drop_caches); run stibium as root "
                f"with {SUDO_HOW}, or use between: evict")
    return None


def check_between(expanded: Expanded) -> None:
    """drop-caches needs root on Linux and `purge` on macOS; say so before the run starts."""
    if not any(t.between == "drop-caches" for t in expanded.tests):
        return
    why = between_refusal(sys.platform, os.geteuid(), shutil.which("purge"),
                          os.access("/proc/sys/vm/drop_caches", os.W_OK))
    if why:
        raise RunError(why, 2)


def check_clients(expanded: Expanded) -> None:
    """What many clients cannot do: stop for a reboot of every machine in the middle of a run."""
    rebooting = [t.name for t in expanded.tests if t.between == "reboot"]
    if rebooting:
        raise RunError(f"{rebooting[0]}: between: reboot cannot run with many clients (every machine would have to "
                       f"restart in the middle of the run); use between: evict or drop-caches", 2)


def drop_caches() -> None:
    """Empty the whole page cache (between: drop-caches): `purge` on macOS, drop_caches on Linux."""
    if sys.platform == "darwin":
        try:
            proc = subprocess.run(["purge"], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise RunError(f"between: drop-caches could not run `purge` ({e}); run stibium with sudo, or use "
                           f"between: evict", 1) from None
        if proc.returncode != 0:
            said = (proc.stderr or proc.stdout).strip().splitlines()
            raise RunError(f"between: drop-caches: `purge` failed (exit status {proc.returncode}"
                           f"{': ' + said[-1] if said else ''}); it needs sudo: run stibium with sudo, or use "
                           f"between: evict", 1)
        return
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as e:
        raise RunError(f"between: drop-caches could not write /proc/sys/vm/drop_caches ({e.strerror}); run as "
                       f"root, or use between: evict", 1) from None


def preflight(expanded: Expanded, target: Path, needed_bytes: int, allow_nonempty: bool,
              out_dir: Path | None = None, clients: int = 1, whole_drive: bool = False) -> None:
    """Every check before a run starts (with many clients, on every rank's machine)."""
    if clients > 1:
        check_clients(expanded)
    if out_dir is not None:
        folder_to_write(out_dir, "output folder", "choose another with --out")
    check_target(target, needed_bytes, allow_nonempty, whole_drive)
    for test in expanded.tests:         # what a kind checks of the target beside these (a tree's names and inodes)
        refusal = registry.spec(test.kind).refusal
        said = refusal(test, target, clients, expanded.plan.name) if refusal is not None else None
        if said:
            raise RunError(said, 2)
    check_between(expanded)
    check_memory(largest_request_bytes(expanded), sysinfo.available_memory_bytes(), largest_read_slots_bytes(expanded))
