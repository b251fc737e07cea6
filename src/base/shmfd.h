/* Shared memory without names: memory made by memfd_create and handed to
 * the job's other processes as file descriptors, inherited from onicrun or
 * passed over a Unix socket (SCM_RIGHTS), so that nothing of a job ever
 * appears in /dev/shm or any other directory: no name to race for or to
 * squat, nothing left behind however the processes end (the kernel frees
 * the memory with its last descriptor and mapping).
 *
 * Memory made here is sealed against shrinking and growing (F_SEAL_SHRINK,
 * F_SEAL_GROW, F_SEAL_SEAL): a process that maps memory it was handed
 * checks the seals and the size first (onic_shmfd_check), so no one holding
 * the descriptor can cut the mapping short under it (SIGBUS). */
#ifndef ONIC_BASE_SHMFD_H
#define ONIC_BASE_SHMFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <onic/status.h>

/* Descriptors one message carries at most (the kernel's SCM_MAX_FD is 253). */
#define ONIC_SHMFD_MAX 128

/* A descriptor of bytes of zeroed, sealed, nameless shared memory, close-on-
 * exec; name shows only in /proc/PID/maps ("/memfd:NAME"). Where the kernel
 * has no memfd_create, an O_TMPFILE file in /dev/shm (nameless too, not
 * sealed), and says so once. -1 with an error logged on failure. */
int onic_shmfd_create(const char *name, size_t bytes);

/* Whether fd is shared memory of exactly bytes that cannot shrink (sealed,
 * or an O_TMPFILE that only our own can hold); logs what is wrong, naming
 * what, and returns ONIC_ERR_INVALID_PARAM if not. */
onic_status_t onic_shmfd_check(int fd, size_t bytes, const char *what);

/* One message of len bytes (at most 256) with nfds descriptors. */
onic_status_t onic_shmfd_send(int sock, const void *msg, size_t len, const int *fds,
                              unsigned nfds);

/* One message into msg (cap bytes) and up to max descriptors (close-on-
 * exec), the sender's credentials as the kernel saw them if cred_p (the
 * socket needs SO_PASSCRED). A message with more descriptors than max, or
 * longer than cap, is refused with every descriptor it carried closed.
 * ONIC_ERR_NO_ELEM: the peer closed (or, on a non-blocking socket, nothing
 * waits: errno EAGAIN). */
onic_status_t onic_shmfd_recv(int sock, void *msg, size_t cap, size_t *len_p, int *fds,
                              unsigned max, unsigned *nfds_p, struct ucred *cred_p);

/* The abstract Unix socket address "onic-TOKEN-KIND" (no file anywhere:
 * the name goes with the socket); its length for bind and connect. */
socklen_t onic_shmfd_addr(struct sockaddr_un *sa, const char *token, const char *kind);

/* Wait until sock can be read (1), or the deadline on onic_time_ns()'s
 * clock passes (0). */
int onic_shmfd_ready(int sock, uint64_t deadline);

#endif
