"""The process pool that runs independent bootstraps side by side (compare's and a series' draws per run):
one process per core, none of them a fork of this process.

By the time the draws begin, this process runs threads that Python does not see (pyarrow's CSV reader and
numpy's BLAS start pools of native threads), and a fork copies any lock one of them holds into a child that
has no thread to release it: a possible deadlock, which Python 3.13 warns of ("this process is
multi-threaded, use of fork() may lead to deadlocks"). So on Linux the workers come from a fork server
(Python 3.14's default there): a fresh interpreter of one thread, forked once per worker, each worker then
importing the bootstraps' module itself (imported in the server, numpy would start its BLAS threads there
too). On macOS they are spawned, Python's default there since 3.8 (bpo-33725: since macOS 10.14, running
code in a forked child that does not exec is not reliable with Apple's system libraries loaded). The draws
are the same either way: each job carries its own seed."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from . import registry


def start_method(platform: str) -> str:
    """How the pool's workers start, by sys.platform."""
    return "spawn" if platform == "darwin" else "forkserver"


def process_pool() -> ProcessPoolExecutor:
    """The workers know every kind this process does: a kind registered beside the built-in ones is loaded in
    each worker from its home (registry.load_plugins)."""
    context = multiprocessing.get_context(start_method(sys.platform))
    return ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=context,
                               initializer=registry.load_plugins, initargs=(registry.plugins(),))
