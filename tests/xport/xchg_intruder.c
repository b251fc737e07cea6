/* A process outside a job that finds the job's exchange of shared memory
 * during start-up and tries to join it (test_xchg_intruder.sh). The job
 * runs with ONIC_SHM_XCHG_STOP=1, so its ranks other than 0 stop before
 * they join and rank 0 listens meanwhile.
 *
 *   xchg_intruder ONICRUN_PID NRANKS
 *
 * Finds onicrun's children, the abstract socket "@onic-<token>-shm" that
 * one of them holds (by inode, /proc/net/unix against /proc/PID/fd), and
 * connects to it twice: once with a hello copied from a genuine one
 * (rank 1, the job's size, a region's descriptor), once with garbage. Each
 * must be closed by rank 0 without a descriptor given back. Then it
 * continues the stopped ranks. Before it connects it squats every name the
 * job could use (its id is in its processes' environment): /dev/shm
 * objects onic-ID-* full of garbage, and abstract sockets of the same
 * names; the test removes the objects. Prints "xchg_intruder: pid P
 * refused N of 2" and exits 0 if both were refused, 1 if not, 2 if the
 * socket was never found. */
#include "base/shmfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../proc_state.h"

#define MAX_KIDS 16

/* The hello a joining rank sends (src/xport/shm.c), written out here. */
typedef struct hello {
    uint64_t magic; /* "onic-xcn" */
    uint32_t index;
    uint32_t count;
    uint64_t bytes;
} hello_t;

static int children(pid_t parent, pid_t *kids)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    while (d != NULL && (e = readdir(d)) != NULL && n < MAX_KIDS) {
        char path[300], buf[512], *close_paren;
        FILE *f;
        int ppid = 0;
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(buf, sizeof(buf), f) != NULL && (close_paren = strrchr(buf, ')')) != NULL &&
            sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == parent)
            kids[n++] = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Does pid hold a socket of this inode? */
static int holds(pid_t pid, unsigned long inode)
{
    char path[64], link[64], want[64], fd[400];
    DIR *d;
    struct dirent *e;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    d = opendir(path);
    while (d != NULL && !found && (e = readdir(d)) != NULL) {
        ssize_t n;
        snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
        n = readlink(fd, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            found = strcmp(link, want) == 0;
        }
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* The exchange's name (without the leading '@') that one of kids holds;
 * *holder_p its index. */
static int find_socket(const pid_t *kids, int nkids, char *name, size_t cap, int *holder_p)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[512];
    int found = 0;

    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL) {
        unsigned long inode;
        char path[256];
        size_t len;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &inode, path) != 2 ||
            strncmp(path, "@onic-", 6) != 0 || (len = strlen(path)) < 10 ||
            strcmp(path + len - 4, "-shm") != 0 || len >= cap)
            continue;
        for (int i = 0; i < nkids && !found; i++)
            if ((found = holds(kids[i], inode)))
                *holder_p = i;
        if (found)
            memcpy(name, path + 1, len); /* with its '\0' */
    }
    if (f != NULL)
        fclose(f);
    return found;
}

static int dial(const char *name)
{
    struct sockaddr_un sa;
    size_t n = strlen(name);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path + 1, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    int rc = -1;

    /* Bound but not yet listening: refused for a moment. */
    for (int i = 0; s >= 0 && i < 100; i++) {
        struct timespec nap = {0, 10000000};
        if ((rc = connect(s, (struct sockaddr *)&sa, len)) == 0 || errno != ECONNREFUSED)
            break;
        nanosleep(&nap, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "xchg_intruder: cannot connect to @%s: %s\n", name, strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    return s;
}

/* Refused: the other end closes within 10 s and hands over no descriptor. */
static int refused(int s, const char *what)
{
    struct pollfd p = {s, POLLIN, 0};
    char buf[64];
    char ctl[CMSG_SPACE(64 * sizeof(int))];
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr mh = {0};
    ssize_t n;

    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof(ctl);
    if (poll(&p, 1, 10000) != 1) {
        fprintf(stderr, "xchg_intruder: %s: no answer in 10 s\n", what);
        return 0;
    }
    n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
    if (n != 0 || mh.msg_controllen != 0) {
        fprintf(stderr, "xchg_intruder: %s: answered (%zd bytes, %zu of control) instead of "
                "closed\n", what, n, (size_t)mh.msg_controllen);
        return 0;
    }
    return 1;
}

static int send_hello(int s, int fd)
{
    hello_t h = {0x6f6e69632d78636eull, 1, 2, 1u << 20};

    return onic_shmfd_send(s, &h, sizeof(h), &fd, 1) == ONIC_OK;
}

/* The job id in pid's environment (ONIC_JOBID), into id[cap]; 0 if none. */
static int job_id(pid_t pid, char *id, size_t cap)
{
    char path[64], env[8192];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    n = fread(env, 1, sizeof(env) - 1, f);
    fclose(f);
    env[n] = '\0';
    for (size_t at = 0; at < n; at += strlen(env + at) + 1)
        if (strncmp(env + at, "ONIC_JOBID=", 11) == 0 && strlen(env + at + 11) < cap) {
            strcpy(id, env + at + 11);
            return id[0] != '\0';
        }
    return 0;
}

/* Squat every name the job could have used, from its id: /dev/shm objects
 * full of garbage and abstract sockets that listen. The job must not care.
 * The sockets stay open until we exit; the objects are the test's to remove. */
static int squat(const char *id, int nranks)
{
    static const char *const fixed[] = {"shm", "onload", "store", "boot", "bench-raw",
                                        "bench-ptl"};
    char name[128], junk[4096];
    int made = 0;

    memset(junk, 0xa5, sizeof(junk));
    for (int i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])) + nranks; i++) {
        int fd, s;
        struct sockaddr_un sa;
        size_t n;
        if (i < (int)(sizeof(fixed) / sizeof(fixed[0])))
            snprintf(name, sizeof(name), "/dev/shm/onic-%s-%s", id, fixed[i]);
        else
            snprintf(name, sizeof(name), "/dev/shm/onic-%s-shm-%d", id,
                     i - (int)(sizeof(fixed) / sizeof(fixed[0])));
        fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            made += write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk);
            close(fd);
        }
        /* The same name as an abstract socket ("@onic-ID-..."). */
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        n = strlen(name + 9);
        memcpy(sa.sun_path + 1, name + 9, n);
        s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s >= 0 && (bind(s, (struct sockaddr *)&sa,
                            (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0 ||
                       listen(s, 4) != 0))
            close(s);
    }
    return made;
}

/* The job's ranks stopped themselves before joining: let them go on. */
static void resume(const pid_t *kids, int n)
{
    for (int i = 0; i < n; i++)
        kill(kids[i], SIGCONT);
}

int main(int argc, char **argv)
{
    pid_t run, kids[MAX_KIDS];
    char name[108], id[64];
    int nkids = 0, nranks, found = 0, nref = 0, s, fd, holder = -1, stopped = 0;
    struct timespec nap = {0, 10000000};

    if (argc != 3 || (run = (pid_t)atoi(argv[1])) <= 0 || (nranks = atoi(argv[2])) < 2 ||
        nranks > MAX_KIDS) {
        fprintf(stderr, "usage: xchg_intruder ONICRUN_PID NRANKS\n");
        return 2;
    }
    /* A listing of /proc may miss a process while others come and go:
     * looked again until every rank is in it. */
    for (int i = 0; i < 2000 && !found; i++) { /* 20 s */
        nkids = children(run, kids);
        found = nkids == nranks && find_socket(kids, nkids, name, sizeof(name), &holder);
        if (!found)
            nanosleep(&nap, NULL);
    }
    /* The others must have stopped themselves before they are continued. */
    for (int i = 0; found && i < 2000 && !stopped; i++) {
        stopped = 1;
        for (int k = 0; k < nkids; k++)
            stopped &= k == holder || test_proc_state(kids[k]) == 'T';
        if (!stopped)
            nanosleep(&nap, NULL);
    }
    if (found && !stopped)
        fprintf(stderr, "xchg_intruder: the job's other ranks never stopped before joining\n");
    if (!found) {
        fprintf(stderr, "xchg_intruder: no exchange socket of onicrun %d's processes\n",
                (int)run);
        resume(kids, nkids);
        return 2;
    }
    printf("xchg_intruder: pid %d found @%s\n", (int)getpid(), name);
    fflush(stdout);

    if (job_id(kids[holder], id, sizeof(id)))
        printf("xchg_intruder: squatted %d names of job %s\n", squat(id, nranks), id);
    fflush(stdout);

    /* A genuine-looking hello: rank 1 of 2, with a region. */
    fd = memfd_create("intruder", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 1 << 20) != 0) {
        fprintf(stderr, "xchg_intruder: memfd: %s\n", strerror(errno));
        resume(kids, nkids);
        return 2;
    }
    s = dial(name);
    if (s >= 0) {
        nref += send_hello(s, fd) && refused(s, "a forged hello of rank 1");
        close(s);
    }
    /* Garbage: no magic, no descriptor. */
    s = dial(name);
    if (s >= 0) {
        static const char junk[] = "GET / HTTP/1.0\r\n\r\n";
        nref += send(s, junk, sizeof(junk), MSG_NOSIGNAL) == (ssize_t)sizeof(junk) &&
                refused(s, "garbage");
        close(s);
    }
    close(fd);
    printf("xchg_intruder: pid %d refused %d of 2\n", (int)getpid(), nref);
    fflush(stdout);
    resume(kids, nkids);
    return nref == 2 ? 0 : 1;
}
