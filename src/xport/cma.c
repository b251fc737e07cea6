#include "xport/cma.h"

#include <errno.h>
#include <sys/uio.h>

static onic_status_t cma_errno(int err)
{
    switch (err) {
    case EFAULT:
        return ONIC_ERR_INVALID_PARAM;
    case EPERM:
    case ENOSYS:
        return ONIC_ERR_UNSUPPORTED;
    default:
        return ONIC_ERR_IO;
    }
}

/* The kernel may move fewer bytes than asked (it stops at a fault or a page
 * boundary it cannot cross); go on from where it stopped. */
static onic_status_t cma_copy(pid_t pid, void *local, uint64_t raddr, size_t len, int write)
{
    size_t done = 0;

    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cma_errno(errno);
        if (n == 0)
            return ONIC_ERR_INVALID_PARAM;
        done += (size_t)n;
    }
    return ONIC_OK;
}

onic_status_t onic_xport_cma_copyv(pid_t pid, int write, struct iovec *local, unsigned n,
                                   uint64_t raddr, size_t len)
{
    size_t done = 0;

    while (done < len && n > 0) {
        struct iovec r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t got = write ? process_vm_writev(pid, local, n, &r, 1, 0)
                            : process_vm_readv(pid, local, n, &r, 1, 0);
        size_t left;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return cma_errno(errno);
        if (got == 0)
            return ONIC_ERR_INVALID_PARAM;
        done += (size_t)got;
        /* Stopped short: step over the pieces it filled. */
        for (left = (size_t)got; n > 0 && left >= local->iov_len; local++, n--)
            left -= local->iov_len;
        if (n > 0) {
            local->iov_base = (char *)local->iov_base + left;
            local->iov_len -= left;
        }
    }
    return done == len ? ONIC_OK : ONIC_ERR_INVALID_PARAM;
}

int onic_xport_cma_probe(pid_t pid, uint64_t addr, uint64_t expect)
{
    uint64_t word = 0;

    return cma_copy(pid, &word, addr, sizeof(word), 0) == ONIC_OK && word == expect;
}

onic_status_t onic_xport_cma_read(pid_t pid, void *local, uint64_t raddr, size_t len)
{
    return cma_copy(pid, local, raddr, len, 0);
}

onic_status_t onic_xport_cma_write(pid_t pid, const void *local, uint64_t raddr, size_t len)
{
    return cma_copy(pid, (void *)(uintptr_t)local, raddr, len, 1);
}
