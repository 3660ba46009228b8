"""What each column of measurements.csv holds, in the order of its columns (docs/measurements.md is generated from
this by report/reference.py; tests/test_records.py holds it to the columns)."""

from __future__ import annotations

DESCRIPTIONS = {
    "seq": "the operation's place in the run, from 0 (its key: a resumed run skips the seqs it has)",
    "test": "the test's name in the plan",
    "op": "read, write or mixed (each request a read or a write: read_fraction); tree tests: the phase (create, "
          "stat, list, read, rename or delete)",
    "kind": "files (whole files of many sizes), pattern (requests inside one file), sustained (a long write "
            "without pauses, a row per chunk), tree (a folder tree of many files, a row per phase) or stream "
            "(video streams of frames with deadlines, a row per frame)",
    "access": "sequential, strided or random; a replay test's row of one kind of call: that kind (read, write, "
              "fsync, open, stat, ...), its trial's row of the whole replay: empty",
    "size_bytes": "the file's size (files tests), the span the requests fall in (pattern tests) or the bytes of "
                  "the whole tree (tree tests)",
    "granularity_bytes": "bytes per request, as the plan asked (0 for tree tests, whose files are read and "
                         "written whole in requests of at most 1 MiB)",
    "stride_bytes": "bytes skipped after each request (strided access), else 0",
    "trial": "the repeat (files) or trial (pattern, tree), from 0",
    "file": "the test file, relative to the run's test folder (tree tests: the tree's folder)",
    "bytes": "bytes moved by the measurement (0 for a failed one)",
    "seconds": "the timed interval: open to close, the requests and, for writes, the sync; empty when it failed",
    "started_s": "when the runner sent the operation, seconds since the run began",
    "resident_before": "fraction of the file in the page cache just before a read (cachestat, or mincore where the kernel lacks it); empty where unknown",
    "engine": "the engine that ran: direct, buffered or foundation (app runs as one of them); tree tests: posix or "
              "foundation",
    "lat_p50_s": "median per-request latency (the helper's bounded histogram)",
    "lat_p99_s": "99th percentile per-request latency",
    "lat_max_s": "the slowest request",
    "error": "why the measurement failed; empty when it did not",
    "requests": "requests issued (tree tests: the phase's operations, one per file; list: one per folder read)",
    "io_seconds": "time in the requests alone",
    "sync_seconds": "time in the sync (fsync or F_FULLFSYNC) after a write",
    "open_seconds": "time to open the file",
    "close_seconds": "time to close it",
    "lat_p90_s": "90th percentile per-request latency",
    "lat_p999_s": "99.9th percentile per-request latency",
    "lat_mean_s": "mean per-request latency",
    "direct_honoured": "true where every request of a direct measurement bypassed the page cache, false where "
                       "some went through it, empty for the other engines",
    "tail_bytes_buffered": "bytes of an unaligned tail written or read through the cache (Linux direct I/O)",
    "start_ns": "the helper's raw monotonic clock at the start (CLOCK_MONOTONIC_RAW, or Mach absolute time "
                "scaled to ns)",
    "end_ns": "the same clock at the end",
    "syscalls": "read or write calls made (more than requests where the platform splits a request); tree tests: "
                "every call the phase made inside its interval (open, write, fsync, close, stat, opendir, readdir, "
                "rename, unlink, mkdir, the copy's; the foundation engine: its Foundation calls)",
    "largest_syscall_bytes": "the largest single call",
    "cached_bytes": "bytes that went through the page cache",
    "cached_reason": "why they did (the platform's rule), empty where none did",
    "sync_used": "the sync that ran: fsync, fdatasync, O_DSYNC (every write synchronous), F_FULLFSYNC, "
                 "F_BARRIERFSYNC, O_SYNC (macOS's dsync) or none; fsync (F_FULLFSYNC refused) where the file system "
                 "does not have it (tree tests, create: each, end or none, each file's sync an fsync)",
    "lat_min_s": "the fastest request",
    "span_bytes": "the span the helper used (pattern tests)",
    "engine_requested": "the engine the plan asked for",
    "errno": "the platform's error number of a failed measurement (numbers differ between platforms)",
    "strerror": "the platform's text for that error number",
    "removed_partial_file": "true where a failed write removed the file it had begun",
    "lat_hist_ns": "every request's latency as a histogram: 'lo-hi:count' per non-empty bin [lo, hi) in ns, "
                   "separated by spaces, 16 bins per octave (1/16 relative); empty for a single request",
    "queue_depth": "requests in flight per thread, as the plan asked (1 in files made before it existed)",
    "threads": "threads, each moving its own part of the requests in order, as the plan asked",
    "io_method": "how the requests moved: sync (one at a time on one thread), io_uring (Linux: one ring per "
                 "thread), threads (one thread per request in flight); tree tests, copy: what copied the files that "
                 "did not clone (copy_file_range, read/write, copyfile), empty where every one cloned",
    "io_method_reason": "why the method is not io_uring where it could have been (macOS, no liburing, the "
                        "kernel refused, an unaligned direct tail), else empty",
    "chunk": "sustained tests: the chunk's number within its file, from 0, on a row of its own per chunk (bytes, "
             "seconds, start_ns, end_ns and the latencies are the chunk's); empty on the row of the whole file. "
             "Stream tests: the frame's number in its stream (a frame is a chunk; chunk_gap_s holds the wait for "
             "its time)",
    "bytes_done": "sustained tests: bytes of the file moved when the chunk ended",
    "chunk_gap_s": "sustained tests: the time between the previous chunk's end and this chunk's start (the "
                   "helper writing out the previous row); 0 for a file's first chunk, and with requests in flight "
                   "(the others went on while the row was written: each chunk begins where the last ended)",
    "temperature_c": "sustained tests: the drive's temperature in degrees Celsius when the chunk's row arrived; "
                     "empty where the machine cannot tell",
    "run_start_s": "sustained tests: the chunk's start on the run's clock (seconds since the run began, as "
                   "started_s): its start_ns placed by the helper's clock read beside the run's clock as the row "
                   "arrived; empty where the package cannot read the helper's clock. Many clients: every row's "
                   "start on rank 0's clock (seconds since the clients joined), its start_ns placed by its rank's "
                   "measured offset",
    "run_end_s": "sustained tests: the chunk's end on the run's clock, as run_start_s",
    "offset_bytes": "many clients with a shared file: where this client's segment begins (its requests are the "
                    "pattern's, moved this far into the file); empty otherwise",
    "rank": "many clients (mpiexec): the rank that measured it, from 0; its start_ns and end_ns are its own "
            "machine's clock, run_start_s and run_end_s the same placed on rank 0's (run.json's clients keeps "
            "the offsets); empty with one client",
    "host": "many clients: the machine of that rank",
    "written_by": "many clients, reads: the rank whose writes (or laid-out file) the read met; differs from rank "
                  "with read_from: other",
    "read_fraction": "mixed: the share of the requests that read, as the plan asked (exactly that many of each "
                     "pass over the requests, rounded to whole requests; which ones drawn from the seed); empty for "
                     "a read or a write",
    "read_bytes": "mixed: bytes of the requests that read (bytes is reads and writes together, all in one interval)",
    "write_bytes": "mixed: bytes of the requests that wrote",
    "read_requests": "mixed: requests that read",
    "write_requests": "mixed: requests that wrote",
    "read_lat_p50_s": "mixed: the median latency of its reads",
    "read_lat_p99_s": "mixed: the 99th percentile latency of its reads",
    "write_lat_p50_s": "mixed: the median latency of its writes",
    "write_lat_p99_s": "mixed: the 99th percentile latency of its writes",
    "read_lat_hist_ns": "mixed: its reads' latencies as a histogram (as lat_hist_ns, which holds every request)",
    "write_lat_hist_ns": "mixed: its writes' latencies as a histogram",
    "duration_s": "by time: how long the requests went on after the warm-up, as the plan asked (seconds and "
                  "io_seconds are what they took: the last requests end after it, a write's sync is in seconds); "
                  "empty for a measurement of its bytes",
    "warmup_s": "by time: the warm-up before the measured interval, as the plan asked (0: none)",
    "warmup_bytes": "by time: the bytes of the requests that completed in the warm-up; kept out of bytes, "
                    "seconds and the latencies, so out of the rate",
    "warmup_requests": "by time: the requests that completed in the warm-up",
    "steady_window": "rounds until steady: the rounds judged together, as the plan asked (trial is the round, from "
                     "0); empty for a test of trials",
    "steady_max_rounds": "rounds until steady: the most rounds the plan allows",
    "stonewall_s": "a stonewall: the time after the measurement's start after which it started no request, as the "
                   "plan asked (bytes and requests are what it moved; empty without a stonewall)",
    "stonewall_requests": "a stonewall: the requests done by then (all of them where the stonewall did not stop it)",
    "stonewall_seconds": "a stonewall: the time of those requests, from the first one's start to the last one's end",
    "wearout_requests": "a stonewall with many clients: the requests done after it so that every client did as "
                        "many as the furthest client had (wear-out, IOR's stoneWallingWearOut); their time, and the "
                        "wait for the other clients' counts, are in seconds; 0 with one client",
    "pass_requests": "a stonewall: the requests of the measurement's whole pass (its bytes as the plan asked), of "
                     "which stonewall_requests were done by the stonewall",
    "instrument": "what measured the row: helper (stibium's own engines; every row of a file made before the "
                  "column existed) or fio (the bench beside the road test: a pattern test's bench: fio, or a fio "
                  "result imported with stibium import fio; docs/fio.md)",
    "instrument_version": "fio rows: fio's version as it states it (fio-3.33); empty for the helper's rows, whose "
                          "version run.json keeps",
    "slat_mean_s": "fio rows: the mean submission latency (fio's slat; 0 for its synchronous engines); their "
                   "lat_* columns and lat_hist_ns are fio's completion latency (clat)",
    "entries": "tree tests: the files the phase handled (list: the names the folders it read held), what its "
               "files per second count; requests is the helper's operations (list: the folders read)",
    "dirs_made": "tree tests, create: the folders made on the way to the files (inside the timed phase)",
    "caches_dropped": "tree tests: true where the kernel's caches (folder entries, inodes, data) were dropped just "
                      "before the phase (between: drop-caches), false where the phase met what the phases before "
                      "left in memory",
    "cloned": "tree tests, copy: the copies the file system made as clones (FICLONE on Linux, clonefile on macOS: "
              "they share their source's blocks, no bytes moved); the rest were copied byte by byte (io_method says "
              "how: copy_file_range, read/write or copyfile)",
    "fill": "what the writes put on the disk, as the plan said it: random, a byte (0x41), or data of stated ratios "
            "(compressible=50%,dedupe=25%: the share of each 4 KiB block a compressor removes, the share of blocks "
            "that repeat another); a read's is the fill its data were written with. Empty in files made before the "
            "column: the test's fill in run.json's plan",
    "fps": "stream tests: frames a second, as the plan asked; each row with a chunk is one frame",
    "streams": "stream tests: how many streams ran at once (each a file of its own)",
    "stream": "stream tests: which of them the row is, from 0",
    "buffer_frames": "stream tests: the frames the player or recorder holds; a frame done later than they cover is "
                     "dropped",
    "block_bytes": "verify tests: the signed block, the file system's (at least 4 KiB): each carries the run's id, "
                   "its index in the fill, a checksum and a payload drawn from the seed and the index",
    "first_block": "verify tests: the index in the fill of the file's first block (its byte in the fill is this "
                   "times block_bytes)",
    "ok_blocks": "verify tests, a file read back (the row without a chunk): its blocks that read back as written",
    "moved_blocks": "verify tests, a file read back: its blocks that hold another block of the fill (a drive that "
                    "writes over what it holds: a capacity it does not have)",
    "corrupt_blocks": "verify tests, a file read back: its blocks that came back changed",
    "unreadable_blocks": "verify tests, a file read back: its blocks that could not be read (each failing chunk is "
                         "read again block by block)",
    "period_blocks": "verify tests, a file read back: the greatest common divisor of the distances between a moved "
                     "block and the block it holds (a drive that wraps at N blocks: N); 0 where none moved",
    "bad_blocks": "verify tests, a file read back: its first 64 bad blocks as a JSON list of objects: block (its index "
                  "in the fill), kind (moved, corrupt or unreadable), holds (moved: the block it holds), bits and "
                  "copy_of (corrupt: the bits that differ, and the block it is a damaged copy of where it is nearer "
                  "another block than its own), errno and error (unreadable)",
    "quiet_wait_s": "stream tests, a playback's stream (the row without a chunk): the seconds from its files' "
                    "eviction until the target's disk was quiet (nothing in flight or written for 150 ms; at most "
                    "STIBIUM_QUIET_WAIT_S, 10 s by default), when its frames began; empty where the disk's counters "
                    "cannot be read or no wait was asked",
    "quiet": "stream tests, a playback's stream: whether the disk went quiet before it (false: the wait's bound "
             "came first); empty where no wait was made",
    "replay_timing": "replay tests, a trial's row: how each thread spaced its calls: as-fast (the next when the last "
                     "returned), as-fast-think (after the recorded time between them) or as-recorded (each at its "
                     "recorded time after the replay's start)",
    "in_calls_s": "replay tests, a trial's row: every thread's time inside calls, summed (seconds is the replay's "
                  "elapsed time; a row of one kind of call: seconds is that kind's time inside calls)",
    "think_s": "replay tests, a trial's row: every thread's time waiting for a call's recorded gap or due time",
    "waited_s": "replay tests, a trial's row: every thread's time waiting for another thread's call on the same file "
                "or open file to return (the order the recording had)",
    "late_calls": "replay tests as-recorded, a trial's row: the calls issued more than 100 us after their due time "
                  "(the calls before them on their thread took longer than recorded)",
    "late_max_s": "replay tests as-recorded, a trial's row: how late the latest call was issued",
    "late_p99_s": "replay tests as-recorded, a trial's row: the 99th percentile of how late the late calls were",
    "mismatched_calls": "replay tests: the calls that failed where the recorded one succeeded, or succeeded where it "
                        "failed (a trial's row: all of them; a kind's row: that kind's)",
    "first_mismatch": "replay tests, a trial's row: the first mismatched call, its index in the trace's calls",
    "slowest_calls": "replay tests, a trial's row: its slowest calls as JSON, [[index in the trace's calls, "
                     "seconds], ...], the slowest first",
    "rate_per_s": "pattern tests with a rate (an open loop): the requests a second this client was offered, as the "
                  "plan asked; each request was due at its time in a schedule set before the timer",
    "arrivals": "pattern tests with a rate: constant (due times evenly spaced) or poisson (gaps drawn from an "
                "exponential distribution, from the seed)",
    "resp_p50_s": "pattern tests with a rate: the median response time, a request's due time to its completion (a "
                  "wait for a free slot or a stalled device included; the lat_ columns are its service time, issue "
                  "to completion)",
    "resp_p90_s": "pattern tests with a rate: the 90th percentile of the response time",
    "resp_p99_s": "pattern tests with a rate: the 99th percentile of the response time",
    "resp_p999_s": "pattern tests with a rate: the 99.9th percentile of the response time",
    "resp_max_s": "pattern tests with a rate: the longest response time",
    "resp_mean_s": "pattern tests with a rate: the mean response time",
    "resp_hist_ns": "pattern tests with a rate: the response times' histogram, in lat_hist_ns's form",
    "issue_late_p50_s": "pattern tests with a rate: the median of how long after its due time a request was issued",
    "issue_late_p99_s": "pattern tests with a rate: the 99th percentile of how long after its due time a request was "
                        "issued (the instrument's own lateness while slots were free, a slot's wait where not)",
    "issue_late_max_s": "pattern tests with a rate: the latest issue after its due time",
    "late_issues": "pattern tests with a rate: the requests issued more than 100 us after their due time",
    "unscheduled": "pattern tests with a rate, by time: requests left undone because the schedule ran out of due times "
                   "(0 unless it did)",
    "slo": "pattern tests with slo: the target this rate was a step of the search for (p99=0.002: the 99th "
           "percentile of the response time at most 2 ms) and the grid's top rate (highest=, requests a second)",
}
