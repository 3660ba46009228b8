/* sb_tree.h: one phase of a tree of files, timed whole in one invocation: the files (and for `list` their
 * folders) come from a list, each operation's latency goes into one histogram, and the phase's interval runs
 * from the threads' release to the last one's end (and, with sync at the end, the syncs after). The Python
 * side adds no round trip per file. Plain POSIX calls, as an app's own code makes them. */
#ifndef SB_TREE_H
#define SB_TREE_H
#include <stddef.h>
#include <stdint.h>
#include "sb_err.h"
#include "sb_hist.h"

typedef enum { SB_TREE_CREATE, SB_TREE_STAT, SB_TREE_LIST, SB_TREE_READ, SB_TREE_RENAME, SB_TREE_DELETE,
               SB_TREE_COPY, SB_TREE_PHASES } sb_tree_phase;
typedef enum { SB_TREE_SYNC_NONE, SB_TREE_SYNC_EACH, SB_TREE_SYNC_END } sb_tree_sync;

extern const char *const sb_tree_phase_names[SB_TREE_PHASES];
extern const char *const sb_tree_sync_names[3];

typedef struct {
    char *path;          /* relative to the root, without "..", "." or empty components */
    char *to;            /* rename: the new name; copy: the copy's (relative too); else NULL */
    uint64_t size;       /* create: the bytes written */
} sb_tree_entry;

/* An engine other than POSIX's (the Foundation engine, sb_tree_foundation.m, set by main.m): one operation of a
 * phase on one file (list: one folder) at `path` (`to`: the new name, or the copy's); create writes `size` bytes
 * of `data`. It adds what it moved to *bytes, the names a folder held to *names, the folders it made to
 * *dirs_made, the calls it made to *calls, and fills err on failure (-1). The C core calls it through this pointer, so that it links
 * without Foundation. */
typedef int sb_tree_engine_fn(sb_tree_phase phase, const char *path, const char *to, uint64_t size,
                              const unsigned char *data, int sync_each, uint64_t *bytes, uint64_t *names,
                              uint64_t *dirs_made, uint64_t *calls, sb_err *err);

/* The Foundation engine (sb_tree_foundation.m). */
sb_tree_engine_fn sb_tree_foundation_op;

typedef struct {
    sb_tree_phase phase;
    sb_tree_sync sync;   /* create only */
    int threads;         /* 1..64: the entries cut into that many parts, in order */
    int evict;           /* read: each file's pages dropped before the interval */
    uint64_t data_seed;
    sb_tree_engine_fn *engine;   /* NULL: POSIX calls; else every operation through it, on the calling thread */
    const char *root;
    sb_tree_entry *entries;
    size_t n;
} sb_tree_job;

typedef struct {
    uint64_t ops;            /* files created, stat-ed, read, renamed or deleted; folders listed */
    uint64_t bytes;          /* written or read */
    uint64_t names;          /* list: the names the folders held (. and .. left out) */
    uint64_t dirs_made;      /* create: folders made on the way */
    uint64_t start_ns, end_ns;
    uint64_t sync_ns;        /* sync at the end: its part of the interval */
    uint64_t pages, resident_pages;   /* read: the files' pages, and those cached when the interval began */
    uint64_t cloned;         /* copy: the copies that share their source's blocks (a clone moves no bytes) */
    uint64_t calls;          /* every call the phase made inside its interval (an engine's: its own calls) */
    const char *copy_method; /* copy: what copied the last file that was not cloned (NULL: every one cloned) */
    sb_hist hist;            /* one latency per operation */
} sb_tree_result;

/* A relative path a tree or a replay may name: not empty, no leading, trailing or doubled "/", no "." or ".."
 * component, shorter than PATH_MAX / 2: joined to a folder, it stays inside it. */
int sb_relative_path_ok(const char *p);
/* The list: one entry per line, "SIZE<TAB>PATH" or "SIZE<TAB>PATH<TAB>NEWPATH" (rename). */
int sb_tree_load(const char *list_path, sb_tree_job *job, sb_err *err);
void sb_tree_free(sb_tree_job *job);
/* The folders a list phase reads: the root and every folder above an entry, each once, parents first;
 * 0 (and NULL) where memory runs out. */
size_t sb_tree_dirs(const sb_tree_job *job, char ***dirs);
int sb_tree_run(const sb_tree_job *job, sb_tree_result *res, sb_err *err);
#endif
