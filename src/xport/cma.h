/* Cross-memory attach: one copy straight between two processes' memory with
 * process_vm_readv / process_vm_writev. The kernel allows it only where the
 * caller may ptrace the peer (same user; Yama's ptrace_scope, seccomp in
 * containers and pid namespaces can forbid it), so shm probes each peer once
 * at start-up and falls back to its bounce buffers where it fails. */
#ifndef ONIC_XPORT_CMA_H
#define ONIC_XPORT_CMA_H

#include <onic/status.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Whether CMA reads of pid work: read 8 bytes at addr there and compare them
 * with expect (which also proves pid is the process we think, not one in
 * another pid namespace). */
int onic_xport_cma_probe(pid_t pid, uint64_t addr, uint64_t expect);
/* ONIC_ERR_INVALID_PARAM when the peer has no such memory,
 * ONIC_ERR_UNSUPPORTED when the kernel refuses, ONIC_ERR_IO otherwise. */
onic_status_t onic_xport_cma_read(pid_t pid, void *local, uint64_t raddr, size_t len);
onic_status_t onic_xport_cma_write(pid_t pid, const void *local, uint64_t raddr, size_t len);
/* Copies of the two calls above that went through the staging buffer: the
 * kernel's own copy is slow when the destination lies 1 to 31 bytes after
 * the source modulo 4 KiB (cma.c). */
extern _Atomic uint64_t onic_xport_cma_staged;
/* The same with the local side in n pieces (at most IOV_MAX) adding up to
 * len bytes, in one call where the kernel takes it all at once; the
 * pieces are consumed (changed) on the way. */
onic_status_t onic_xport_cma_copyv(pid_t pid, int write, struct iovec *local, unsigned n,
                                   uint64_t raddr, size_t len);

#endif
