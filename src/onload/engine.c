/* The onload engine's process: its status segment and its main loop. */
#include "onload/engine.h"
#include "onload/proto.h"
#include "base/clock.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/proc.h"
#include "base/shmfd.h"
#include "onload/ring.h"
#include "xport/cma.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The engine's heartbeat period, and so its longest sleep. */
#define ENGINE_TICK_NS 100000000ull

onic_status_t onic_onload_status_read(int fd, onic_onload_status_t *status_p)
{
    onic_onload_status_t copy;
    const onic_onload_status_t *s;
    struct stat st;

    if (fd < 0 || status_p == NULL)
        return ONIC_ERR_INVALID_PARAM;
    if (fd == 0)
        return ONIC_ERR_NO_ELEM;
    if (fstat(fd, &st) != 0 || st.st_size != (off_t)sizeof(*s))
        return ONIC_ERR_IO;
    s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED)
        return ONIC_ERR_IO;
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != ONIC_ONLOAD_STATUS_MAGIC) {
        munmap((void *)s, sizeof(*s));
        return ONIC_ERR_NO_ELEM; /* not published yet */
    }
    memcpy(&copy, s, sizeof(copy));
    copy.state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    munmap((void *)s, sizeof(*s));
    if (copy.version != ONIC_ONLOAD_STATUS_VERSION || copy.pid <= 0 ||
        copy.state > ONIC_ONLOAD_STOPPED)
        return ONIC_ERR_IO;
    *status_p = copy;
    return ONIC_OK;
}

int onic_onload_status_alive(const onic_onload_status_t *status)
{
    return status->state == ONIC_ONLOAD_READY &&
           onic_proc_alive((pid_t)status->pid);
}

static long engine_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* Whether one of the signals the caller blocked asks us to stop. */
static int engine_stop_requested(void)
{
    static const struct timespec zero = {0, 0};
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return sigtimedwait(&set, NULL, &zero) > 0;
}

static void engine_move_end(engine_t *e, engine_move_t *m, onic_status_t status);

static void engine_proc_detach(engine_t *e, engine_proc_t *p, int refuse)
{
    /* A pull waiting on this process's copies will not get them. */
    if (p->area_move >= 0)
        engine_move_end(e, &e->moves[p->area_move], ONIC_ERR_IO);
    p->area_move = -1;
    onload_serve_detach(e, p);
    munmap(p->map, p->bytes);
    p->map = NULL;
    memset(p->regs, 0, sizeof(p->regs)); /* a later incarnation starts afresh */
    p->state = refuse ? ENGINE_PROC_DONE : ENGINE_PROC_NONE;
    e->attached--;
    e->done += refuse != 0;
    __atomic_store_n(&e->status->refused, e->done, __ATOMIC_RELAXED);
    __atomic_store_n(&e->status->procs, e->attached, __ATOMIC_RELAXED);
}

/* Map the segment rank's process handed us, if any yet, check it, and
 * welcome the process. A segment that does not check out is refused for
 * good: its process times out waiting for WELCOME and says so. */
static void engine_proc_attach(engine_t *e, uint32_t rank)
{
    engine_proc_t *p = &e->procs[rank];
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_proc_hdr_t h;
    struct stat st;
    void *map;
    int fd = p->handed;

    if (fd < 0)
        return; /* not handed yet */
    p->handed = -1;
    snprintf(name, sizeof(name), "the segment of rank %u", rank);
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(h) ||
        onic_shmfd_check(fd, (size_t)st.st_size, name) != ONIC_OK) {
        onic_error("onload: %s (handed by pid %d) is not a segment; not serving it", name,
                   (int)p->handed_pid);
        close(fd);
        p->state = ENGINE_PROC_DONE;
        e->done++;
        __atomic_store_n(&e->status->refused, e->done, __ATOMIC_RELAXED);
        return;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        onic_error("onload: cannot map %s (%lld bytes): %m", name, (long long)st.st_size);
        p->state = ENGINE_PROC_DONE;
        e->done++;
        __atomic_store_n(&e->status->refused, e->done, __ATOMIC_RELAXED);
        return;
    }
    memcpy(&h, map, sizeof(h)); /* once: checked, then used */
    if (h.magic != ONIC_ONLOAD_PROC_MAGIC)
        h.version = 0; /* not published before it was handed: refused below */
    p->area_move = -1; /* before anything can detach it */
    p->data_mark = 0;  /* its new event ring starts at 0 */
    p->map = map;
    p->bytes = (size_t)st.st_size;
    e->attached++;
    p->state = ENGINE_PROC_ATTACHED;
    __atomic_store_n(&e->status->procs, e->attached, __ATOMIC_RELAXED);
    p->gen = ++e->seen;
    __atomic_store_n(&e->status->procs_seen, e->seen, __ATOMIC_RELAXED);
    if (h.version != ONIC_ONLOAD_STATUS_VERSION || h.rank != rank || h.pid <= 0 ||
        h.pid != p->handed_pid ||
        h.cmd_off < sizeof(h) || h.cmd_off > p->bytes || h.cmd_bytes > p->bytes - h.cmd_off ||
        h.evt_off < sizeof(h) || h.evt_off > p->bytes || h.evt_bytes > p->bytes - h.evt_off ||
        h.cmd_off % 64 != 0 || h.evt_off % 64 != 0 ||
        (h.cmd_off < h.evt_off ? h.cmd_off + h.cmd_bytes > h.evt_off
                               : h.evt_off + h.evt_bytes > h.cmd_off) ||
        h.bounce_off % 64 != 0 || h.bounce_off > p->bytes ||
        p->bytes - h.bounce_off < ONIC_ONLOAD_BOUNCE ||
        h.bounce_off < h.cmd_off + h.cmd_bytes || h.bounce_off < h.evt_off + h.evt_bytes) {
        onic_error("onload: %s: header of version %u for rank %u, pid %d (handed by pid %d) "
                   "does not describe the segment (%zu bytes); not serving it", name, h.version,
                   h.rank, (int)h.pid, (int)p->handed_pid, p->bytes);
        engine_proc_detach(e, p, 1);
        return;
    }
    if (onic_onload_ring_attach((uint8_t *)map + h.cmd_off, h.cmd_bytes, &p->cmd) != ONIC_OK ||
        onic_onload_ring_attach((uint8_t *)map + h.evt_off, h.evt_bytes, &p->evt) != ONIC_OK ||
        p->cmd.rec_size != ONIC_ONLOAD_REC || p->evt.rec_size != ONIC_ONLOAD_REC) {
        onic_error("onload: %s: its rings are not of this engine's version and record size; "
                   "not serving rank %u", name, rank);
        engine_proc_detach(e, p, 1);
        return;
    }
    {
        char what[64];
        snprintf(what, sizeof(what), "the command ring of rank %u, seen by the engine", rank);
        onic_onload_ring_fail_stop(&p->cmd, what);
        snprintf(what, sizeof(what), "the event ring of rank %u, seen by the engine", rank);
        onic_onload_ring_fail_stop(&p->evt, what);
    }
    p->pid = (pid_t)h.pid;
    p->answer = (onic_onload_answer_t *)((uint8_t *)map + h.bounce_off);
    p->bounce = (uint8_t *)(p->answer + 1);
    p->area_seq = __atomic_load_n(&p->answer->seq, __ATOMIC_RELAXED);
    /* Read the header back from the process itself: proves the pid (pid
     * namespaces, a stale segment) and that the kernel lets us use CMA. */
    {
        onic_onload_proc_hdr_t back;
        p->cma = h.self_addr != 0 &&
                 onic_xport_cma_read(p->pid, &back, h.self_addr, sizeof(back)) == ONIC_OK &&
                 memcmp(&back, &h, sizeof(h)) == 0;
        if (h.self_addr == 0)
            onic_debug("onload: rank %u asks for copies through its bounce area "
                       "(ONIC_ONLOAD_RMA=copy)", rank);
        else if (!p->cma)
            onic_info("onload: cannot reach rank %u (pid %d) by cross-memory attach; its "
                      "data goes through its bounce area, copied in its own calls", rank,
                      (int)p->pid);
    }
    /* The event ring is empty: WELCOME always fits. */
    onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_WELCOME, NULL, 0);
    onic_debug("onload: serving rank %u (pid %d)", rank, (int)p->pid);
}

/* A process that died without BYE: stop serving it (its pulls in progress
 * then fail at their next chunk, and their news to it is skipped). */
static void engine_reap_dead(engine_t *e)
{
    for (uint32_t r = 0; r < e->nprocs; r++) {
        engine_proc_t *p = &e->procs[r];
        if (p->state == ENGINE_PROC_ATTACHED && !onic_proc_alive(p->pid)) { /* zombies too */
            onic_debug("onload: rank %u (pid %d) is gone", r, (int)p->pid);
            engine_proc_detach(e, p, 0);
        }
    }
}

/* Take what the processes handed over the socket: one message each,
 * {ONIC_ONLOAD_PROC_MAGIC, rank} with the segment's descriptor, and the
 * sender's credentials as the kernel saw them. Only the job's processes
 * hold the socket's other end (onicrun gave it to them); a message that
 * makes no sense is dropped and said. */
static void engine_take_handed(engine_t *e)
{
    for (;;) {
        uint32_t m[2];
        struct ucred cred;
        size_t len = 0;
        unsigned nfd = 0;
        int fd = -1;
        onic_status_t st =
            onic_shmfd_recv(e->sock, m, sizeof(m), &len, &fd, 1, &nfd, &cred);
        if (st == ONIC_ERR_NO_ELEM)
            return;
        if (st != ONIC_OK || len != sizeof(m) || nfd != 1 || m[0] != ONIC_ONLOAD_PROC_MAGIC ||
            m[1] >= e->nprocs || cred.uid != geteuid()) {
            onic_error("onload: dropped a segment handed by pid %d: %s", st == ONIC_OK ?
                       (int)cred.pid : -1, st != ONIC_OK ? "malformed message" :
                       "not a rank of this job, or not its user");
            if (nfd == 1)
                close(fd);
            if (st == ONIC_ERR_IO)
                return;
            continue;
        }
        if (e->procs[m[1]].handed >= 0)
            close(e->procs[m[1]].handed); /* an earlier one, never attached */
        e->procs[m[1]].handed = fd;
        e->procs[m[1]].handed_pid = cred.pid;
    }
}

static void engine_attach_scan(engine_t *e)
{
    engine_take_handed(e);
    for (uint32_t r = 0; r < e->nprocs && e->attached + e->done < e->nprocs; r++)
        if (e->procs[r].state == ENGINE_PROC_NONE)
            engine_proc_attach(e, r);
}

#define ENGINE_BATCH 64

static engine_reg_t *engine_reg_find(engine_proc_t *p, uint64_t id)
{
    for (unsigned i = 0; i < ONIC_ONLOAD_REGS; i++)
        if (p->regs[i].used && p->regs[i].id == id)
            return &p->regs[i];
    return NULL;
}

static void engine_tell(engine_proc_t *p, uint32_t kind, uint64_t cookie, uint64_t len,
                        onic_status_t status, uint32_t peer)
{
    onic_onload_done_t d = {cookie, len, (int32_t)status, peer};

    /* The caller made sure of room. */
    onic_onload_ring_push(&p->evt, kind, &d, sizeof(d));
}

/* REG and DEREG: answered only when they fail. */
static void engine_reg_cmd(engine_proc_t *p, uint32_t kind, const onic_onload_reg_t *r)
{
    engine_reg_t *reg = engine_reg_find(p, r->id);
    onic_status_t status = ONIC_OK;

    if (kind == ONIC_ONLOAD_CMD_DEREG) {
        if (reg == NULL)
            status = ONIC_ERR_NO_ELEM;
        else
            reg->used = 0;
    } else if (reg != NULL || r->addr + r->len < r->addr) {
        status = ONIC_ERR_INVALID_PARAM;
    } else {
        status = ONIC_ERR_NO_RESOURCE;
        for (unsigned i = 0; i < ONIC_ONLOAD_REGS && status != ONIC_OK; i++) {
            if (!p->regs[i].used) {
                p->regs[i] = (engine_reg_t){1, r->id, r->addr, r->len};
                status = ONIC_OK;
            }
        }
    }
    if (status != ONIC_OK)
        engine_tell(p, ONIC_ONLOAD_EVT_ERROR, r->id, 0, status, 0);
}

/* PULL: checked against the owner's registration, then queued; a pull that
 * cannot be done is answered at once. */
static void engine_pull_cmd(engine_t *e, uint32_t dst, const onic_onload_pull_t *pl)
{
    engine_proc_t *p = &e->procs[dst], *src;
    engine_reg_t *reg;
    onic_status_t status = ONIC_OK;

    if (pl->src >= e->nprocs || e->procs[pl->src].state != ENGINE_PROC_ATTACHED) {
        status = ONIC_ERR_NO_ELEM;
    } else {
        src = &e->procs[pl->src];
        reg = engine_reg_find(src, pl->reg_id);
        if (reg == NULL)
            status = ONIC_ERR_NO_ELEM;
        else if (pl->offset > reg->len || pl->len > reg->len - pl->offset ||
                 pl->dst_addr + pl->len < pl->dst_addr)
            status = ONIC_ERR_INVALID_PARAM;
        if (status == ONIC_OK) {
            for (unsigned i = 0; i < ONIC_ONLOAD_MOVES; i++) {
                engine_move_t *m = &e->moves[i];
                if (m->phase != ENGINE_MOVE_FREE)
                    continue;
                *m = (engine_move_t){ENGINE_MOVE_COPY, dst, pl->src, p->pid, src->pid, p->gen,
                                     src->gen, reg->addr + pl->offset, pl->dst_addr, pl->len,
                                     0, pl->cookie, pl->reg_id, ONIC_OK,
                                     ENGINE_CHUNK_START, 0, NULL, 0, 0, NULL};
                e->nmoves++;
                return;
            }
            status = ONIC_ERR_NO_RESOURCE; /* all busy: the puller retries */
        }
    }
    engine_tell(p, ONIC_ONLOAD_EVT_PULLED, pl->cookie, 0, status, pl->src);
}

static int engine_move_alive(const engine_t *e, const engine_move_t *m)
{
    const engine_proc_t *src = &e->procs[m->src], *dst = &e->procs[m->dst];

    return src->state == ENGINE_PROC_ATTACHED && src->gen == m->src_gen &&
           dst->state == ENGINE_PROC_ATTACHED && dst->gen == m->dst_gen;
}

/* Stop moving (done or failed): free the bounce areas it held, tell. */
static void engine_move_end(engine_t *e, engine_move_t *m, onic_status_t status)
{
    int i = (int)(m - e->moves);

    if (m->phase != ENGINE_MOVE_COPY) /* only a move still copying can end */
        return;

    if (e->procs[m->src].area_move == i)
        e->procs[m->src].area_move = -1;
    if (e->procs[m->dst].area_move == i)
        e->procs[m->dst].area_move = -1;
    m->status = status;
    m->phase = m->ctx != NULL ? ENGINE_MOVE_PTL_DONE : ENGINE_MOVE_TELL_DST;
    onic_free(m->held);
    m->held = NULL;
}

static void engine_chunk_done(engine_t *e, engine_move_t *m, onic_status_t status)
{
    if (status != ONIC_OK) {
        engine_move_end(e, m, status);
        return;
    }
    m->done += m->n;
    __atomic_fetch_add(&e->status->bytes, m->n, __ATOMIC_RELAXED);
    m->sub = ENGINE_CHUNK_START;
    if (m->done == m->len)
        engine_move_end(e, m, ONIC_OK);
}

/* The process's answer to the copy asked of it: ONIC_INPROGRESS while
 * there is none, else its status (anything unknown is an error). */
static onic_status_t engine_area_answer(engine_proc_t *p, int order)
{
    int32_t st;

    if (__atomic_load_n(&p->answer->seq, order) != p->area_seq)
        return ONIC_INPROGRESS;
    st = __atomic_load_n(&p->answer->status, __ATOMIC_RELAXED);
    return st == ONIC_OK ? ONIC_OK : st < 0 && st > ONIC_ERR_LAST ? (onic_status_t)st
                                                                  : ONIC_ERR_IO;
}

/* Ask p to copy (FILL into its area, DRAIN out of it); its area is ours. */
static void engine_area_ask(engine_proc_t *p, int i, uint32_t kind, uint64_t addr, size_t n)
{
    onic_onload_copy_t cp = {addr, n, ++p->area_seq};

    p->area_move = i;
    /* The caller made sure of room. */
    onic_onload_ring_push(&p->evt, kind, &cp, sizeof(cp));
}

/* The next steps of a pull's current chunk. With CMA on both sides a chunk
 * is two copies through the engine (CMA joins the caller with one other
 * process); without it on a side, that side's process copies through its
 * bounce area when the engine asks (FILL, DRAIN) and answers in the area.
 * Returns 1 if it moved. */
static unsigned engine_move_step(engine_t *e, engine_move_t *m, int i, int *blocked_p)
{
    engine_proc_t *src = &e->procs[m->src], *dst = &e->procs[m->dst];
    onic_status_t st = ONIC_OK;

    if (!engine_move_alive(e, m)) {
        engine_move_end(e, m, ONIC_ERR_IO);
        return 1;
    }
    switch (m->sub) {
    case ENGINE_CHUNK_START:
        /* DATA records a process has not applied yet would be undone, or
         * missed, by a copy into or out of its memory now: wait for them. */
        if ((src->cma && onload_serve_data_pending(src)) ||
            (dst->cma && onload_serve_data_pending(dst))) {
            *blocked_p = 1;
            return 0;
        }
        m->n = m->len - m->done < ONIC_ONLOAD_CHUNK ? (size_t)(m->len - m->done)
                                                    : ONIC_ONLOAD_CHUNK;
        if (m->n == 0) { /* an empty pull */
            engine_move_end(e, m, ONIC_OK);
            return 1;
        }
        if (src->cma) {
            m->sub = ENGINE_CHUNK_HAVE_SRC; /* CMA reads it when it moves on */
            return engine_move_step(e, m, i, blocked_p) | 1u;
        }
        if (src->area_move >= 0)
            return 0; /* in use; its user's answer rings us */
        if (onic_onload_ring_room(&src->evt) == 0) {
            *blocked_p = 1;
            return 0;
        }
        engine_area_ask(src, i, ONIC_ONLOAD_EVT_FILL, m->src_addr + m->done, m->n);
        m->sub = ENGINE_CHUNK_WAIT_FILL;
        return 1;
    case ENGINE_CHUNK_WAIT_FILL:
        st = engine_area_answer(src, __ATOMIC_ACQUIRE);
        if (st == ONIC_INPROGRESS)
            return 0;
        if (st != ONIC_OK) {
            engine_move_end(e, m, st);
            return 1;
        }
        m->sub = ENGINE_CHUNK_HAVE_SRC;
        return engine_move_step(e, m, i, blocked_p) | 1u;
    case ENGINE_CHUNK_HAVE_SRC:
        if (dst->cma) {
            if (src->cma) {
                st = onic_xport_cma_read(m->src_pid, e->chunk, m->src_addr + m->done, m->n);
                if (st == ONIC_OK)
                    st = onic_xport_cma_write(m->dst_pid, e->chunk, m->dst_addr + m->done, m->n);
            } else {
                st = onic_xport_cma_write(m->dst_pid, src->bounce, m->dst_addr + m->done, m->n);
                src->area_move = -1;
            }
            engine_chunk_done(e, m, st);
            return 1;
        }
        /* Into the puller's area; a process pulling from itself without
         * CMA has the chunk there already. While another move holds the
         * puller's area, keep the chunk here and free the owner's: two
         * moves each holding one area and waiting for the other's would
         * wait for ever. */
        if (dst->area_move >= 0 && dst->area_move != i) {
            if (!src->cma && src != dst && src->area_move == i && m->held == NULL &&
                (m->held = onic_malloc(m->n)) != NULL) {
                onic_copy(m->held, src->bounce, m->n);
                src->area_move = -1;
                return 1;
            }
            return 0;
        }
        if (onic_onload_ring_room(&dst->evt) == 0) {
            *blocked_p = 1;
            return 0;
        }
        if (m->held != NULL) {
            memcpy(dst->bounce, m->held, m->n);
            onic_free(m->held);
            m->held = NULL;
        } else if (src->cma) {
            st = onic_xport_cma_read(m->src_pid, dst->bounce, m->src_addr + m->done, m->n);
        } else if (src != dst) {
            onic_copy(dst->bounce, src->bounce, m->n);
        }
        if (src != dst && src->area_move == i)
            src->area_move = -1;
        if (st != ONIC_OK) {
            engine_move_end(e, m, st);
            return 1;
        }
        engine_area_ask(dst, i, ONIC_ONLOAD_EVT_DRAIN, m->dst_addr + m->done, m->n);
        m->sub = ENGINE_CHUNK_WAIT_DRAIN;
        return 1;
    default: /* ENGINE_CHUNK_WAIT_DRAIN */
        st = engine_area_answer(dst, __ATOMIC_ACQUIRE);
        if (st == ONIC_INPROGRESS)
            return 0;
        dst->area_move = -1;
        engine_chunk_done(e, m, st);
        return 1;
    }
}

/* Take a free mover for a Portals interface's RMA; 0 if all are busy. */
static int engine_move_take(engine_t *e, const onload_rma_t *w)
{
    for (unsigned i = 0; i < ONIC_ONLOAD_MOVES; i++) {
        engine_move_t *m = &e->moves[i];
        if (m->phase != ENGINE_MOVE_FREE)
            continue;
        memset(m, 0, sizeof(*m));
        m->phase = ENGINE_MOVE_COPY;
        m->src = w->src;
        m->dst = w->dst;
        m->src_pid = e->procs[w->src].pid;
        m->dst_pid = e->procs[w->dst].pid;
        /* The incarnations it was asked for: one since gone fails it. */
        m->src_gen = w->src_gen;
        m->dst_gen = w->dst_gen;
        m->src_addr = w->src_addr;
        m->dst_addr = w->dst_addr;
        m->len = w->len;
        m->sub = ENGINE_CHUNK_START;
        m->owner = w->owner;
        m->owner_gen = w->owner_gen;
        m->ctx = w->ctx;
        e->nmoves++;
        return 1;
    }
    return 0;
}

void onload_engine_move_ptl(engine_t *e, uint32_t owner, uint32_t src, uint64_t src_addr,
                            uint32_t dst, uint64_t dst_addr, uint64_t len, void *ctx)
{
    onload_rma_t r = {NULL, owner, src, dst, src_addr, dst_addr, len, ctx,
                      e->procs[owner].ni_gen, e->procs[src].gen, e->procs[dst].gen};
    onload_rma_t *w;

    if (e->rma_wait == NULL && engine_move_take(e, &r))
        return;
    /* All movers busy: wait, in order, for one (the target side's ctx stays
     * valid until its completion). */
    w = onic_malloc(sizeof(*w));
    if (w == NULL) {
        engine_proc_t *o = &e->procs[owner];
        onic_error("onload: no memory to queue a transfer for rank %u; it fails", owner);
        if (o->ni != NULL) {
            onic_ptl_ni_t *old = onic_ptl_ni_select(o->ni);
            onic_ptl_ni_rma_done(o->ni, ctx, ONIC_ERR_NO_MEMORY);
            onic_ptl_ni_select(old);
        }
        return;
    }
    *w = r;
    if (e->rma_wait_tail != NULL)
        e->rma_wait_tail->next = w;
    else
        e->rma_wait = w;
    e->rma_wait_tail = w;
}

/* One chunk of every pull, and the news of finished ones where there is
 * room for it. Returns the steps taken; sets *blocked_p when news waits. */
static unsigned engine_moves_progress(engine_t *e, int *blocked_p)
{
    unsigned work = 0;

    for (unsigned i = 0; i < ONIC_ONLOAD_MOVES && e->nmoves > 0; i++) {
        engine_move_t *m = &e->moves[i];
        engine_proc_t *dst = &e->procs[m->dst], *src = &e->procs[m->src];

        if (m->phase == ENGINE_MOVE_COPY)
            work += engine_move_step(e, m, (int)i, blocked_p);
        if (m->phase == ENGINE_MOVE_PTL_DONE) {
            if (onload_serve_rma_done(e, m)) {
                m->phase = ENGINE_MOVE_FREE;
                e->nmoves--;
                work++;
            } else {
                *blocked_p = 1;
            }
            continue;
        }
        if (m->phase == ENGINE_MOVE_TELL_DST) {
            if (dst->state != ENGINE_PROC_ATTACHED || dst->gen != m->dst_gen) {
                m->phase = ENGINE_MOVE_TELL_SRC;
            } else if (onic_onload_ring_room(&dst->evt) > 0) {
                engine_tell(dst, ONIC_ONLOAD_EVT_PULLED, m->cookie, m->done, m->status, m->src);
                m->phase = ENGINE_MOVE_TELL_SRC;
                work++;
            } else {
                *blocked_p = 1;
            }
        }
        if (m->phase == ENGINE_MOVE_TELL_SRC) {
            if (src->state != ENGINE_PROC_ATTACHED || src->gen != m->src_gen) {
                m->phase = ENGINE_MOVE_FREE;
            } else if (onic_onload_ring_room(&src->evt) > 0) {
                engine_tell(src, ONIC_ONLOAD_EVT_READ, m->reg_id, m->done, m->status, m->dst);
                m->phase = ENGINE_MOVE_FREE;
                work++;
            } else {
                *blocked_p = 1;
            }
            if (m->phase == ENGINE_MOVE_FREE)
                e->nmoves--;
        }
    }
    while (e->rma_wait != NULL) {
        onload_rma_t *w = e->rma_wait;
        if (!engine_move_take(e, w))
            break;
        e->rma_wait = w->next;
        if (e->rma_wait == NULL)
            e->rma_wait_tail = NULL;
        onic_free(w);
        work++;
    }
    return work;
}

/* Take up to ENGINE_BATCH commands of one process, each only while its
 * answer has room (a full event ring holds the work, never drops it).
 * Returns the commands taken; sets *blocked_p if some wait for room. */
static unsigned engine_proc_serve(engine_t *e, uint32_t rank, int *blocked_p)
{
    engine_proc_t *p = &e->procs[rank];
    uint8_t *buf = e->cmdbuf;
    unsigned n = 0;

    while (n < ENGINE_BATCH) {
        uint32_t kind;
        size_t len;
        onic_status_t st;

        /* Room for all any command may write back (a Portals call: its
         * answer, events and news). */
        if (onic_onload_ring_room(&p->evt) <
            (onload_serve_active(p) ? ONIC_ONLOAD_EVT_NEED(p->evt.rec_size) : 1)) {
            if (onic_onload_ring_count(&p->cmd) > 0 || p->parked_len > 0)
                *blocked_p = 1;
            break;
        }
        /* A put or get waits, parked, while too much mail waits; the
         * commands behind it wait with it (order), others' do not. */
        if (p->parked_len > 0) {
            if (!onload_serve_may_take(e)) {
                *blocked_p = 1;
                break;
            }
            onload_serve_call(e, p, p->parked, p->parked_len);
            p->parked_len = 0;
            n++;
            continue;
        }
        st = onic_onload_ring_pop(&p->cmd, &kind, buf, ONIC_ONLOAD_MSG_MAX, &len);
        if (st == ONIC_ERR_NO_ELEM)
            break;
        if (st != ONIC_OK) { /* not corruption (that stops the job in the ring) */
            engine_proc_detach(e, p, 1);
            break;
        }
        n++;
        if (kind == ONIC_ONLOAD_CMD_PTL && !onload_serve_may_take(e) &&
            onload_serve_sends(buf, len)) {
            if (p->parked == NULL && (p->parked = onic_malloc(ONIC_ONLOAD_MSG_MAX)) == NULL) {
                onic_error("onload: no memory to hold a command of rank %u; not serving it "
                           "any more", rank);
                engine_proc_detach(e, p, 1);
                break;
            }
            memcpy(p->parked, buf, len);
            p->parked_len = len;
            *blocked_p = 1;
            break;
        } else if (kind == ONIC_ONLOAD_CMD_PTL) {
            onload_serve_call(e, p, buf, len);
        } else if (kind == ONIC_ONLOAD_CMD_PING) {
            onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_PONG, buf, len);
        } else if ((kind == ONIC_ONLOAD_CMD_REG || kind == ONIC_ONLOAD_CMD_DEREG) &&
                   len == sizeof(onic_onload_reg_t)) {
            onic_onload_reg_t r;
            memcpy(&r, buf, sizeof(r));
            engine_reg_cmd(p, kind, &r);
        } else if (kind == ONIC_ONLOAD_CMD_PULL && len == sizeof(onic_onload_pull_t)) {
            onic_onload_pull_t pl;
            memcpy(&pl, buf, sizeof(pl));
            engine_pull_cmd(e, rank, &pl);
        } else if (kind == ONIC_ONLOAD_CMD_BYE) {
            engine_proc_detach(e, p, 0);
            break;
        } else {
            onic_error("onload: command %u of %zu bytes from pid %d makes no sense; not serving "
                       "it any more", kind, len, (int)p->pid);
            engine_proc_detach(e, p, 1);
            break;
        }
    }
    return n;
}

/* Nothing to do: sleep on the bell until a process rings it or the next
 * tick. Processes store their ring's tail and then load `sleeping`; we
 * store `sleeping` and then re-read every tail (all seq_cst), so either we
 * see their command or they see us asleep and wake us. When work waits
 * for room in an event ring, sleep only briefly: the process makes room
 * without ringing. */
static void engine_sleep(engine_t *e, int blocked)
{
    onic_onload_status_t *s = e->status;
    struct timespec ts = {0, blocked ? 200000 : (long)ENGINE_TICK_NS};
    uint32_t seq = __atomic_load_n(&s->wake, __ATOMIC_ACQUIRE);
    int pending = 0;

    __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
    for (uint32_t r = 0; r < e->nprocs && !pending && !blocked; r++)
        pending = e->procs[r].state == ENGINE_PROC_ATTACHED &&
                  (onic_onload_ring_pending(&e->procs[r].cmd) ||
                   (e->procs[r].area_move >= 0 &&
                    engine_area_answer(&e->procs[r], __ATOMIC_SEQ_CST) != ONIC_INPROGRESS));
    if (!pending)
        engine_futex(&s->wake, FUTEX_WAIT, seq, &ts);
    __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
}

#define ENGINE_YIELDS 16

static void engine_loop(engine_t *e)
{
    /* Sharing the processes' cores (ONIC_WAIT), an idle engine that spun
     * would hold the core a process needs to send it work. */
    uint64_t spin_ns = onic_config_wait_sleeps(e->cfg, e->nprocs + 1)
                           ? 0 : (uint64_t)e->cfg->wait_spin_us * 1000u;
    uint64_t idle_since = 0, last_beat = 0;
    unsigned yields = 0;
    int scan = 1;

    for (;;) {
        uint64_t t0 = onic_time_ns();
        unsigned work = 0;
        int blocked = 0;

        if (t0 - last_beat >= ENGINE_TICK_NS / 2) {
            if (engine_stop_requested())
                return;
            __atomic_store_n(&e->status->heartbeat_ns, t0, __ATOMIC_RELAXED);
            __atomic_fetch_add(&e->status->heartbeat, 1, __ATOMIC_RELEASE);
            last_beat = t0;
            scan = 1;
            engine_reap_dead(e);
        }
        if (scan && e->attached + e->done < e->nprocs)
            engine_attach_scan(e);
        scan = 0;
        /* Pulls first: a copy request or completion waiting for room in an
         * event ring gets the room before new commands' answers take it. */
        if (e->nmoves > 0 || e->rma_wait != NULL)
            work += engine_moves_progress(e, &blocked);
        if (e->mail > 0)
            work += onload_serve_deliver(e, &blocked);
        for (uint32_t r = 0; r < e->nprocs; r++) {
            if (e->procs[r].state == ENGINE_PROC_ATTACHED) {
                unsigned n = engine_proc_serve(e, r, &blocked);
                __atomic_fetch_add(&e->status->commands, n, __ATOMIC_RELAXED);
                work += n;
            }
        }
        if (work > 0) {
            __atomic_fetch_add(&e->status->busy_ns, onic_time_ns() - t0, __ATOMIC_RELAXED);
            idle_since = 0;
            yields = 0;
            continue;
        }
        /* Idle: spin briefly (the next command is often right behind), then
         * sleep; a wake-up may be a new process, so scan then. */
        if (idle_since == 0)
            idle_since = t0;
        if (t0 - idle_since < spin_ns && !blocked)
            continue;
        /* Without a core of its own, a few yields first: the process
         * whose command comes next may be waiting for this very core. */
        if (spin_ns == 0 && yields < ENGINE_YIELDS && !blocked) {
            yields++;
            sched_yield();
            continue;
        }
        yields = 0;
        engine_sleep(e, blocked);
        scan = 1;
    }
}

onic_status_t onic_onload_engine_run(const onic_config_t *cfg)
{
    onic_onload_status_t *s;
    engine_t e;
    int fd;

    if (cfg == NULL || cfg->jobid[0] == '\0') {
        onic_error("onload: the engine needs ONIC_JOBID (onicrun --onload starts it)");
        return ONIC_ERR_INVALID_PARAM;
    }
    memset(&e, 0, sizeof(e));
    e.cfg = cfg;
    {
        int n;
        PtlInit(&n); /* the interfaces kept for the processes */
    }
    onload_serve_init(&e);
    e.nprocs = cfg->size;
    e.procs = onic_calloc(e.nprocs, sizeof(*e.procs));
    for (uint32_t r = 0; e.procs != NULL && r < e.nprocs; r++) {
        e.procs[r].e = &e;
        e.procs[r].rank = r;
        e.procs[r].handed = -1;
    }
    e.chunk = onic_malloc(ONIC_ONLOAD_CHUNK);
    e.cmdbuf = onic_malloc(ONIC_ONLOAD_MSG_MAX);
    e.scratch = onic_malloc(sizeof(uint64_t) + ONIC_ONLOAD_DATA_INLINE);
    if (e.procs == NULL || e.chunk == NULL || e.cmdbuf == NULL || e.scratch == NULL) {
        onic_error("onload: no memory for %u processes", e.nprocs);
        return ONIC_ERR_NO_MEMORY;
    }
    fd = (int)cfg->onload_fd;
    e.sock = (int)cfg->onload_sock;
    if (fd == 0 || e.sock == 0 ||
        onic_shmfd_check(fd, sizeof(*s), "the engine's status segment (ONIC_ONLOAD_FD)") !=
            ONIC_OK) {
        onic_error("onload: the engine needs its status segment and socket from onicrun "
                   "(ONIC_ONLOAD_FD, ONIC_ONLOAD_SOCK); onicrun --onload starts it");
        goto err_free_procs;
    }
    {
        int one = 1;
        if (setsockopt(e.sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ||
            fcntl(e.sock, F_SETFL, fcntl(e.sock, F_GETFL) | O_NONBLOCK) != 0) {
            onic_error("onload: cannot set up the engine's socket: %m");
            goto err_free_procs;
        }
    }
    s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        onic_error("onload: cannot map the status segment (%zu bytes): %m", sizeof(*s));
        goto err_free_procs;
    }
    e.status = s;
    s->version = ONIC_ONLOAD_STATUS_VERSION;
    s->pid = (int32_t)getpid();
    s->core = cfg->onload_core;
    s->started_ns = onic_time_ns();
    s->heartbeat_ns = s->started_ns;
    s->state = ONIC_ONLOAD_READY;
    __atomic_store_n(&s->magic, ONIC_ONLOAD_STATUS_MAGIC, __ATOMIC_RELEASE);
    onic_debug("onload: engine %d ready on core %u for job %s", (int)getpid(), cfg->onload_core,
               cfg->jobid);

    engine_loop(&e);

    __atomic_store_n(&s->state, ONIC_ONLOAD_STOPPED, __ATOMIC_RELEASE);
    for (uint32_t r = 0; r < e.nprocs; r++)
        if (e.procs[r].state == ENGINE_PROC_ATTACHED)
            engine_proc_detach(&e, &e.procs[r], 0);
    onload_serve_fini(&e);
    munmap(s, sizeof(*s));
    for (uint32_t r = 0; r < e.nprocs; r++)
        if (e.procs[r].handed >= 0)
            close(e.procs[r].handed);
    onic_free(e.scratch);
    onic_free(e.cmdbuf);
    onic_free(e.chunk);
    onic_free(e.procs);
    return ONIC_OK;

err_free_procs:
    onic_free(e.scratch);
    onic_free(e.cmdbuf);
    onic_free(e.chunk);
    onic_free(e.procs);
    return ONIC_ERR_IO;
}
