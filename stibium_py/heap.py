"""Memory a step freed, handed back to the system where the step is large enough for it to matter (a million
measurements' parse, a fit of hundreds of thousands of points). pyarrow's pool (mimalloc) and the C library's
heaps keep what is freed for the process's next allocations; but the report allocates on threads of its own,
whose heaps do not take what another thread freed, and glibc serves large arrays from those heaps once a large
block has been freed (its mmap threshold rises to the block's size). So the freed memory adds up to the peak:
docs/performance.md has the figures."""

from __future__ import annotations

import sys


def give_back() -> None:
    """pyarrow's unused memory released (where pyarrow is loaded), and glibc's heaps trimmed (malloc_trim); on
    other systems (macOS, musl) pyarrow's release alone."""
    import ctypes       # here, not at the top: a command that reads no run does without it
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):       # not glibc
            return
        trim(0)
