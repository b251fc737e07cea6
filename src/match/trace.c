/* Writing match traces (format in trace.h). A traced matcher's ops table is
 * replaced by a copy whose append, insert, find, find_accept and remove
 * call the engine's and then add one record to the queue's buffer; a full
 * buffer is written with one pwrite at a place reserved under the file's
 * lock. An untraced matcher never reaches this file.
 *
 * Why buffers and not a mapping of the file: measured here, filling fresh
 * pages of a shared mapping cost 60-130 ns of CPU per 64-byte record (a
 * page fault per 64 records), a 64 KiB write() 15-28 ns. Record times are
 * the TSC on x86-64 (a clock_gettime costs several times an rdtsc), its
 * rate measured against CLOCK_MONOTONIC at every write into the header. */
#include "match/trace.h"
#include "match/engine.h"
#include "base/clock.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_BUF_BYTES ((size_t)ONIC_TRACE_BUF_RECS * ONIC_TRACE_REC_SIZE)

#if defined(__x86_64__)
#include <x86intrin.h>
#define TRACE_CLOCK "tsc"
static inline uint64_t trace_ticks(void)
{
    return __rdtsc();
}
#else
#define TRACE_CLOCK "ns"
static inline uint64_t trace_ticks(void)
{
    return onic_time_ns();
}
#endif

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
    uint64_t        start_ticks;
    uint64_t        next_off; /* where the next batch goes */
    onic_dlist_t    tracers;  /* of the live queues, flushed at exit */
    int             atexit_set;
    char            dir[ONIC_CONFIG_PATH_MAX + 1];
} trace_file = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, 0, 0, 0, 0, 0, {NULL, NULL}, 0, ""};

typedef struct match_tracer {
    onic_match_ops_t        ops;   /* first: m->ops points here */
    const onic_match_ops_t *real;
    onic_trace_rec_t       *cur, *end;  /* the free part of buf */
    onic_trace_rec_t       *buf;
    uint64_t                start_ticks;  /* the file's */
    onic_dlist_t            link;       /* in trace_file.tracers */
    uint32_t                queue;
    uint8_t                 kind;
    int                     broken;     /* a write failed: records stop */
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
    if (trace_file.pid != pid) {   /* a forked child starts its own file for its new queues */
        onic_dlist_init(&trace_file.tracers);
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
    trace_file.start_ticks = trace_ticks();
    clock_gettime(CLOCK_REALTIME, &rt);
    hdr.start_unix_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    snprintf(hdr.clock, sizeof(hdr.clock), "%s", TRACE_CLOCK);
    hdr.tick_hz = 1000000000u;   /* until the first write measures it */
    snprintf(hdr.engine, sizeof(hdr.engine), "%s", engine);
    snprintf(hdr.job, sizeof(hdr.job), "%s", cfg->jobid);
    if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
        onic_warn("trace: cannot write the header of %s: %m; queues are not traced", path);
        close(fd);
        return ONIC_ERR_NO_RESOURCE;
    }
    snprintf(trace_file.dir, sizeof(trace_file.dir), "%s", dir);
    trace_file.fd = fd;
    trace_file.next_off = ONIC_TRACE_HDR_SIZE;
    onic_debug("trace: recording match operations in %s", path);
    return ONIC_OK;
}

/* Write the queue's buffered records at a place reserved in the file, and
 * the clock's measured rate into the header. A failure stops this queue's
 * records (said once); the operations themselves go on. */
static void trace_flush(match_tracer_t *t)
{
    size_t bytes = (size_t)((char *)t->cur - (char *)t->buf);
    uint64_t off, hz = 0, ns, ticks;
    ssize_t done;

    if (bytes == 0 || t->broken)
        return;
    pthread_mutex_lock(&trace_file.lock);
    off = trace_file.next_off;
    trace_file.next_off += bytes;
    ns = onic_time_ns() - trace_file.start_ns;
    ticks = trace_ticks() - trace_file.start_ticks;
    if (ns > 1000000)
        hz = (uint64_t)((double)ticks * 1e9 / (double)ns);
    pthread_mutex_unlock(&trace_file.lock);
    done = pwrite(trace_file.fd, t->buf, bytes, (off_t)off);
    if (hz != 0)
        (void)!pwrite(trace_file.fd, &hz, sizeof(hz), offsetof(onic_trace_hdr_t, tick_hz));
    if (done != (ssize_t)bytes) {
        onic_warn("trace: cannot write %zu bytes of queue %u's records in %s: %s; it records "
                  "no more", bytes, t->queue, trace_file.dir, done < 0 ? strerror(errno) :
                  "short write");
        t->broken = 1;
    }
    t->cur = t->buf;
}

static __attribute__((noinline)) int trace_full(match_tracer_t *t)
{
    trace_flush(t);
    return !t->broken;
}

/* Fill one record; the op byte goes last, so a reader of a killed process's
 * file sees each record whole or not at all. */
static inline void trace_put(match_tracer_t *t, unsigned op, unsigned flags, unsigned pos,
                             onic_mkey_t key, onic_mkey_t ignore, const void *entry,
                             uint64_t aux)
{
    onic_trace_rec_t *r;

    if (__builtin_expect(t->cur == t->end, 0) && !trace_full(t))
        return;
    r = t->cur++;
    r->kind   = t->kind;
    r->flags  = (uint8_t)flags;
    r->pos    = (uint8_t)pos;
    r->queue  = t->queue;
    r->time   = trace_ticks() - t->start_ticks;
    r->key    = key;
    r->ignore = ignore;
    r->entry  = (uint64_t)(uintptr_t)entry;
    r->aux    = aux;
    r->op     = (uint8_t)op;
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
                                        onic_match_accept_t accept, void *arg, int *remove)
{
    match_tracer_t *t = trace_of(m);
    uint64_t before = m->stats.inspected;
    onic_mentry_t *e = t->real->find_accept(m, key, ignore, accept, arg, remove);

    /* *remove: also when accept took the entry as its last use. */
    trace_put(t, *remove ? ONIC_TRACE_OP_MATCH : ONIC_TRACE_OP_PEEK,
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
    trace_flush(t);
    pthread_mutex_lock(&trace_file.lock);
    onic_dlist_del(&t->link);
    if (--trace_file.refs == 0 && trace_file.fd >= 0) {
        close(trace_file.fd);
        trace_file.fd = -1;
    }
    pthread_mutex_unlock(&trace_file.lock);
    onic_free(t->buf);
    onic_free(t);
}

/* A process that exits without destroying its queues (an MPI program that
 * never finalizes) still leaves their buffered records. */
static void trace_atexit(void)
{
    pthread_mutex_lock(&trace_file.lock);
    for (onic_dlist_t *l = trace_file.tracers.next; l != NULL && l != &trace_file.tracers;
         l = l->next) {
        match_tracer_t *t = onic_container_of(l, match_tracer_t, link);
        pthread_mutex_unlock(&trace_file.lock);
        trace_flush(t);
        pthread_mutex_lock(&trace_file.lock);
    }
    pthread_mutex_unlock(&trace_file.lock);
}

void onic_match_trace_attach(onic_matcher_t *m, const char *dir)
{
    match_tracer_t *t = onic_calloc(1, sizeof(*t));
    onic_status_t status;

    if (t != NULL)
        t->buf = onic_malloc(TRACE_BUF_BYTES);
    if (t == NULL || t->buf == NULL) {
        onic_warn("trace: no memory to trace a %s queue; it is not traced", m->ops->name);
        onic_free(t);
        return;
    }
    pthread_mutex_lock(&trace_file.lock);
    status = trace_file_open(&m->cfg, dir, m->ops->name);
    if (status == ONIC_OK) {
        trace_file.refs++;
        t->queue = ++trace_file.queues;
        t->start_ticks = trace_file.start_ticks;
        if (trace_file.tracers.next == NULL)
            onic_dlist_init(&trace_file.tracers);
        onic_dlist_push_tail(&trace_file.tracers, &t->link);
        if (!trace_file.atexit_set)
            trace_file.atexit_set = atexit(trace_atexit) == 0;
    }
    pthread_mutex_unlock(&trace_file.lock);
    if (status != ONIC_OK) {
        onic_free(t->buf);
        onic_free(t);
        return;
    }
    t->cur = t->buf;
    t->end = t->buf + ONIC_TRACE_BUF_RECS;
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
