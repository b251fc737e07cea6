/* A benchmark's scratch memory shared by two processes without a name: one
 * makes a memfd and hands its descriptor to the other over an abstract Unix
 * socket named by a random token, which the two trade by their own means
 * (the launcher's store, an MPI message) with their pids; each end checks
 * the other's pid as the kernel reports it (SO_PEERCRED). Nothing appears
 * in /dev/shm, and the memory goes with the last mapping. Plain POSIX and
 * Linux only: bench/mpi/instr.c is built against other MPI libraries too. */
#ifndef ONIC_BENCH_FDPASS_H
#define ONIC_BENCH_FDPASS_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TOKEN_LEN 32 /* hex digits */

static inline socklen_t bench_fdpass_addr(struct sockaddr_un *sa, const char *token)
{
    int n;

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "onic-bench-%s", token);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The owner: a fresh token into token[BENCH_TOKEN_LEN + 1] and a socket
 * listening under it; -1 after a message. */
static inline int bench_fdpass_listen(char *token)
{
    unsigned char rnd[BENCH_TOKEN_LEN / 2];
    struct sockaddr_un sa;
    socklen_t len;
    int s;

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        fprintf(stderr, "onic-bench: no random bytes for a token: %s\n", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(token + 2 * i, 3, "%02x", rnd[i]);
    len = bench_fdpass_addr(&sa, token);
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, len) != 0 || listen(s, 4) != 0) {
        fprintf(stderr, "onic-bench: cannot listen on an abstract Unix socket: %s\n",
                strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    return s;
}

/* The owner: hand fd to the first connection from pid peer (others are
 * refused), within 30 s; closes the listening socket. 0, or -1. */
static inline int bench_fdpass_give(int lsock, pid_t peer, int fd)
{
    char ctl[CMSG_SPACE(sizeof(int))], byte = 'f';
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {0};
    struct cmsghdr *c;
    struct pollfd p = {lsock, POLLIN, 0};
    int rc = -1;

    while (rc != 0 && poll(&p, 1, 30000) == 1) {
        struct ucred cred;
        socklen_t clen = sizeof(cred);
        int conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
            continue;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.pid != peer ||
            cred.uid != geteuid()) {
            fprintf(stderr, "onic-bench: refused pid %d, not the peer (pid %d)\n",
                    (int)cred.pid, (int)peer);
            close(conn);
            continue;
        }
        memset(ctl, 0, sizeof(ctl));
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctl;
        mh.msg_controllen = sizeof(ctl);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        rc = sendmsg(conn, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
        close(conn);
        if (rc != 0)
            break;
    }
    if (rc != 0)
        fprintf(stderr, "onic-bench: the peer (pid %d) did not take the scratch memory\n",
                (int)peer);
    close(lsock);
    return rc;
}

/* The other end: the descriptor of size bytes the owner (pid owner) hands
 * over the socket of token, or -1 after a message. */
static inline int bench_fdpass_take(const char *token, pid_t owner, size_t size)
{
    char ctl[CMSG_SPACE(sizeof(int))], byte;
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {0};
    struct cmsghdr *c;
    struct sockaddr_un sa;
    struct ucred cred;
    struct stat st;
    socklen_t len = bench_fdpass_addr(&sa, token), clen = sizeof(cred);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), fd = -1;

    if (s < 0 || connect(s, (struct sockaddr *)&sa, len) != 0 ||
        getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.pid != owner ||
        cred.uid != geteuid()) {
        fprintf(stderr, "onic-bench: cannot reach the scratch memory's owner (pid %d): %s\n",
                (int)owner, strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof(ctl);
    if (recvmsg(s, &mh, MSG_CMSG_CLOEXEC) == 1 && (c = CMSG_FIRSTHDR(&mh)) != NULL &&
        c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
    else
        fprintf(stderr, "onic-bench: the owner (pid %d) sent no descriptor\n", (int)owner);
    close(s);
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_size != (off_t)size)) {
        fprintf(stderr, "onic-bench: the owner's scratch memory is not of %zu bytes\n", size);
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A nameless region of size bytes for the owner, or -1 after a message. */
static inline int bench_fdpass_create(const char *what, size_t size)
{
    int fd = memfd_create(what, MFD_CLOEXEC);

    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        fprintf(stderr, "onic-bench: cannot make %zu bytes of scratch memory: %s\n", size,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

#endif
