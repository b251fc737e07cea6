/* A process's side of the onload engine: its segment with a command ring
 * and an event ring, the engine's bell, and the engine's liveness. */
#include "onload/onload.h"
#include "onload/ring.h"
#include "base/clock.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/proc.h"
#include "base/shmfd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CLIENT_WELCOME_NS   10000000000ull /* the engine must attach us by then */
#define CLIENT_CHECK_NS     100000000ull   /* liveness check period while waiting */
#define CLIENT_YIELDS       16

/* A range this process registered, or the target of a pull it started. */
typedef struct client_range {
    int      used;
    uint64_t key;   /* the range's id, or the pull's cookie */
    uint64_t addr, len;
} client_range_t;

struct onic_onload_client {
    onic_onload_status_t *engine;   /* its status segment, mapped read-write for the bell */
    pid_t                 engine_pid;
    void                 *map;      /* our segment */
    size_t                bytes;
    onic_onload_ring_t    cmd;      /* we produce */
    onic_onload_ring_t    evt;      /* we consume */
    onic_onload_answer_t *answer;   /* our bounce area's answer line */
    uint8_t              *bounce;   /* and its ONIC_ONLOAD_CHUNK bytes */
    uint64_t              spin_ns;
    int                   gone;     /* the engine was found dead */
    uint64_t              checked;  /* when a wait last checked the engine (CLIENT_CHECK_NS) */
    uint64_t              looked;   /* when /proc last said the engine is no zombie */
    int                   ptl;      /* the engine runs our Portals: see serve_ptl */
    int                   quiet;    /* this push wakes no sleeping engine */
    client_range_t        regs[ONIC_ONLOAD_REGS];
    client_range_t        pulls[ONIC_ONLOAD_MOVES];
};

static long client_futex(uint32_t *word, int op, uint32_t val)
{
    return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* The engine's status segment (ONIC_ONLOAD_FD), checked, mapped read-write
 * (the bell). */
static onic_status_t client_map_engine(const onic_config_t *cfg, onic_onload_client_t *c)
{
    onic_onload_status_t *s;
    int fd = (int)cfg->onload_fd;

    if (fd == 0 || cfg->onload_sock == 0) {
        onic_error("onload: job %s has no engine (no ONIC_ONLOAD_FD and ONIC_ONLOAD_SOCK); "
                   "start the job with onicrun --onload", cfg->jobid);
        return ONIC_ERR_NO_ELEM;
    }
    if (onic_shmfd_check(fd, sizeof(*s), "the engine's status segment (ONIC_ONLOAD_FD)") !=
        ONIC_OK)
        return ONIC_ERR_IO;
    /* Not for what this process may start in turn. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    (void)fcntl((int)cfg->onload_sock, F_SETFD, FD_CLOEXEC);
    s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        onic_error("onload: cannot map the engine's status segment: %m");
        return ONIC_ERR_IO;
    }
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != ONIC_ONLOAD_STATUS_MAGIC ||
        s->version != ONIC_ONLOAD_STATUS_VERSION || s->pid <= 0) {
        onic_error("onload: the engine's status segment is not one of version %u",
                   ONIC_ONLOAD_STATUS_VERSION);
        munmap(s, sizeof(*s));
        return ONIC_ERR_IO;
    }
    c->engine = s;
    c->engine_pid = (pid_t)s->pid; /* read once: the segment may change */
    return ONIC_OK;
}

onic_status_t onic_onload_client_hand(const onic_config_t *cfg, int fd, uint32_t rank)
{
    uint32_t m[2] = {ONIC_ONLOAD_PROC_MAGIC, rank};
    onic_onload_status_t *s;
    struct ucred me = {getpid(), geteuid(), getegid()};
    union {
        struct cmsghdr hdr;
        char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct iovec iov = {m, sizeof(m)};
    struct msghdr mh = {0};
    struct cmsghdr *c;
    ssize_t n;

    if (cfg == NULL || fd < 0 || cfg->onload_sock == 0 || cfg->onload_fd == 0)
        return ONIC_ERR_INVALID_PARAM;
    /* The descriptor and our credentials (the kernel checks them; the
     * engine would get them anyway, with SO_PASSCRED). */
    memset(&ctl, 0, sizeof(ctl));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(fd));
    c = CMSG_NXTHDR(&mh, c);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(me));
    memcpy(CMSG_DATA(c), &me, sizeof(me));
    do
        n = sendmsg((int)cfg->onload_sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(m)) {
        onic_error("onload: cannot hand this process's segment to the engine: %m");
        return ONIC_ERR_IO;
    }
    /* Ring the bell, asleep or not: the engine looks at the socket when it
     * wakes. */
    s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, (int)cfg->onload_fd, 0);
    if (s != MAP_FAILED) {
        __atomic_fetch_add(&s->wake, 1, __ATOMIC_RELEASE);
        client_futex(&s->wake, FUTEX_WAKE, 1);
        munmap(s, sizeof(*s));
    }
    return ONIC_OK;
}

/* Ring the engine's bell if it sleeps. Our ring's tail was stored seq_cst;
 * this load is seq_cst too (see the engine's engine_sleep). */
static void client_ring_bell(onic_onload_client_t *c)
{
    if (__atomic_load_n(&c->engine->sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&c->engine->wake, 1, __ATOMIC_RELEASE);
        client_futex(&c->engine->wake, FUTEX_WAKE, 1);
    }
}

/* Whether the engine runs: kill(pid, 0) on every call, and its state in
 * /proc (a zombie passes kill) at most every CLIENT_CHECK_NS, since a push
 * to a full ring asks on every try. */
static int client_engine_alive(onic_onload_client_t *c)
{
    uint64_t now;

    if (kill(c->engine_pid, 0) != 0 && errno == ESRCH)
        return 0;
    now = onic_time_ns();
    if (c->looked != 0 && now - c->looked < CLIENT_CHECK_NS)
        return 1;
    if (!onic_proc_alive(c->engine_pid))
        return 0;
    c->looked = now;
    return 1;
}

onic_status_t onic_onload_client_check(onic_onload_client_t *c)
{
    if (c == NULL)
        return ONIC_ERR_INVALID_PARAM;
    if (!c->gone) {
        uint32_t magic = __atomic_load_n(&c->engine->magic, __ATOMIC_ACQUIRE);
        uint32_t state = __atomic_load_n(&c->engine->state, __ATOMIC_ACQUIRE);
        int32_t pid = __atomic_load_n(&c->engine->pid, __ATOMIC_RELAXED);
        /* A segment that no engine would write (not its magic or pid, a
         * state it never enters after READY) while the engine lives: a
         * stray write. Stop the job rather than declare a live engine gone. */
        if ((magic != ONIC_ONLOAD_STATUS_MAGIC || pid != c->engine_pid ||
             (state != ONIC_ONLOAD_READY && state != ONIC_ONLOAD_STOPPED)) &&
            onic_proc_alive(c->engine_pid))
            onic_log_fail_stop(ONIC_EXIT_CORRUPT, "onload: corrupt data in the engine's status "
                               "segment (seen by rank %d): magic %#x, pid %d, state %u, while "
                               "the engine (pid %d) runs; stopping the job", onic_log_rank(),
                               magic, (int)pid, state, (int)c->engine_pid);
    }
    if (!c->gone &&
        (!client_engine_alive(c) ||
         __atomic_load_n(&c->engine->state, __ATOMIC_ACQUIRE) != ONIC_ONLOAD_READY)) {
        onic_error("onload: the engine (pid %d) is gone; this process cannot communicate any more",
                   (int)c->engine_pid);
        c->gone = 1;
    }
    return c->gone ? ONIC_ERR_IO : ONIC_OK;
}

onic_status_t onic_onload_client_open(const onic_config_t *cfg, onic_onload_client_t **client_p)
{
    char name[ONIC_ONLOAD_NAME_MAX];
    size_t cmd_bytes, evt_bytes, bytes;
    onic_onload_proc_hdr_t *h;
    onic_onload_client_t *c;
    onic_status_t status;
    uint8_t buf[ONIC_ONLOAD_REC];
    uint32_t kind;
    size_t len;
    int fd;

    if (cfg == NULL || client_p == NULL || cfg->jobid[0] == '\0') {
        onic_error("onload: a process reaches its engine only inside a job (onicrun --onload)");
        return ONIC_ERR_INVALID_PARAM;
    }
    cmd_bytes = onic_onload_ring_bytes(cfg->onload_cmd_recs, ONIC_ONLOAD_REC);
    evt_bytes = onic_onload_ring_bytes(cfg->onload_event_recs, ONIC_ONLOAD_REC);
    if (cmd_bytes == 0 || evt_bytes == 0)
        return ONIC_ERR_INVALID_PARAM; /* the registry's ranges make this unreachable */
    bytes = sizeof(*h) + cmd_bytes + evt_bytes + ONIC_ONLOAD_BOUNCE;
    c = onic_calloc(1, sizeof(*c));
    if (c == NULL)
        return ONIC_ERR_NO_MEMORY;
    /* The job's processes and the engine on more cores than there are
     * (ONIC_WAIT): waiting for the engine must leave it the core. */
    c->spin_ns = onic_config_wait_sleeps(cfg, cfg->size + 1) ? 0
                                                              : (uint64_t)cfg->wait_spin_us * 1000u;
    status = client_map_engine(cfg, c);
    if (status != ONIC_OK)
        goto err_free;

    snprintf(name, sizeof(name), "onic-onload-%u", cfg->rank); /* for /proc/PID/maps only */
    fd = onic_shmfd_create(name, bytes);
    if (fd < 0) {
        status = ONIC_ERR_NO_MEMORY;
        goto err_unmap_engine;
    }
    c->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (c->map == MAP_FAILED) {
        onic_error("onload: cannot map this process's segment (%zu bytes): %m", bytes);
        close(fd);
        status = ONIC_ERR_NO_MEMORY;
        goto err_unmap_engine;
    }
    c->bytes = bytes;
    h = c->map;
    h->version = ONIC_ONLOAD_STATUS_VERSION;
    h->rank = cfg->rank;
    h->pid = (int32_t)getpid();
    h->cmd_off = sizeof(*h);
    h->cmd_bytes = cmd_bytes;
    h->evt_off = sizeof(*h) + cmd_bytes;
    h->evt_bytes = evt_bytes;
    /* 0 asks the engine not to use CMA on us (its probe then fails). */
    h->self_addr = cfg->onload_rma == ONIC_ONLOAD_RMA_COPY ? 0 : (uint64_t)(uintptr_t)h;
    h->bounce_off = sizeof(*h) + cmd_bytes + evt_bytes;
    c->answer = (onic_onload_answer_t *)((uint8_t *)c->map + h->bounce_off);
    c->bounce = (uint8_t *)(c->answer + 1);
    /* Where Yama restricts ptrace to descendants, let the engine use CMA
     * on us (EINVAL without Yama: nothing to allow). */
    (void)prctl(PR_SET_PTRACER, (unsigned long)c->engine_pid, 0, 0, 0);
    if (onic_onload_ring_format((uint8_t *)c->map + h->cmd_off, cmd_bytes, cfg->onload_cmd_recs,
                                ONIC_ONLOAD_REC) != ONIC_OK ||
        onic_onload_ring_format((uint8_t *)c->map + h->evt_off, evt_bytes,
                                cfg->onload_event_recs, ONIC_ONLOAD_REC) != ONIC_OK ||
        onic_onload_ring_attach((uint8_t *)c->map + h->cmd_off, cmd_bytes, &c->cmd) != ONIC_OK ||
        onic_onload_ring_attach((uint8_t *)c->map + h->evt_off, evt_bytes, &c->evt) != ONIC_OK) {
        status = ONIC_ERR_IO;
        goto err_unmap;
    }
    {
        char what[64];
        snprintf(what, sizeof(what), "the command ring of rank %u, seen by it", cfg->rank);
        onic_onload_ring_fail_stop(&c->cmd, what);
        snprintf(what, sizeof(what), "the event ring of rank %u, seen by it", cfg->rank);
        onic_onload_ring_fail_stop(&c->evt, what);
    }
    __atomic_store_n(&h->magic, ONIC_ONLOAD_PROC_MAGIC, __ATOMIC_SEQ_CST);
    status = onic_onload_client_hand(cfg, fd, cfg->rank);
    close(fd); /* the engine's copy travels in the message */
    fd = -1;
    if (status != ONIC_OK)
        goto err_unmap;

    status = onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, CLIENT_WELCOME_NS);
    if (status == ONIC_ERR_NO_ELEM) {
        onic_error("onload: the engine (pid %d) did not attach this process's segment within "
                   "%llu s", (int)c->engine_pid, CLIENT_WELCOME_NS / 1000000000ull);
        status = ONIC_ERR_IO;
    }
    if (status == ONIC_OK && kind != ONIC_ONLOAD_EVT_WELCOME) {
        onic_error("onload: the engine answered %u, not WELCOME", kind);
        status = ONIC_ERR_IO;
    }
    if (status != ONIC_OK)
        goto err_unmap;
    *client_p = c;
    return ONIC_OK;

err_unmap:
    if (fd >= 0)
        close(fd);
    munmap(c->map, bytes);
err_unmap_engine:
    munmap(c->engine, sizeof(*c->engine));
err_free:
    onic_free(c);
    return status;
}

void onic_onload_client_close(onic_onload_client_t *c)
{
    if (c == NULL)
        return;
    if (onic_onload_client_check(c) == ONIC_OK) {
        /* Room for BYE: the engine takes commands while it lives. */
        uint64_t until = onic_time_ns() + CLIENT_WELCOME_NS;
        while (onic_onload_client_push(c, ONIC_ONLOAD_CMD_BYE, NULL, 0) == ONIC_ERR_NO_RESOURCE &&
               onic_time_ns() < until) {
            uint8_t buf[ONIC_ONLOAD_MSG_MAX];
            uint32_t kind;
            size_t len;
            (void)onic_onload_client_poll(c, &kind, buf, sizeof(buf), &len);
            sched_yield();
        }
    }
    munmap(c->map, c->bytes);
    munmap(c->engine, sizeof(*c->engine));
    onic_free(c);
}

static client_range_t *client_range_find(client_range_t *t, unsigned n, uint64_t key)
{
    for (unsigned i = 0; i < n; i++)
        if (t[i].used && t[i].key == key)
            return &t[i];
    return NULL;
}

static client_range_t *client_range_free(client_range_t *t, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!t[i].used)
            return &t[i];
    return NULL;
}

/* Whether [addr, addr + len) lies inside one of the ranges of t. */
static int client_range_covers(const client_range_t *t, unsigned n, uint64_t addr, uint64_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (t[i].used && addr >= t[i].addr && len <= t[i].len && addr - t[i].addr <= t[i].len - len)
            return 1;
    return 0;
}

static onic_status_t client_push_raw(onic_onload_client_t *c, uint32_t kind, const void *data,
                                     size_t len)
{
    onic_status_t status = onic_onload_ring_push(&c->cmd, kind, data, len);

    if (status == ONIC_OK) {
        if (!c->quiet)
            client_ring_bell(c);
    } else if (status == ONIC_ERR_NO_RESOURCE) {
        /* The engine must make room, even if only quiet commands filled
         * the ring; and a full ring with a dead engine would never drain. */
        client_ring_bell(c);
        status = onic_onload_client_check(c) == ONIC_OK ? ONIC_ERR_NO_RESOURCE : ONIC_ERR_IO;
    }
    return status;
}

onic_status_t onic_onload_client_push_quiet(onic_onload_client_t *c, uint32_t kind,
                                            const void *data, size_t len)
{
    onic_status_t status;

    if (c == NULL)
        return ONIC_ERR_INVALID_PARAM;
    c->quiet = 1;
    status = onic_onload_client_push(c, kind, data, len);
    c->quiet = 0;
    return status;
}

void onic_onload_client_serve_ptl(onic_onload_client_t *c)
{
    c->ptl = 1;
}

onic_status_t onic_onload_client_push(onic_onload_client_t *c, uint32_t kind, const void *data,
                                      size_t len)
{
    client_range_t *slot = NULL;
    onic_onload_reg_t reg;
    onic_onload_pull_t pull;
    onic_status_t status;

    if (c == NULL || len > ONIC_ONLOAD_MSG_MAX)
        return ONIC_ERR_INVALID_PARAM;
    if (c->gone)
        return ONIC_ERR_IO;
    if (kind == ONIC_ONLOAD_CMD_PULL && len == sizeof(pull) && data != NULL) {
        memcpy(&pull, data, sizeof(pull));
        slot = client_range_free(c->pulls, ONIC_ONLOAD_MOVES);
        if (slot == NULL)
            return ONIC_ERR_NO_RESOURCE; /* take PULLED events first */
    }
    status = client_push_raw(c, kind, data, len);
    if (status != ONIC_OK)
        return status;
    if (slot != NULL) {
        *slot = (client_range_t){1, pull.cookie, pull.dst_addr, pull.len};
    } else if ((kind == ONIC_ONLOAD_CMD_REG || kind == ONIC_ONLOAD_CMD_DEREG) &&
               len == sizeof(reg) && data != NULL) {
        /* Mirror what the engine will do (it refuses a duplicate id, and
         * beyond ONIC_ONLOAD_REGS), to check its FILL requests. */
        memcpy(&reg, data, sizeof(reg));
        client_range_t *old = client_range_find(c->regs, ONIC_ONLOAD_REGS, reg.id);
        if (kind == ONIC_ONLOAD_CMD_DEREG && old != NULL)
            old->used = 0;
        else if (kind == ONIC_ONLOAD_CMD_REG && old == NULL &&
                 (slot = client_range_free(c->regs, ONIC_ONLOAD_REGS)) != NULL)
            *slot = (client_range_t){1, reg.id, reg.addr, reg.len};
    }
    return ONIC_OK;
}

/* FILL or DRAIN: the engine cannot reach our memory, so we copy between
 * it and our bounce area, but only within what we registered or asked to
 * be pulled into, and answer in the area's first line. */
static void client_copy(onic_onload_client_t *c, uint32_t kind, const void *buf, size_t len)
{
    onic_onload_copy_t cp = {0, 0, 0};
    onic_status_t status = ONIC_OK;

    if (len != sizeof(cp)) {
        status = ONIC_ERR_INVALID_PARAM;
    } else {
        memcpy(&cp, buf, sizeof(cp));
        if (cp.len > ONIC_ONLOAD_CHUNK)
            status = ONIC_ERR_INVALID_PARAM;
        else if (kind == ONIC_ONLOAD_EVT_FILL &&
                 (c->ptl || client_range_covers(c->regs, ONIC_ONLOAD_REGS, cp.addr, cp.len)))
            onic_copy(c->bounce, (const void *)(uintptr_t)cp.addr, cp.len);
        else if (kind == ONIC_ONLOAD_EVT_DRAIN &&
                 (c->ptl || client_range_covers(c->pulls, ONIC_ONLOAD_MOVES, cp.addr, cp.len)))
            onic_copy((void *)(uintptr_t)cp.addr, c->bounce, cp.len);
        else
            status = ONIC_ERR_INVALID_PARAM;
    }
    if (status != ONIC_OK)
        onic_error("onload: the engine asked for a copy of %llu bytes at %#llx outside what this "
                   "process exposed or asked for; refused",
                   (unsigned long long)cp.len, (unsigned long long)cp.addr);
    __atomic_store_n(&c->answer->status, (int32_t)status, __ATOMIC_RELAXED);
    /* seq_cst, then the bell's seq_cst load: see engine_sleep. */
    __atomic_store_n(&c->answer->seq, cp.seq, __ATOMIC_SEQ_CST);
    client_ring_bell(c);
}

onic_status_t onic_onload_client_poll(onic_onload_client_t *c, uint32_t *kind_p, void *buf,
                                      size_t cap, size_t *len_p)
{
    onic_status_t status;

    if (c == NULL || kind_p == NULL || buf == NULL || len_p == NULL)
        return ONIC_ERR_INVALID_PARAM;
    for (;;) {
        status = onic_onload_ring_pop(&c->evt, kind_p, buf, cap, len_p);
        if (status != ONIC_OK)
            return status;
        if (*kind_p != ONIC_ONLOAD_EVT_FILL && *kind_p != ONIC_ONLOAD_EVT_DRAIN)
            break;
        client_copy(c, *kind_p, buf, *len_p);
    }
    if (*kind_p == ONIC_ONLOAD_EVT_PULLED && *len_p == sizeof(onic_onload_done_t)) {
        onic_onload_done_t d;
        client_range_t *slot;
        memcpy(&d, buf, sizeof(d));
        if ((slot = client_range_find(c->pulls, ONIC_ONLOAD_MOVES, d.cookie)) != NULL)
            slot->used = 0;
    }
    return ONIC_OK;
}

onic_status_t onic_onload_client_wait(onic_onload_client_t *c, uint32_t *kind_p, void *buf,
                                      size_t cap, size_t *len_p, uint64_t timeout_ns)
{
    uint64_t start = onic_time_ns(), now, deadline;
    unsigned yields = 0;
    onic_status_t status;

    deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    while ((status = onic_onload_client_poll(c, kind_p, buf, cap, len_p)) == ONIC_ERR_NO_ELEM) {
        now = onic_time_ns();
        if (now >= deadline)
            return ONIC_ERR_NO_ELEM;
        /* Every CLIENT_CHECK_NS of waiting, over however many short waits. */
        if (now - c->checked >= CLIENT_CHECK_NS || c->gone) {
            if (onic_onload_client_check(c) != ONIC_OK)
                return ONIC_ERR_IO;
            c->checked = now;
        }
        if (now - start < c->spin_ns)
            continue;
        if (yields < CLIENT_YIELDS) {
            yields++;
            sched_yield();
            continue;
        }
        /* Bounded, so the liveness check above runs every period. */
        onic_onload_ring_sleep(&c->evt, deadline - now < CLIENT_CHECK_NS ? deadline - now
                                                                          : CLIENT_CHECK_NS);
    }
    return status;
}
