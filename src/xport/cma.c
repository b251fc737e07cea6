#include "xport/cma.h"
#include "base/copy.h"
#include "base/mem.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/uio.h>

/* The kernel copies with rep movsb too, and is as slow as glibc's memcpy
 * (base/copy.h) when the destination lies 1 to 31 bytes after the source
 * modulo 4 KiB: 1.3 to 2.2 GB/s instead of 7 to 10 here, at every size
 * (from 33 to 63 it loses 10% at most: less than staging would cost).
 * Such a copy goes through a staging buffer placed at the remote address's
 * offset in its page, in parts of CMA_STAGE bytes: the kernel's copy is
 * then aligned, and the local one is onic_copy's. One buffer for the
 * process, taken by one copy at a time; a copy that finds it taken, or
 * no memory for it, copies directly (slowly, but right). */
#define CMA_STAGE (256u * 1024)

static uint8_t    *cma_stage_buf;
static atomic_flag cma_stage_busy = ATOMIC_FLAG_INIT;
_Atomic uint64_t   onic_xport_cma_staged;

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

/* Whether the kernel's copy for this pair would be the slow one. */
static int cma_aliased(const void *local, uint64_t raddr, size_t len, int write)
{
    const void *remote = (const void *)(uintptr_t)raddr;

    return len > ONIC_COPY_PIECE &&
           (write ? onic_copy_skew(remote, local) : onic_copy_skew(local, remote)) - 1 < 31;
}

static onic_status_t cma_copy_staged(pid_t pid, void *local, uint64_t raddr, size_t len,
                                     int write)
{
    onic_status_t st = ONIC_OK;
    uint8_t *page, *stage;

    if (atomic_flag_test_and_set_explicit(&cma_stage_busy, memory_order_acquire))
        return cma_copy(pid, local, raddr, len, write);
    if (cma_stage_buf == NULL && (cma_stage_buf = onic_malloc(CMA_STAGE + 2 * 4096)) == NULL) {
        atomic_flag_clear_explicit(&cma_stage_busy, memory_order_release);
        return cma_copy(pid, local, raddr, len, write);
    }
    page = (uint8_t *)(((uintptr_t)cma_stage_buf + 4095) & ~(uintptr_t)4095);
    atomic_fetch_add_explicit(&onic_xport_cma_staged, 1, memory_order_relaxed);
    for (size_t done = 0, n; done < len && st == ONIC_OK; done += n) {
        n = len - done < CMA_STAGE ? len - done : CMA_STAGE;
        stage = page + ((raddr + done) & 4095);
        if (write) {
            onic_copy(stage, (uint8_t *)local + done, n);
            st = cma_copy(pid, stage, raddr + done, n, 1);
        } else if ((st = cma_copy(pid, stage, raddr + done, n, 0)) == ONIC_OK) {
            onic_copy((uint8_t *)local + done, stage, n);
        }
    }
    atomic_flag_clear_explicit(&cma_stage_busy, memory_order_release);
    return st;
}

int onic_xport_cma_probe(pid_t pid, uint64_t addr, uint64_t expect)
{
    uint64_t word = 0;

    return cma_copy(pid, &word, addr, sizeof(word), 0) == ONIC_OK && word == expect;
}

onic_status_t onic_xport_cma_read(pid_t pid, void *local, uint64_t raddr, size_t len)
{
    if (cma_aliased(local, raddr, len, 0))
        return cma_copy_staged(pid, local, raddr, len, 0);
    return cma_copy(pid, local, raddr, len, 0);
}

onic_status_t onic_xport_cma_write(pid_t pid, const void *local, uint64_t raddr, size_t len)
{
    if (cma_aliased(local, raddr, len, 1))
        return cma_copy_staged(pid, (void *)(uintptr_t)local, raddr, len, 1);
    return cma_copy(pid, (void *)(uintptr_t)local, raddr, len, 1);
}
