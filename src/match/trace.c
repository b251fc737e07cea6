/* Writing match traces (format in trace.h). A traced matcher's ops table is
 * replaced by a copy whose append, insert, find, find_accept and remove
 * call the engine's and then write one record into the queue's mapped
 * chunk of the process's trace file; an untraced matcher never reaches
 * this file. */
#include "match/trace.h"
#include "match/engine.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TRACE_CHUNK_BYTES ((size_t)ONIC_TRACE_CHUNK_RECS * ONIC_TRACE_REC_SIZE)

const char *const onic_trace_queue_names[ONIC_TRACE_QUEUE_KINDS] = {
    "other", "posted", "overflow", "unexpected",
};

/* The process's file, shared by its traced queues. */
static struct {
    pthread_mutex_t lock;
    int             fd;       /* -1: none open */
    pid_t           pid;      /* the process that opened it */
    unsigned        refs;     /* queues using it */
    unsigned        opened;   /* files this process has opened, for their names */
    uint32_t        queues;   /* queues numbered so far */
    uint64_t        start_ns;
    uint64_t        next_off; /* where the next chunk goes */
    char            dir[ONIC_CONFIG_PATH_MAX + 1];
} trace_file = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, 0, 0, 0, 0, ""};

typedef struct match_tracer {
    onic_match_ops_t        ops;   /* first: m->ops points here */
    const onic_match_ops_t *real;
    onic_trace_rec_t       *cur, *end;  /* the free part of the mapped chunk */
    void                   *map;
    uint64_t                start_ns;   /* the file's */
    uint32_t                queue;
    uint8_t                 kind;
    int                     broken;     /* a chunk could not be mapped: records stop */
} match_tracer_t;

static inline match_tracer_t *trace_of(const onic_matcher_t *m)
{
    return (match_tracer_t *)(uintptr_t)m->ops;
}

/* Open dir's file for this process if none is; lock held. */
static onic_status_t trace_file_open(const onic_config_t *cfg, const char *dir,
                                     const char *engine)
{
    char path[ONIC_CONFIG_PATH_MAX + 96];
    onic_trace_hdr_t hdr;
    struct timespec rt;
    pid_t pid = getpid();
    int fd;

    if (trace_file.fd >= 0 && trace_file.pid == pid) {
        if (strcmp(trace_file.dir, dir) == 0)
            return ONIC_OK;
        if (trace_file.refs > 0) {
            onic_warn("trace: this process already traces into %s; a queue asking for %s is "
                      "not traced", trace_file.dir, dir);
            return ONIC_ERR_INVALID_PARAM;
        }
        close(trace_file.fd);
        trace_file.fd = -1;
    }
    if (trace_file.pid != pid) {   /* a forked child starts its own file */
        trace_file.fd = -1;
        trace_file.refs = 0;
        trace_file.opened = 0;
        trace_file.queues = 0;
        trace_file.pid = pid;
    }
    trace_file.opened++;
    if (trace_file.opened == 1)
        snprintf(path, sizeof(path), "%s/onic-%s-r%u-p%d.trace", dir,
                 cfg->jobid[0] != '\0' ? cfg->jobid : "nojob", cfg->rank, (int)pid);
    else
        snprintf(path, sizeof(path), "%s/onic-%s-r%u-p%d-%u.trace", dir,
                 cfg->jobid[0] != '\0' ? cfg->jobid : "nojob", cfg->rank, (int)pid,
                 trace_file.opened);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        onic_warn("trace: cannot create %s (ONIC_TRACE=%s): %m; queues are not traced", path,
                  dir);
        return ONIC_ERR_NO_RESOURCE;
    }
    memset(&hdr, 0, sizeof(hdr));
    memcpy(hdr.magic, ONIC_TRACE_MAGIC, sizeof(ONIC_TRACE_MAGIC));
    hdr.version  = ONIC_TRACE_VERSION;
    hdr.hdr_size = ONIC_TRACE_HDR_SIZE;
    hdr.rec_size = ONIC_TRACE_REC_SIZE;
    hdr.rank = cfg->rank;
    hdr.size = cfg->size;
    hdr.pid  = (uint32_t)pid;
    trace_file.start_ns = hdr.start_ns = onic_time_ns();
    clock_gettime(CLOCK_REALTIME, &rt);
    hdr.start_unix_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    snprintf(hdr.clock, sizeof(hdr.clock), "monotonic-ns");
    snprintf(hdr.engine, sizeof(hdr.engine), "%s", engine);
    snprintf(hdr.job, sizeof(hdr.job), "%s", cfg->jobid);
    /* The first chunk goes one chunk in, so every chunk is page aligned;
     * the gap after the header reads as zero records. */
    if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
        ftruncate(fd, (off_t)TRACE_CHUNK_BYTES) != 0) {
        onic_warn("trace: cannot write the header of %s: %m; queues are not traced", path);
        close(fd);
        return ONIC_ERR_NO_RESOURCE;
    }
    snprintf(trace_file.dir, sizeof(trace_file.dir), "%s", dir);
    trace_file.fd = fd;
    trace_file.next_off = TRACE_CHUNK_BYTES;
    onic_debug("trace: recording match operations in %s", path);
    return ONIC_OK;
}

/* Map the queue's next chunk. A failure stops this queue's records (said
 * once); the operations themselves go on. */
static __attribute__((noinline)) int trace_chunk_next(match_tracer_t *t)
{
    void *map = MAP_FAILED;
    uint64_t off;

    if (t->broken)
        return 0;
    if (t->map != NULL)
        munmap(t->map, TRACE_CHUNK_BYTES);
    t->map = NULL;
    t->cur = t->end = NULL;
    pthread_mutex_lock(&trace_file.lock);
    off = trace_file.next_off;
    if (ftruncate(trace_file.fd, (off_t)(off + TRACE_CHUNK_BYTES)) == 0) {
        map = mmap(NULL, TRACE_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, trace_file.fd,
                   (off_t)off);
        if (map != MAP_FAILED)
            trace_file.next_off = off + TRACE_CHUNK_BYTES;
    }
    pthread_mutex_unlock(&trace_file.lock);
    if (map == MAP_FAILED) {
        onic_warn("trace: cannot extend the trace in %s by %zu bytes: %m; queue %u records "
                  "no more", trace_file.dir, TRACE_CHUNK_BYTES, t->queue);
        t->broken = 1;
        return 0;
    }
    t->map = map;
    t->cur = map;
    t->end = t->cur + ONIC_TRACE_CHUNK_RECS;
    return 1;
}

/* Fill one record; the op byte goes last, so a reader of a killed process's
 * file sees each record whole or not at all. */
static inline void trace_put(match_tracer_t *t, unsigned op, unsigned flags, unsigned pos,
                             onic_mkey_t key, onic_mkey_t ignore, const void *entry,
                             uint64_t aux)
{
    onic_trace_rec_t *r;

    if (__builtin_expect(t->cur == t->end, 0) && !trace_chunk_next(t))
        return;
    r = t->cur++;
    r->kind   = t->kind;
    r->flags  = (uint8_t)flags;
    r->pos    = (uint8_t)pos;
    r->queue  = t->queue;
    r->time   = onic_time_ns() - t->start_ns;
    r->key    = key;
    r->ignore = ignore;
    r->entry  = (uint64_t)(uintptr_t)entry;
    r->aux    = aux;
    __atomic_store_n(&r->op, (uint8_t)op, __ATOMIC_RELEASE);
}

static void trace_append(onic_matcher_t *m, onic_mentry_t *e)
{
    match_tracer_t *t = trace_of(m);

    t->real->append(m, e);
    trace_put(t, ONIC_TRACE_OP_APPEND, 0, 0, e->key, e->ignore, e, 0);
}

static onic_status_t trace_insert(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                                  int after)
{
    match_tracer_t *t = trace_of(m);
    onic_status_t status = t->real->insert(m, e, anchor, after);
    unsigned pos = anchor == NULL ? ONIC_MATCH_HEAD : after ? ONIC_MATCH_AFTER : ONIC_MATCH_BEFORE;

    if (status == ONIC_OK)
        trace_put(t, ONIC_TRACE_OP_INSERT, 0, pos, e->key, e->ignore, e,
                  (uint64_t)(uintptr_t)anchor);
    return status;
}

static onic_mentry_t *trace_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                 int remove)
{
    match_tracer_t *t = trace_of(m);
    uint64_t before = m->stats.inspected;
    onic_mentry_t *e = t->real->find(m, key, ignore, remove);

    trace_put(t, remove ? ONIC_TRACE_OP_MATCH : ONIC_TRACE_OP_PEEK,
              e != NULL ? ONIC_TRACE_HIT : 0, 0, key, ignore, e, m->stats.inspected - before);
    return e;
}

static onic_mentry_t *trace_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                        onic_match_accept_t accept, void *arg, int remove)
{
    match_tracer_t *t = trace_of(m);
    uint64_t before = m->stats.inspected;
    onic_mentry_t *e = t->real->find_accept(m, key, ignore, accept, arg, remove);

    trace_put(t, remove ? ONIC_TRACE_OP_MATCH : ONIC_TRACE_OP_PEEK,
              ONIC_TRACE_ACCEPT | (e != NULL ? ONIC_TRACE_HIT : 0), 0, key, ignore, e,
              m->stats.inspected - before);
    return e;
}

static void trace_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    match_tracer_t *t = trace_of(m);

    t->real->remove(m, e);
    trace_put(t, ONIC_TRACE_OP_REMOVE, 0, 0, e->key, e->ignore, e, 0);
}

/* The label record: kind and index, and the engine's name in the ignore
 * words (16 bytes). */
static void trace_put_label(match_tracer_t *t, uint32_t index)
{
    onic_mkey_t key = {index, 0}, name = {0, 0};
    size_t len = strlen(t->real->name);

    memcpy(&name, t->real->name, len < sizeof(name) ? len : sizeof(name));
    trace_put(t, ONIC_TRACE_OP_LABEL, 0, 0, key, name, NULL, 0);
}

static void trace_fini(onic_matcher_t *m)
{
    match_tracer_t *t = trace_of(m);

    t->real->fini(m);
    if (t->map != NULL)
        munmap(t->map, TRACE_CHUNK_BYTES);
    pthread_mutex_lock(&trace_file.lock);
    if (--trace_file.refs == 0 && trace_file.fd >= 0) {
        close(trace_file.fd);
        trace_file.fd = -1;
    }
    pthread_mutex_unlock(&trace_file.lock);
    onic_free(t);
}

void onic_match_trace_attach(onic_matcher_t *m, const char *dir)
{
    match_tracer_t *t = onic_calloc(1, sizeof(*t));
    onic_status_t status;

    if (t == NULL) {
        onic_warn("trace: no memory to trace a %s queue; it is not traced", m->ops->name);
        return;
    }
    pthread_mutex_lock(&trace_file.lock);
    status = trace_file_open(&m->cfg, dir, m->ops->name);
    if (status == ONIC_OK) {
        trace_file.refs++;
        t->queue = ++trace_file.queues;
        t->start_ns = trace_file.start_ns;
    }
    pthread_mutex_unlock(&trace_file.lock);
    if (status != ONIC_OK) {
        onic_free(t);
        return;
    }
    t->real = m->ops;
    t->ops = *m->ops;
    t->ops.append      = trace_append;
    t->ops.insert      = trace_insert;
    t->ops.find        = trace_find;
    t->ops.find_accept = trace_find_accept;
    t->ops.remove      = trace_remove;
    t->ops.fini        = trace_fini;
    t->kind = ONIC_MATCH_QUEUE_OTHER;
    m->ops = &t->ops;
    trace_put_label(t, UINT32_MAX);
}

void onic_match_trace_label(onic_matcher_t *m, unsigned kind, uint32_t index)
{
    match_tracer_t *t;

    if (m == NULL || m->ops->fini != trace_fini)
        return;
    t = trace_of(m);
    t->kind = (uint8_t)(kind < ONIC_TRACE_QUEUE_KINDS ? kind : ONIC_MATCH_QUEUE_OTHER);
    trace_put_label(t, index);
}
