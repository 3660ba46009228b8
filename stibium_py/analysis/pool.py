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
are the same either way: each job carries its own seed.

Starting the workers costs about a second (a fresh interpreter each, importing numpy and scipy), more than a
comparison of two quick runs takes in all. So the jobs begin here, on a thread a core (numpy lets go of the
interpreter's lock in a bootstrap's work, so threads run draws side by side), and the pool starts only when they
have run for as long as its start would take; then it works from the other end (the times are in
docs/performance.md).

Where the caller knows before its jobs that they will be long (a comparison of large runs: their files' size
says so before they are read), the pool begins at once, beside the reading, which keeps one core busy and leaves
the others to the workers' start; the jobs then go to this thread and to the workers from the start. Draws in
processes side by side were measured quicker than on threads of one process, which share the interpreter's lock
(docs/performance.md)."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor
from concurrent.futures import wait as first_done
from typing import Any

from .. import registry


def start_method(platform: str) -> str:
    """How the pool's workers start, by sys.platform."""
    return "spawn" if platform == "darwin" else "forkserver"


START_SECONDS = 1.0     # the workers' start, measured on Linux (fork server) with numpy and scipy to import
WORKERS = os.cpu_count() or 1


def workers(ready: Callable[[], Any] | None = None, count: int = WORKERS) -> ProcessPoolExecutor:
    """The workers know every kind this process does: a kind registered beside the built-in ones is loaded in
    each worker from its home (registry.load_plugins). `ready`, where given, runs in each worker as it starts
    (imports the jobs need, done before the first of them arrives)."""
    context = multiprocessing.get_context(start_method(sys.platform))
    return ProcessPoolExecutor(max_workers=count, mp_context=context, initializer=_worker_start,
                               initargs=(registry.plugins(), ready))


def _worker_start(homes: tuple[str, ...], ready: Callable[[], Any] | None) -> None:
    """A worker's start: the kinds of its parent's plugins, then what its jobs need (workers)."""
    registry.load_plugins(homes)
    if ready is not None:
        ready()


def _no_job() -> None:
    """Submitted once per worker of a pool begun early: a worker process starts at a job's submission."""


class WhenWorthIt(Executor):
    """Jobs run here, first to last, on `width` threads (this one and others beside it); once they have run for as
    long as the workers take to start, a pool is started beside this process and takes jobs from the last
    backwards, one per worker at a time, until the two meet. A comparison of quick runs never starts it; a long one
    loses about that start, unless its caller begins the pool early (begin). `map` gives the results in order, the
    same wherever each job ran. `workers` makes the pool (`width` workers); `start_seconds` is what starting it
    costs."""

    def __init__(self, workers: Callable[[], Executor] = workers, start_seconds: float = START_SECONDS,
                 width: int = WORKERS):
        self._make, self._start_seconds, self._width = workers, start_seconds, width
        self._pool: Executor | None = None
        self._begun = 0                 # the workers of a pool begun early (begin): 0, the pool starts when worth it

    @property
    def begun(self) -> bool:
        """Whether the pool was begun early (begin)."""
        return self._begun > 0

    def begin(self, ready: Callable[[], Any]) -> None:
        """The pool started now, one worker a core but this one, each worker running `ready` as it starts: for jobs
        known to be long before they are known (this process reads meanwhile, on one core). The jobs then go to
        this thread and to the workers from the first. Nothing changes on one core."""
        if self._pool is not None or self._width < 2:
            return
        self._begun = self._width - 1
        self._pool = workers(ready, self._begun)
        for _ in range(self._begun):
            self._pool.submit(_no_job)

    def _started(self) -> Executor:
        if self._pool is None:
            self._pool = self._make()
        return self._pool

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return self._started().submit(fn, *args, **kwargs)

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], timeout: float | None = None,
            chunksize: int = 1) -> Iterator[Any]:
        jobs = list(zip(*iterables))
        results: list[Any] = [None] * len(jobs)
        bounds = [0, len(jobs)]         # the next job from the front (here), one past the next from the back
        lock = threading.Lock()
        here_done = threading.Event()
        failed: list[BaseException] = []

        def take(front: bool) -> int | None:
            with lock:
                if bounds[0] >= bounds[1]:
                    return None
                if front:
                    bounds[0] += 1
                    return bounds[0] - 1
                bounds[1] -= 1
                return bounds[1]

        # the threads that take jobs from the first: this one alone beside a pool begun early (its workers have the
        # other cores), else one a core
        front = 1 if self._begun else max(1, min(self._width, len(jobs)))
        at_once = self._begun or self._width         # the jobs the pool runs at once: one a worker

        def from_the_back() -> None:
            if not self._begun:
                if here_done.wait(self._start_seconds):
                    return
                # the pool only where more jobs wait than the front's threads take next: those few they reach
                # before a pool would have started
                while True:
                    with lock:
                        waiting = bounds[1] - bounds[0]
                    if waiting > front:
                        break
                    if waiting == 0 or here_done.wait(0.05):
                        return
            try:
                pool, running = self._started(), {}
                while True:
                    while len(running) < at_once and (i := take(False)) is not None:
                        running[pool.submit(fn, *jobs[i])] = i
                    if not running:
                        return
                    finished, _ = first_done(running, return_when=FIRST_COMPLETED)
                    for f in finished:
                        results[running.pop(f)] = f.result()
            except BaseException as e:      # re-raised in the caller's thread
                failed.append(e)

        def from_the_front() -> None:
            try:
                while not failed and (i := take(True)) is not None:
                    results[i] = fn(*jobs[i])
            except BaseException as e:      # re-raised in the caller's thread; nobody takes another job
                with lock:
                    bounds[0] = bounds[1]
                failed.append(e)

        helper = threading.Thread(target=from_the_back, name="stibium-pool", daemon=True)
        helper.start()
        # the front is this thread and, where there are more jobs and cores, threads beside it: a bootstrap's
        # work is numpy's, which lets go of the interpreter's lock, so two threads do two draws at once without
        # the pool's start (docs/performance.md)
        beside = [threading.Thread(target=from_the_front, name=f"stibium-front-{k}", daemon=True)
                  for k in range(front - 1)]
        for t in beside:
            t.start()
        try:
            from_the_front()
        finally:
            for t in beside:
                t.join()
            with lock:                  # a job that failed here: the pool takes no more either
                bounds[0] = bounds[1]
            here_done.set()
            helper.join()
        if failed:
            raise failed[0]
        return iter(results)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def process_pool() -> WhenWorthIt:
    """One process per core for the bootstraps, started once the work is worth its start."""
    return WhenWorthIt()
