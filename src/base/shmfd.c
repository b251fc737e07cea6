/* Nameless shared memory and descriptors over Unix sockets (shmfd.h). */
#include "base/shmfd.h"
#include "base/log.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SHMFD_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define SHMFD_MSG_MAX 256

int onic_shmfd_create(const char *name, size_t bytes)
{
    static int told;
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), sealed = fd >= 0;

    if (fd < 0 && errno == ENOSYS) {
        fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0 && !told++)
            onic_info("shm: the kernel has no memfd_create; shared memory is an unnamed "
                      "file in /dev/shm (O_TMPFILE), not sealed");
    }
    if (fd < 0) {
        onic_error("shm: cannot make shared memory for %s: %m", name);
        return -1;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        onic_error("shm: cannot size the shared memory of %s to %zu bytes: %m", name, bytes);
        close(fd);
        return -1;
    }
    if (sealed && fcntl(fd, F_ADD_SEALS, SHMFD_SEALS) != 0) {
        onic_error("shm: cannot seal the shared memory of %s: %m", name);
        close(fd);
        return -1;
    }
    return fd;
}

onic_status_t onic_shmfd_check(int fd, size_t bytes, const char *what)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        onic_error("shm: %s is not shared memory (descriptor %d)", what, fd);
        return ONIC_ERR_INVALID_PARAM;
    }
    /* A memfd made here is sealed; an O_TMPFILE (no memfd_create) has no
     * seals to ask for (EINVAL). */
    if (seals >= 0 ? (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_SEAL)
                   : errno != EINVAL) {
        onic_error("shm: %s is shared memory that may shrink under us (seals %#x)", what,
                   seals);
        return ONIC_ERR_INVALID_PARAM;
    }
    if ((size_t)st.st_size != bytes) {
        onic_error("shm: %s has %lld bytes where this process expects %zu", what,
                   (long long)st.st_size, bytes);
        return ONIC_ERR_INVALID_PARAM;
    }
    return ONIC_OK;
}

onic_status_t onic_shmfd_send(int sock, const void *msg, size_t len, const int *fds,
                              unsigned nfds)
{
    union {
        struct cmsghdr hdr;
        char buf[CMSG_SPACE(sizeof(int) * ONIC_SHMFD_MAX)];
    } ctl;
    struct iovec iov = {(void *)msg, len};
    struct msghdr mh = {0};
    ssize_t n;

    if (len == 0 || len > SHMFD_MSG_MAX || nfds > ONIC_SHMFD_MAX || (nfds > 0 && fds == NULL))
        return ONIC_ERR_INVALID_PARAM;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > 0) {
        struct cmsghdr *c;
        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? ONIC_OK : ONIC_ERR_IO;
}

onic_status_t onic_shmfd_recv(int sock, void *msg, size_t cap, size_t *len_p, int *fds,
                              unsigned max, unsigned *nfds_p, struct ucred *cred_p)
{
    union {
        struct cmsghdr hdr;
        char buf[CMSG_SPACE(sizeof(int) * ONIC_SHMFD_MAX) + CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct iovec iov = {msg, cap};
    struct msghdr mh = {0};
    unsigned got = 0, bad = 0;
    int have_cred = 0;
    ssize_t n;

    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return n == 0 || errno == EAGAIN ? ONIC_ERR_NO_ELEM : ONIC_ERR_IO;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                if (got < max && fds != NULL)
                    fds[got++] = fd;
                else {
                    close(fd);
                    bad = 1;
                }
            }
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                   c->cmsg_len == CMSG_LEN(sizeof(struct ucred)) && cred_p != NULL) {
            memcpy(cred_p, CMSG_DATA(c), sizeof(*cred_p));
            have_cred = 1;
        }
    }
    if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || (cred_p != NULL && !have_cred)) {
        for (unsigned i = 0; i < got; i++)
            close(fds[i]);
        return ONIC_ERR_INVALID_PARAM;
    }
    *len_p = (size_t)n;
    *nfds_p = got;
    return ONIC_OK;
}

socklen_t onic_shmfd_addr(struct sockaddr_un *sa, const char *token, const char *kind)
{
    int n;

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "onic-%s-%s", token, kind);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int onic_shmfd_ready(int sock, uint64_t deadline)
{
    struct pollfd pfd = {sock, POLLIN, 0};

    for (;;) {
        uint64_t now = onic_time_ns();
        int left = now >= deadline ? 0 : (int)((deadline - now) / 1000000u) + 1, n;
        if (left > 100)
            left = 100;
        n = poll(&pfd, 1, left);
        if (n > 0)
            return 1;
        if ((n < 0 && errno != EINTR) || onic_time_ns() >= deadline)
            return 0;
    }
}
