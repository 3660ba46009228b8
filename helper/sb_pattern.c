/* sb_pattern.c: request offsets for sequential, strided and random access,
 * computed before the timer starts.
 * sequential: 0, G, 2G, ... (the last request may be short);
 * strided:    0, G+S, 2(G+S), ... (S bytes skipped after each request);
 * random:     distinct G-aligned blocks of the span, in an order drawn from the seed
 *             (a partial Fisher-Yates shuffle), each at most once.
 * --offset moves every request by that many bytes (a client's segment of a shared file): the pattern is
 * the same, shifted. */
#include "sb_job.h"
#include "sb_rng.h"
#include <errno.h>
#include <stdlib.h>

uint64_t sb_request_len(const sb_job *job, uint64_t i)
{
    uint64_t done = i * job->granularity;
    uint64_t left = job->bytes - done;
    return left < job->granularity ? left : job->granularity;
}

uint64_t sb_largest_request(const sb_job *job)
{
    return job->granularity < job->bytes ? job->granularity : job->bytes;
}

static int sb_random_offsets(sb_job *job, sb_err *err)
{
    uint64_t nblocks = job->span / job->granularity;
    if (nblocks > UINT32_MAX)
        return sb_fail(err, EINVAL, "span of %llu blocks is too many for random access; use a larger granularity",
                       (unsigned long long)nblocks);
    uint32_t *blocks = malloc(nblocks * sizeof *blocks);
    if (!blocks)
        return sb_fail(err, ENOMEM, "cannot allocate the random order of %llu blocks", (unsigned long long)nblocks);
    for (uint64_t i = 0; i < nblocks; i++)
        blocks[i] = (uint32_t)i;
    sb_rng r;
    sb_rng_seed(&r, job->seed);
    for (uint64_t i = 0; i < job->nrequests; i++) {
        uint64_t j = i + sb_rng_below(&r, nblocks - i);
        uint32_t t = blocks[i];
        blocks[i] = blocks[j];
        blocks[j] = t;
        job->offsets[i] = (uint64_t)blocks[i] * job->granularity;
    }
    free(blocks);
    return 0;
}

int sb_pattern_plan(sb_job *job, sb_err *err)
{
    uint64_t g = job->granularity;
    if (g > job->span)
        return sb_fail(err, EINVAL, "granularity %llu is larger than the span %llu",
                       (unsigned long long)g, (unsigned long long)job->span);
    if (job->access != SB_SEQUENTIAL && job->bytes % g != 0)
        return sb_fail(err, EINVAL, "bytes %llu is not a multiple of the granularity %llu, as %s access needs",
                       (unsigned long long)job->bytes, (unsigned long long)g,
                       job->access == SB_RANDOM ? "random" : "strided");
    job->nrequests = (job->bytes + g - 1) / g;
    uint64_t extent;
    if (job->access == SB_SEQUENTIAL)
        extent = job->bytes;
    else if (job->access == SB_STRIDED)
        extent = job->nrequests * (g + job->stride) - job->stride;
    else
        extent = job->nrequests * g;
    if (extent > job->span)
        return sb_fail(err, EINVAL, "the requests need %llu bytes but the span is %llu; raise --span or lower --bytes",
                       (unsigned long long)extent, (unsigned long long)job->span);
    job->offsets = malloc((job->nrequests ? job->nrequests : 1) * sizeof *job->offsets);
    if (!job->offsets)
        return sb_fail(err, ENOMEM, "cannot allocate %llu request offsets", (unsigned long long)job->nrequests);
    if (job->access == SB_RANDOM) {
        if (sb_random_offsets(job, err) != 0)
            return -1;
    } else {
        uint64_t step = job->access == SB_STRIDED ? g + job->stride : g;
        for (uint64_t i = 0; i < job->nrequests; i++)
            job->offsets[i] = i * step;
    }
    if (job->offset > UINT64_MAX - job->span)
        return sb_fail(err, EINVAL, "--offset %llu with a span of %llu reaches past the largest file offset",
                       (unsigned long long)job->offset, (unsigned long long)job->span);
    for (uint64_t i = 0; i < job->nrequests; i++)
        job->offsets[i] += job->offset;
    return 0;
}
