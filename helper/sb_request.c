/* sb_request.c: what happens to one request, whatever moves it: the calls it makes are counted, its
 * data are a slice of the write buffer or a read slot, and at its completion its latency is recorded
 * and, with --verify, its block is checked. Shared by the plain loop (sb_run.c), the threads method
 * (sb_parallel.c) and the io_uring method (sb_uring.c). No system calls. */
#include "sb_parallel.h"
#include <errno.h>
#include <string.h>

void sb_count_call(sb_job *job, uint64_t bytes)
{
    job->calls++;
    if (bytes > job->largest_call_bytes)
        job->largest_call_bytes = bytes;
}

unsigned char *sb_request_data(const sb_job *job, uint64_t i, unsigned slot)
{
    if (job->op == SB_WRITE)
        return job->buf + job->slices[i];
    return job->buf + (size_t)slot * job->slot_bytes;
}

int sb_verify_request(sb_job *job, uint64_t i, const unsigned char *data, sb_err *err)
{
    uint64_t offset = job->offsets[i], len = sb_request_len(job, i);
    uint64_t block = offset / job->granularity;
    unsigned char bit = (unsigned char)(1u << (block & 7));
    if (__atomic_fetch_or(&job->seen[block >> 3], bit, __ATOMIC_RELAXED) & bit)
        return sb_fail(err, EINVAL, "verify: the block at offset %llu was moved twice", (unsigned long long)offset);
    if (job->op == SB_READ) {
        for (uint64_t k = 0; k + 8 <= len; k += 8) {
            uint64_t word;
            memcpy(&word, data + k, sizeof word);
            if (word != offset + k)
                return sb_fail(err, EINVAL, "verify: the word at offset %llu holds %llu; the file was not written "
                               "with --fill offset, or a request read the wrong place",
                               (unsigned long long)(offset + k), (unsigned long long)word);
        }
    }
    __atomic_fetch_add(&job->verified, 1, __ATOMIC_RELAXED);
    return 0;
}

int sb_worker_done(sb_worker *w, uint64_t i, const unsigned char *data, uint64_t submit_ns, uint64_t now)
{
    sb_job *j = &w->job;
    if (j->latency)
        sb_hist_record(&j->hist, now - submit_ns);
    w->last_complete_ns = now;
    return j->verify ? sb_verify_request(j, i, data, &w->err) : 0;
}
