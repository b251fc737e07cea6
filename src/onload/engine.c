/* The onload engine's process: its status segment and its main loop. */
#include "onload/onload.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "onload/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
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

void onic_onload_status_name(const char *jobid, char *buf)
{
    snprintf(buf, ONIC_ONLOAD_NAME_MAX, "/onic-%s-onload", jobid);
}

onic_status_t onic_onload_status_read(const char *jobid, onic_onload_status_t *status_p)
{
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_status_t copy;
    const onic_onload_status_t *s;
    struct stat st;
    int fd;

    if (jobid == NULL || jobid[0] == '\0' || status_p == NULL)
        return ONIC_ERR_INVALID_PARAM;
    onic_onload_status_name(jobid, name);
    fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? ONIC_ERR_NO_ELEM : ONIC_ERR_IO;
    /* The engine sizes the segment before it publishes the magic; a
     * segment still too small is one we cannot read yet. */
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(*s)) {
        close(fd);
        return ONIC_ERR_NO_ELEM;
    }
    s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
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
           (kill((pid_t)status->pid, 0) == 0 || errno == EPERM);
}

void onic_onload_proc_name(const char *jobid, uint32_t rank, char *buf)
{
    snprintf(buf, ONIC_ONLOAD_NAME_MAX, "/onic-%s-onload-%u", jobid, rank);
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

/* One process the engine serves. */
typedef struct engine_proc {
    int                 state;  /* ENGINE_PROC_* */
    void               *map;
    size_t              bytes;
    pid_t               pid;
    onic_onload_ring_t  cmd;    /* we consume */
    onic_onload_ring_t  evt;    /* we produce */
} engine_proc_t;

enum { ENGINE_PROC_NONE = 0, ENGINE_PROC_ATTACHED, ENGINE_PROC_DONE };

typedef struct engine {
    const onic_config_t   *cfg;
    onic_onload_status_t  *status;
    engine_proc_t         *procs;   /* by rank */
    uint32_t               nprocs;
    uint32_t               attached;
    uint32_t               done;
} engine_t;

static void engine_proc_detach(engine_t *e, engine_proc_t *p)
{
    munmap(p->map, p->bytes);
    p->map = NULL;
    p->state = ENGINE_PROC_DONE;
    e->attached--;
    e->done++;
}

/* Map rank's segment if it exists yet, check it, and welcome the process.
 * A segment that does not check out is refused for good: its process
 * times out waiting for WELCOME and says so. */
static void engine_proc_attach(engine_t *e, uint32_t rank)
{
    engine_proc_t *p = &e->procs[rank];
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_proc_hdr_t h;
    struct stat st;
    void *map;
    int fd;

    onic_onload_proc_name(e->cfg->jobid, rank, name);
    fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return; /* not created yet */
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(h)) {
        close(fd);
        return; /* not sized yet */
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        onic_error("onload: cannot map %s (%lld bytes): %m", name, (long long)st.st_size);
        p->state = ENGINE_PROC_DONE;
        e->done++;
        return;
    }
    if (__atomic_load_n(&((onic_onload_proc_hdr_t *)map)->magic, __ATOMIC_ACQUIRE) !=
        ONIC_ONLOAD_PROC_MAGIC) {
        munmap(map, (size_t)st.st_size);
        return; /* not published yet */
    }
    memcpy(&h, map, sizeof(h)); /* once: checked, then used */
    p->map = map;
    p->bytes = (size_t)st.st_size;
    e->attached++;
    p->state = ENGINE_PROC_ATTACHED;
    if (h.version != ONIC_ONLOAD_STATUS_VERSION || h.rank != rank || h.pid <= 0 ||
        h.cmd_off < sizeof(h) || h.cmd_off > p->bytes || h.cmd_bytes > p->bytes - h.cmd_off ||
        h.evt_off < sizeof(h) || h.evt_off > p->bytes || h.evt_bytes > p->bytes - h.evt_off ||
        h.cmd_off % 64 != 0 || h.evt_off % 64 != 0 ||
        (h.cmd_off < h.evt_off ? h.cmd_off + h.cmd_bytes > h.evt_off
                               : h.evt_off + h.evt_bytes > h.cmd_off)) {
        onic_error("onload: %s: header of version %u for rank %u does not describe the segment "
                   "(%zu bytes); not serving it", name, h.version, h.rank, p->bytes);
        engine_proc_detach(e, p);
        return;
    }
    if (onic_onload_ring_attach((uint8_t *)map + h.cmd_off, h.cmd_bytes, &p->cmd) != ONIC_OK ||
        onic_onload_ring_attach((uint8_t *)map + h.evt_off, h.evt_bytes, &p->evt) != ONIC_OK ||
        p->cmd.rec_size != ONIC_ONLOAD_REC || p->evt.rec_size != ONIC_ONLOAD_REC) {
        onic_error("onload: %s: its rings are not of this engine's version and record size; "
                   "not serving rank %u", name, rank);
        engine_proc_detach(e, p);
        return;
    }
    p->pid = (pid_t)h.pid;
    /* The event ring is empty: WELCOME always fits. */
    onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_WELCOME, NULL, 0);
    onic_debug("onload: serving rank %u (pid %d)", rank, (int)p->pid);
}

static void engine_attach_scan(engine_t *e)
{
    for (uint32_t r = 0; r < e->nprocs && e->attached + e->done < e->nprocs; r++)
        if (e->procs[r].state == ENGINE_PROC_NONE)
            engine_proc_attach(e, r);
}

#define ENGINE_BATCH 64

/* Take up to ENGINE_BATCH commands of one process, each only while its
 * answer has room (a full event ring holds the work, never drops it).
 * Returns the commands taken; sets *blocked_p if some wait for room. */
static unsigned engine_proc_serve(engine_t *e, engine_proc_t *p, int *blocked_p)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    unsigned n = 0;

    while (n < ENGINE_BATCH) {
        uint32_t kind;
        size_t len;
        onic_status_t st;

        if (onic_onload_ring_room(&p->evt) == 0) {
            if (onic_onload_ring_count(&p->cmd) > 0)
                *blocked_p = 1;
            break;
        }
        st = onic_onload_ring_pop(&p->cmd, &kind, buf, &len);
        if (st == ONIC_ERR_NO_ELEM)
            break;
        if (st != ONIC_OK) { /* broken: logged by the ring */
            engine_proc_detach(e, p);
            break;
        }
        n++;
        if (kind == ONIC_ONLOAD_CMD_PING) {
            onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_PONG, buf, len);
        } else if (kind == ONIC_ONLOAD_CMD_BYE) {
            engine_proc_detach(e, p);
            break;
        } else {
            onic_error("onload: unknown command %u from pid %d; not serving it any more", kind,
                       (int)p->pid);
            engine_proc_detach(e, p);
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
                  onic_onload_ring_pending(&e->procs[r].cmd);
    if (!pending)
        engine_futex(&s->wake, FUTEX_WAIT, seq, &ts);
    __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
}

static void engine_loop(engine_t *e)
{
    uint64_t spin_ns = (uint64_t)e->cfg->wait_spin_us * 1000u;
    uint64_t idle_since = 0, last_beat = 0;
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
        }
        if (scan && e->attached + e->done < e->nprocs)
            engine_attach_scan(e);
        scan = 0;
        for (uint32_t r = 0; r < e->nprocs; r++)
            if (e->procs[r].state == ENGINE_PROC_ATTACHED)
                work += engine_proc_serve(e, &e->procs[r], &blocked);
        if (work > 0) {
            __atomic_fetch_add(&e->status->commands, work, __ATOMIC_RELAXED);
            __atomic_fetch_add(&e->status->busy_ns, onic_time_ns() - t0, __ATOMIC_RELAXED);
            idle_since = 0;
            continue;
        }
        /* Idle: spin briefly (the next command is often right behind), then
         * sleep; a wake-up may be a new process, so scan then. */
        if (idle_since == 0)
            idle_since = t0;
        if (t0 - idle_since < spin_ns && !blocked)
            continue;
        engine_sleep(e, blocked);
        scan = 1;
    }
}

onic_status_t onic_onload_engine_run(const onic_config_t *cfg)
{
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_status_t *s;
    engine_t e;
    int fd;

    if (cfg == NULL || cfg->jobid[0] == '\0') {
        onic_error("onload: the engine needs ONIC_JOBID (onicrun --onload starts it)");
        return ONIC_ERR_INVALID_PARAM;
    }
    memset(&e, 0, sizeof(e));
    e.cfg = cfg;
    e.nprocs = cfg->size;
    e.procs = onic_calloc(e.nprocs, sizeof(*e.procs));
    if (e.procs == NULL) {
        onic_error("onload: no memory for %u processes", e.nprocs);
        return ONIC_ERR_NO_MEMORY;
    }
    onic_onload_status_name(cfg->jobid, name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        onic_error("onload: cannot create %s: %m%s", name,
                   errno == EEXIST ? " (a second engine for this job?)" : "");
        goto err_free_procs;
    }
    if (ftruncate(fd, (off_t)sizeof(*s)) != 0) {
        onic_error("onload: cannot size %s to %zu bytes: %m", name, sizeof(*s));
        close(fd);
        goto err_unlink;
    }
    s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED) {
        onic_error("onload: cannot map %s (%zu bytes): %m", name, sizeof(*s));
        goto err_unlink;
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
            engine_proc_detach(&e, &e.procs[r]);
    munmap(s, sizeof(*s));
    shm_unlink(name);
    onic_free(e.procs);
    return ONIC_OK;

err_unlink:
    shm_unlink(name);
err_free_procs:
    onic_free(e.procs);
    return ONIC_ERR_IO;
}
