/* Windows in memory the processes of one node share (MPI_Win_allocate_shared,
 * MPI_Win_shared_query, and MPI_Win_allocate when its processes share a
 * node: ONIC_MPI_WIN_SHM).
 *
 * The window's comm rank 0 makes one nameless, sealed memfd (base/shmfd.h)
 * for every member's control block (rma.h: its locks) and every segment,
 * rank after rank (with no gap for MPI_Win_allocate_shared, the standard's
 * default: contiguous; from cache lines for MPI_Win_allocate), and hands
 * its descriptor to the others the way the shm transport hands out its
 * regions at start-up: over an abstract Unix socket of a random name (told
 * to the members only, through the window's communicator), SCM_RIGHTS,
 * each connection's credentials checked (our uid, a pid of the window's
 * members). Each maps the whole memory and closes the descriptor, so
 * nothing ever has a name and the memory goes with its last mapping. The
 * window is then a window over the process's own segment whose operations
 * are loads and stores into the target's segment (rma.c; with
 * ONIC_MPI_WIN_SHM=0 at any member they are Portals messages, as on any
 * other window), and loads and stores reach every segment directly:
 * MPI_WIN_UNIFIED. */
#include "mpi/rma.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/shmfd.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define WSH_TIMEOUT_NS (30ull * 1000000000ull)

/* What each member tells the others first. */
typedef struct wsh_member {
    long long size;
    long long disp_unit;
    long long pid;
    long long win_shm;   /* its ONIC_MPI_WIN_SHM: all must say 1 for loads and stores */
    char      host[MPI_MAX_PROCESSOR_NAME];
    char      node[80];  /* wsh_node_id: one kernel, one network and pid namespace */
} wsh_member_t;

/* What makes processes able to share memory by the hand-over below, beyond
 * a host name (which cloned machines and containers share): the kernel's
 * boot id, and the network namespace (the abstract socket's) and pid
 * namespace (the credentials' pids) by their inode numbers. */
static void wsh_node_id(char *buf, size_t cap)
{
    char boot[40] = "";
    struct stat net, pid;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        fclose(f);
    }
    boot[strcspn(boot, "\n")] = '\0';
    if (stat("/proc/self/ns/net", &net) != 0)
        net.st_ino = 0;
    if (stat("/proc/self/ns/pid", &pid) != 0)
        pid.st_ino = 0;
    snprintf(buf, cap, "%s/%llu/%llu", boot, (unsigned long long)net.st_ino,
             (unsigned long long)pid.st_ino);
}

/* Rank 0's word to the others: whether it made the memory, and where to
 * get it. */
typedef struct wsh_hello {
    int  ok;
    char token[40];
} wsh_hello_t;

/* Rank 0: listen under a fresh random name (token); -1 on failure. */
static int wsh_listen(int n, char *token, size_t cap)
{
    unsigned char r[16];
    struct sockaddr_un sa;
    socklen_t salen;
    int sock;

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        onic_error("mpi: no random name for a shared window's exchange: %m");
        return -1;
    }
    for (size_t i = 0; i < sizeof(r) && 2 * i + 2 < cap; i++)
        snprintf(token + 2 * i, 3, "%02x", r[i]);
    salen = onic_shmfd_addr(&sa, token, "win");
    sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (sock < 0 || bind(sock, (struct sockaddr *)&sa, salen) != 0 || listen(sock, n) != 0) {
        onic_error("mpi: cannot listen for a shared window's members (abstract Unix socket): "
                   "%m");
        if (sock >= 0)
            close(sock);
        return -1;
    }
    return sock;
}

/* Rank 0: hand fd to the n - 1 others; 0 or -1. A connection from anyone
 * but a member yet to come is refused and changes nothing. */
static int wsh_hand_out(int lsock, int fd, uint64_t bytes, const wsh_member_t *m, int n)
{
    uint64_t deadline = onic_time_ns() + WSH_TIMEOUT_NS;
    onic_mpi_wsh_msg_t msg = {ONIC_MPI_WSH_MAGIC, bytes};
    char *served = onic_calloc((size_t)n, 1);
    int have = 1, rc = 0;

    if (served == NULL)
        return -1;
    while (have < n) {
        struct ucred cred = {0, 0, 0};
        socklen_t clen = sizeof(cred);
        int conn, who = -1;

        if (!onic_shmfd_ready(lsock, deadline)) {
            onic_error("mpi: %d of a shared window's %d processes did not come for its memory "
                       "in time", n - have, n);
            rc = -1;
            break;
        }
        if ((conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC)) < 0)
            continue;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 &&
            cred.uid == geteuid())
            for (int r = 1; r < n && who < 0; r++)
                if (!served[r] && (long long)cred.pid == m[r].pid)
                    who = r;
        if (who < 0) {
            onic_warn("mpi: refused a connection from pid %d to a shared window's exchange: "
                      "not a member of the window", (int)cred.pid);
        } else if (onic_shmfd_send(conn, &msg, sizeof(msg), &fd, 1) != ONIC_OK) {
            onic_error("mpi: cannot hand a shared window's memory to pid %d: %m",
                       (int)cred.pid);
            rc = -1;
        } else {
            served[who] = 1;
            have++;
        }
        close(conn);
        if (rc != 0)
            break;
    }
    onic_free(served);
    return rc;
}

int onic_mpi_wsh_take(int sock, uint64_t bytes)
{
    uint64_t deadline = onic_time_ns() + WSH_TIMEOUT_NS;
    onic_mpi_wsh_msg_t msg;
    size_t len = 0;
    unsigned nfd = 0;
    int fd = -1;

    if (!onic_shmfd_ready(sock, deadline) ||
        onic_shmfd_recv(sock, &msg, sizeof(msg), &len, &fd, 1, &nfd, NULL) != ONIC_OK ||
        len != sizeof(msg) || nfd != 1 || msg.magic != ONIC_MPI_WSH_MAGIC || msg.bytes != bytes) {
        onic_error("mpi: the shared window's rank 0 did not hand over its memory (see its "
                   "errors)");
        if (nfd == 1)
            close(fd);
        return -1;
    }
    if (onic_shmfd_check(fd, (size_t)bytes, "a shared window's memory") != ONIC_OK) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The others: the descriptor from rank 0 (pid0), checked; -1 on failure. */
static int wsh_fetch(const char *token, long long pid0, uint64_t bytes)
{
    struct sockaddr_un sa;
    socklen_t salen = onic_shmfd_addr(&sa, token, "win"), clen;
    struct ucred cred;
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), fd;

    if (sock < 0) {
        onic_error("mpi: cannot make a Unix socket for a shared window: %m");
        return -1;
    }
    clen = sizeof(cred);
    if (connect(sock, (struct sockaddr *)&sa, salen) != 0 ||
        getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
        cred.uid != geteuid() || (long long)cred.pid != pid0) {
        onic_error("mpi: cannot take a shared window's memory from its rank 0 (pid %lld): %m; "
                   "are all its processes in one network namespace?", pid0);
        close(sock);
        return -1;
    }
    fd = onic_mpi_wsh_take(sock, bytes);
    close(sock);
    return fd;
}

/* wsh_map's answer when the memory could not be had and the caller can do
 * without it (MPI_Win_allocate: private memory), agreed by every member. */
#define WSH_NONE (-1)

/* Map the node's memory of bytes at *map_p (NULL if none); collective.
 * MPI_SUCCESS everywhere, or the same error class everywhere (optional:
 * WSH_NONE, with a warning, where the memory could not be had). */
static int wsh_map(onic_mpi_comm_t *c, MPI_Comm comm, const wsh_member_t *m, uint64_t bytes,
                   int optional, char **map_p, const char *call)
{
    wsh_hello_t hello;
    int fd = -1, lsock = -1, ok, all_ok = 0, rc;
    void *map = MAP_FAILED;

    memset(&hello, 0, sizeof(hello));
    if (c->rank == 0) {
        fd = onic_shmfd_create("onic-win", (size_t)bytes);
        lsock = fd < 0 || c->size == 1 ? -1 : wsh_listen(c->size, hello.token,
                                                          sizeof(hello.token));
        hello.ok = fd >= 0 && (c->size == 1 || lsock >= 0);
    }
    if ((rc = MPI_Bcast(&hello, (int)sizeof(hello), MPI_BYTE, 0, comm)) != MPI_SUCCESS)
        goto out;
    if (!hello.ok && optional) {
        onic_warn("mpi: %s: the window's rank 0 could not make %llu bytes of shared memory; "
                  "the window is in each process's own memory", call, (unsigned long long)bytes);
        rc = WSH_NONE;
        goto out;
    }
    if (!hello.ok) {
        rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "the window's rank 0 could not make %llu "
                          "bytes of shared memory (see its log)", (unsigned long long)bytes);
        goto out;
    }
    if (c->rank == 0)
        ok = c->size == 1 || wsh_hand_out(lsock, fd, bytes, m, c->size) == 0;
    else
        ok = (fd = wsh_fetch(hello.token, m[0].pid, bytes)) >= 0;
    if (ok) {
        map = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            onic_error("mpi: cannot map %llu bytes of a shared window: %m",
                       (unsigned long long)bytes);
            ok = 0;
        }
    }
    if ((rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS)
        goto out;
    if (!all_ok && optional) {
        onic_warn("mpi: %s: a process of the window could not map its shared memory (see the "
                  "log of each); the window is in each process's own memory", call);
        rc = WSH_NONE;
        goto out;
    }
    if (!all_ok) {
        rc = onic_mpi_err(c, MPI_ERR_OTHER, call, "a process of the window could not map its "
                          "shared memory (see the log of each)");
        goto out;
    }
    *map_p = map;
    map = MAP_FAILED;
out:
    if (map != MAP_FAILED)
        munmap(map, (size_t)bytes);
    if (lsock >= 0)
        close(lsock);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The window's memory: one control block per member (onic_mpi_wctl_t),
 * rounded up to a page, then each member's segment, at a multiple of
 * align (1: rank after rank with no gap). */
static int wsh_layout(onic_mpi_comm_t *c, const wsh_member_t *m, size_t align, MPI_Aint *off,
                      uint64_t *total_p, const char *call)
{
    uint64_t total = ((uint64_t)c->size * sizeof(onic_mpi_wctl_t) + 4095) & ~(uint64_t)4095;

    for (int r = 0; r < c->size; r++) {
        total = (total + align - 1) / align * align;
        off[r] = (MPI_Aint)total;
        if (m[r].size < 0 || __builtin_add_overflow(total, (uint64_t)m[r].size, &total) ||
            total > (uint64_t)PTRDIFF_MAX - align)
            return onic_mpi_err(c, MPI_ERR_SIZE, call, "the segments of the window's processes "
                                "add up to more than this machine can map");
    }
    *total_p = total;
    return MPI_SUCCESS;
}

int onic_mpi_wsh_window(MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
                        const char *call, void *baseptr, MPI_Win *win, int *made_p)
{
    onic_mpi_comm_t *c;
    onic_mpi_win_t *w;
    wsh_member_t me, *m = NULL;
    MPI_Aint *off = NULL;
    uint64_t total = 0;
    char *map = NULL;
    int rc, len, direct = 1;

    *made_p = 0;
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if ((m = onic_calloc((size_t)c->size, sizeof(*m))) == NULL ||
        (off = onic_calloc((size_t)c->size, sizeof(*off))) == NULL) {
        onic_free(m);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a window of %d processes",
                            c->size);
    }
    memset(&me, 0, sizeof(me));
    me.size = (long long)size;
    me.disp_unit = disp_unit;
    me.pid = (long long)getpid();
    me.win_shm = onic_mpi_g.win_shm;
    MPI_Get_processor_name(me.host, &len);
    wsh_node_id(me.node, sizeof(me.node));
    if ((rc = MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, m, (int)sizeof(me), MPI_BYTE,
                            comm)) != MPI_SUCCESS)
        goto out;
    /* Every member decides alike from the same facts. */
    for (int r = 0; r < c->size; r++) {
        direct &= m[r].win_shm != 0;
        if (strncmp(m[r].host, me.host, sizeof(me.host)) == 0 &&
            strncmp(m[r].node, me.node, sizeof(me.node)) == 0)
            continue;
        if (flavor == MPI_WIN_FLAVOR_SHARED)
            rc = onic_mpi_err(c, MPI_ERR_RMA_SHARED, call, "rank %d of the communicator runs "
                              "on %.64s (kernel and namespaces %.80s), this one on %.64s (%.80s): "
                              "shared memory needs every process on one node, in one network "
                              "and pid namespace (split with MPI_Comm_split_type first)", r,
                              m[r].host, m[r].node, me.host, me.node);
        goto out; /* MPI_Win_allocate: the caller makes it in private memory */
    }
    /* MPI_Win_allocate without loads and stores: in private memory. */
    if (flavor != MPI_WIN_FLAVOR_SHARED && !direct)
        goto out;
    if ((rc = wsh_layout(c, m, flavor == MPI_WIN_FLAVOR_SHARED ? 1 : 64, off, &total, call)) !=
            MPI_SUCCESS ||
        (rc = wsh_map(c, comm, m, total, flavor != MPI_WIN_FLAVOR_SHARED, &map, call)) !=
            MPI_SUCCESS) {
        if (rc == WSH_NONE)
            rc = MPI_SUCCESS;
        goto out;
    }
    /* A segment of no bytes has no address (NULL), as MPICH gives it too. */
    rc = onic_mpi_win_make(size > 0 ? map + off[c->rank] : NULL, size, disp_unit, comm, flavor,
                           0, call, win);
    if (rc != MPI_SUCCESS)
        goto out;
    w = onic_mpi_win_get(*win, call, &rc);
    w->shm = map;
    w->shm_len = (size_t)total;
    w->shm_off = off;
    w->ctl = direct ? (onic_mpi_wctl_t *)(void *)map : NULL;
    w->model = MPI_WIN_UNIFIED;
    *(void **)baseptr = w->base;
    *made_p = 1;
    map = NULL;
    off = NULL;
out:
    if (map != NULL)
        munmap(map, (size_t)total);
    onic_free(off);
    onic_free(m);
    return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_allocate_shared";
    onic_mpi_comm_t *c;
    int rc, made;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL ||
        (rc = onic_mpi_info_check(c, info, 1, call)) != MPI_SUCCESS)
        return rc;
    if (baseptr == NULL || win == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL; pass where to store it",
                            baseptr == NULL ? "baseptr" : "win");
    if (size < 0)
        return onic_mpi_err(c, MPI_ERR_SIZE, call, "size %lld is negative", (long long)size);
    if (disp_unit <= 0)
        return onic_mpi_err(c, MPI_ERR_DISP, call, "disp_unit %d; use 1 or more (the size "
                            "of the window's elements)", disp_unit);
    rc = onic_mpi_wsh_window(size, disp_unit, comm, MPI_WIN_FLAVOR_SHARED, call, baseptr, win,
                             &made);
    if (rc == MPI_SUCCESS)
        onic_mpi_win_hints(*win, info);
    return rc;
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_shared_query";
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return onic_mpi_win_err(w, MPI_ERR_RMA_FLAVOR, call, "the window was not made by "
                                "MPI_Win_allocate_shared; only such windows share memory");
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, call, "%s is NULL", size == NULL ? "size" :
                                disp_unit == NULL ? "disp_unit" : "baseptr");
    if (rank == MPI_PROC_NULL) {
        /* The segment of the lowest rank that has memory (rank 0's if none has). */
        rank = 0;
        for (int r = w->comm->size - 1; r >= 0; r--)
            if (w->sizes[r] > 0)
                rank = r;
    } else if (rank < 0 || rank >= w->comm->size) {
        return onic_mpi_win_err(w, MPI_ERR_RANK, call, "rank %d is not in the window's group "
                                "(0 to %d, or MPI_PROC_NULL)", rank, w->comm->size - 1);
    }
    *size = w->sizes[rank];
    *disp_unit = w->disp_units[rank];
    *(void **)baseptr = w->shm != NULL && w->sizes[rank] > 0 ? w->shm + w->shm_off[rank] : NULL;
    return MPI_SUCCESS;
}
