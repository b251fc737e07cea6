/* Writing match traces (format in trace.h). A traced matcher's ops table is
 * replaced by a copy whose append, insert, find, find_accept and remove
 * record each operation in the queue's buffer: the engine's own traced ops
 * where it has them (match/trace_rec.h), else the wrappers here, which call
 * the engine's plain op and encode one record. A full buffer is written as
 * one chunk with one pwrite at the file's end under the file's lock. An
 * untraced matcher never reaches this file.
 *
 * Why compact records in an anonymous buffer: version 1 wrote 64-byte
 * records, and the kernel's copy of them into the page cache (and the file
 * system's work behind it) cost most of tracing's 30 ns a record; a record
 * here takes 3 to 12 bytes. A shared mapping of the file would keep the
 * records of a killed process's unwritten buffers, but filling fresh pages
 * of one cost 60-130 ns of CPU per 64-byte record here (a page fault per
 * page), several times the write's cost per byte. Record times are the TSC
 * on x86-64 (a clock_gettime costs several times an rdtsc), read every
 * ONIC_TRACE_TIME_BYTES of records (onic_trace_rec_mark), its rate measured
 * against CLOCK_MONOTONIC at every write into the header. */
#include "match/trace.h"
#include "match/trace_rec.h"
#include "match/engine.h"
#include "base/clock.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_BUF_BYTES ((size_t)ONIC_TRACE_CHUNK_BYTES)

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
    hdr.chunk_hdr = ONIC_TRACE_CHUNK_HDR;
    hdr.rank = cfg->rank;
    hdr.size = cfg->size;
    hdr.pid  = (uint32_t)pid;
    trace_file.start_ns = hdr.start_ns = onic_time_ns();
    trace_file.start_ticks = onic_trace_ticks();
    clock_gettime(CLOCK_REALTIME, &rt);
    hdr.start_unix_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    snprintf(hdr.clock, sizeof(hdr.clock), "%s", ONIC_TRACE_CLOCK);
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

/* Start a new chunk in the buffer: every chunk decodes alone. */
static void trace_chunk_begin(onic_match_tracer_t *t)
{
    t->cur = t->buf + ONIC_TRACE_CHUNK_HDR;
    t->time_at = ONIC_TRACE_CHUNK_HDR;   /* the first record carries a time */
    t->mark = t->cur;
    t->nrecs = 0;
    t->chunk_kind = t->kind;
    t->prev_time = t->start_ticks;
    t->prev_entry = 0;
    memset(t->prev_key, 0, sizeof(t->prev_key));
    memset(t->prev_ign, 0, sizeof(t->prev_ign));
}

/* Write the queue's chunk at the file's end and the clock's measured rate
 * into the header, under the file's lock (so a chunk is never a hole between
 * two others, even if the process dies: at worst it is the file's last and
 * cut short). A failure stops this queue's records (said once); the
 * operations themselves go on. A forked child that has not opened its own
 * file drops what it inherited: the parent writes it. */
static void trace_flush_locked(onic_match_tracer_t *t)
{
    onic_trace_chunk_t ch;
    size_t bytes = (size_t)(t->cur - t->buf);
    uint64_t hz = 0, ns, ticks;
    ssize_t done;

    if (t->nrecs == 0 || t->broken || trace_file.fd < 0 || trace_file.pid != getpid()) {
        trace_chunk_begin(t);
        return;
    }
    memset(&ch, 0, sizeof(ch));
    ch.bytes = (uint32_t)bytes;
    ch.nrecs = t->nrecs;
    ch.queue = t->queue;
    ch.kind = t->chunk_kind;
    memcpy(t->buf, &ch, sizeof(ch));
    ns = onic_time_ns() - trace_file.start_ns;
    ticks = onic_trace_ticks() - trace_file.start_ticks;
    if (ns > 1000000)
        hz = (uint64_t)((double)ticks * 1e9 / (double)ns);
    done = pwrite(trace_file.fd, t->buf, bytes, (off_t)trace_file.next_off);
    if (done > 0)
        trace_file.next_off += (uint64_t)done;
    if (hz != 0)
        (void)!pwrite(trace_file.fd, &hz, sizeof(hz), offsetof(onic_trace_hdr_t, tick_hz));
    if (done != (ssize_t)bytes) {
        onic_warn("trace: cannot write %zu bytes of queue %u's records in %s: %s; it records "
                  "no more", bytes, t->queue, trace_file.dir, done < 0 ? strerror(errno) :
                  "short write");
        t->broken = 1;
    }
    trace_chunk_begin(t);
}

__attribute__((noinline, cold)) void onic_match_trace_flush(onic_match_tracer_t *t)
{
    pthread_mutex_lock(&trace_file.lock);
    trace_flush_locked(t);
    pthread_mutex_unlock(&trace_file.lock);
}

/* A full buffer, checked after each record (a record starts at most
 * ONIC_TRACE_REC_MAX bytes before the buffer's end): write it. These take
 * the rest of the operation along so that the hot paths call nothing but
 * the engine, as their last act where they can: no register is saved
 * around a call there. A queue whose writes failed goes on encoding into
 * its buffer, which each flush then empties unwritten. */
__attribute__((noinline, cold)) void onic_match_trace_full_append(onic_matcher_t *m,
                                                                  onic_mentry_t *e)
{
    onic_match_trace_flush(onic_match_tracer_of(m));
    onic_match_tracer_of(m)->real->append(m, e);
}

static __attribute__((noinline, cold)) void trace_full_remove(onic_matcher_t *m,
                                                              onic_mentry_t *e)
{
    onic_match_trace_flush(onic_match_tracer_of(m));
    onic_match_tracer_of(m)->real->remove(m, e);
}

static __attribute__((noinline, cold)) onic_mentry_t *trace_full_found(onic_match_tracer_t *t,
                                                                       onic_mentry_t *e)
{
    onic_match_trace_flush(t);
    return e;
}

#define TRACE_ENTRY(e) (e)->key.bits, (e)->key.id, (e)->ignore.bits, (e)->ignore.id

/* Appends and removals are recorded whole before the engine's call (they
 * cannot fail), which then ends the function: nothing is kept across it. */
static void trace_append(onic_matcher_t *m, onic_mentry_t *e)
{
    if (onic_trace_rec_entry(m, e, ONIC_TRACE_OP_APPEND))
        onic_match_trace_full_append(m, e);
    else
        onic_match_tracer_of(m)->real->append(m, e);
}

static onic_status_t trace_insert(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                                  int after)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);
    onic_status_t status = t->real->insert(m, e, anchor, after);
    unsigned pos = anchor == NULL ? ONIC_MATCH_HEAD : after ? ONIC_MATCH_AFTER : ONIC_MATCH_BEFORE;
    unsigned head;
    uint8_t *p;

    if (status == ONIC_OK) {
        p = onic_trace_rec_begin(t, 0, 0, TRACE_ENTRY(e), &head);
        if (onic_trace_rec_end(t, t->cur, p, head, ONIC_TRACE_OP_INSERT, 0, pos, (uint64_t)(uintptr_t)e,
                      (uint64_t)(uintptr_t)anchor))
            onic_match_trace_flush(t);
    }
    return status;
}

/* A lookup's first part goes into the buffer before the engine's call, its
 * first byte's bits so far in place, where the rest goes in t->next; the
 * rest after. An accept callback never works on the queue it is called
 * from (no engine allows that mid-walk), so nothing else writes this
 * queue's buffer between the two. */
static onic_mentry_t *trace_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                 int remove)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);
    uint64_t before = m->stats.inspected;
    uint64_t kb = key.bits, ki = key.id, ib = ignore.bits, ii = ignore.id;
    unsigned head;
    onic_mentry_t *e;
    int full;

    ONIC_TRACE_SCALARS(kb, ki, ib, ii);
    t->next = onic_trace_rec_begin(t, 0, 1, kb, ki, ib, ii, &head);
    t->cur[0] = (uint8_t)head;
    e = t->real->find(m, key, ignore, remove);
    t = onic_match_tracer_of(m);
    if (remove)   /* two copies, each with its operation's code only */
        full = onic_trace_rec_end(t, t->cur, t->next, t->cur[0], ONIC_TRACE_OP_MATCH,
                         e != NULL ? ONIC_TRACE_HIT : 0, 0, (uint64_t)(uintptr_t)e,
                         m->stats.inspected - before);
    else
        full = onic_trace_rec_end(t, t->cur, t->next, t->cur[0], ONIC_TRACE_OP_PEEK,
                         e != NULL ? ONIC_TRACE_HIT : 0, 0, (uint64_t)(uintptr_t)e,
                         m->stats.inspected - before);
    return full ? trace_full_found(t, e) : e;
}

static onic_mentry_t *trace_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                        onic_match_accept_t accept, void *arg, int *remove)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);
    uint64_t before = m->stats.inspected;
    uint64_t kb = key.bits, ki = key.id, ib = ignore.bits, ii = ignore.id;
    unsigned head, flags;
    onic_mentry_t *e;
    int full;

    ONIC_TRACE_SCALARS(kb, ki, ib, ii);
    t->next = onic_trace_rec_begin(t, 0, 1, kb, ki, ib, ii, &head);
    t->cur[0] = (uint8_t)head;
    e = t->real->find_accept(m, key, ignore, accept, arg, remove);
    t = onic_match_tracer_of(m);
    flags = ONIC_TRACE_ACCEPT | (e != NULL ? ONIC_TRACE_HIT : 0);
    /* *remove: also when accept took the entry as its last use. */
    if (*remove)
        full = onic_trace_rec_end(t, t->cur, t->next, t->cur[0], ONIC_TRACE_OP_MATCH, flags, 0,
                         (uint64_t)(uintptr_t)e, m->stats.inspected - before);
    else
        full = onic_trace_rec_end(t, t->cur, t->next, t->cur[0], ONIC_TRACE_OP_PEEK, flags, 0,
                         (uint64_t)(uintptr_t)e, m->stats.inspected - before);
    return full ? trace_full_found(t, e) : e;
}

static void trace_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    if (onic_trace_rec_entry(m, e, ONIC_TRACE_OP_REMOVE))
        trace_full_remove(m, e);
    else
        onic_match_tracer_of(m)->real->remove(m, e);
}

/* The label record: kind and index, and the engine's name in the ignore
 * words (16 bytes). */
static void trace_put_label(onic_match_tracer_t *t, uint32_t index)
{
    onic_mkey_t key = {index, 0}, name = {0, 0};
    size_t len = strlen(t->real->name);

    unsigned head;
    uint8_t *p;

    memcpy(&name, t->real->name, len < sizeof(name) ? len : sizeof(name));
    p = onic_trace_rec_begin(t, 1, 0, key.bits, key.id, name.bits, name.id, &head);
    if (onic_trace_rec_end(t, t->cur, p, head, ONIC_TRACE_OP_LABEL, 0, 0, 0, 0))
        onic_match_trace_flush(t);
}

static void trace_fini(onic_matcher_t *m)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);

    t->real->fini(m);
    pthread_mutex_lock(&trace_file.lock);
    trace_flush_locked(t);
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
         l = l->next)
        trace_flush_locked(onic_container_of(l, onic_match_tracer_t, link));
    pthread_mutex_unlock(&trace_file.lock);
}

int onic_match_trace_attach(onic_matcher_t *m, const char *dir)
{
    onic_match_tracer_t *t = onic_calloc(1, sizeof(*t));
    const onic_match_ops_t *own;
    onic_status_t status;

    if (t != NULL)
        t->buf = onic_malloc(TRACE_BUF_BYTES);
    if (t == NULL || t->buf == NULL) {
        onic_warn("trace: no memory to trace a %s queue; it is not traced", m->ops->name);
        onic_free(t);
        return 0;
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
        return 0;
    }
    t->lim = t->buf + TRACE_BUF_BYTES - ONIC_TRACE_REC_MAX;
    t->kind = ONIC_MATCH_QUEUE_OTHER;
    trace_chunk_begin(t);
    t->real = m->ops;
    t->ops = *m->ops;
    t->ops.traced = NULL;
    /* The engine's own recording ops where it has them, these wrappers for
     * the rest. */
    own = m->ops->traced;
    t->ops.append = own != NULL && own->append != NULL ? own->append : trace_append;
    t->ops.insert = own != NULL && own->insert != NULL ? own->insert : trace_insert;
    t->ops.find = own != NULL && own->find != NULL ? own->find : trace_find;
    t->ops.find_accept = own != NULL && own->find_accept != NULL ? own->find_accept :
                         trace_find_accept;
    t->ops.remove = own != NULL && own->remove != NULL ? own->remove : trace_remove;
    t->ops.fini        = trace_fini;
    m->ops = &t->ops;
    trace_put_label(t, UINT32_MAX);
    return 1;
}

void onic_match_trace_label(onic_matcher_t *m, unsigned kind, uint32_t index)
{
    onic_match_tracer_t *t;

    if (m == NULL || m->ops->fini != trace_fini)
        return;
    t = onic_match_tracer_of(m);
    t->kind = (uint8_t)(kind < ONIC_TRACE_QUEUE_KINDS ? kind : ONIC_MATCH_QUEUE_OTHER);
    trace_put_label(t, index);
}
