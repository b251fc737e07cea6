/* Portals for the layers above it inside libonic (MPI): calls whose
 * arguments the caller has checked once at its own boundary, so they are
 * not checked again, and that take a receive's fields rather than a
 * descriptor to build and copy. Each falls back to its public call when
 * what it assumes does not hold (a back end such as the onload engine
 * serves the NI, a list that does not exist yet or is full, no room for
 * an MD), which then checks everything and says what is wrong. */
#ifndef ONIC_PTL_POST_H
#define ONIC_PTL_POST_H

#include <onic/portals.h>

/* PtlMEAttachSearch of a one-shot receive: an entry (PTL_UNLINK, after the
 * list's others) carrying one MD over [start, start + length) with
 * threshold 1, options, user_ptr and eq, unlinked with it; or, if an
 * unexpected header matches, that header in *header and PTL_OVF_MATCHED.
 * The caller guarantees what PtlMEAttachSearch checks: a live NI and
 * event queue, a portal index and match_id of this job, an MD that
 * PtlMDAttach takes. */
int onic_ptl_recv_post(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                       ptl_match_bits_t ignore_bits, void *start, ptl_size_t length,
                       unsigned options, void *user_ptr, ptl_handle_eq_t eq,
                       ptl_handle_me_t *me_handle, ptl_ovf_header_t *header);

/* The search half of that PtlMEAttachSearch alone, for a receive that has
 * nowhere to wait (MPI_Recv keeps no request while its message is already
 * here): 1 and the oldest unexpected header matching in *header, taken out
 * of the portal; 0 and nothing changed when none matches, or when a back
 * end serves the NI (its headers are not in this process: the caller then
 * posts as usual). The caller guarantees a portal index and match_id of
 * this job. */
int onic_ptl_recv_take(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                       ptl_match_bits_t ignore_bits, ptl_ovf_header_t *header);

/* Whether portal pt_index of this process's NI has an entry on its list (a
 * receive posted, waiting for its message): 0 when not, or when a back end
 * serves the NI. The caller guarantees a portal index of this job. */
int onic_ptl_recv_posted(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index);
/* Whether a put of data from a PTL_MD_PUT_PULLED MD to target (a rank of
 * the job) goes as its header alone, the target pulling the data in one
 * copy of its own (shm, where the kernel allows cross-memory attach); 0
 * when it would carry its data, or when a back end serves the NI. */
int onic_ptl_put_pulls(ptl_handle_ni_t ni_handle, uint32_t target);

/* The event queue behind eq_handle, to read with onic_ptl_eq_get_inplace
 * instead of PtlEQGetInPlace (no lookup of the handle a read): NULL when a
 * back end serves the NI (its queues are not in this process) or the queue
 * has a handler. Valid until the queue is freed. */
struct onic_ptl_eq;
struct onic_ptl_eq *onic_ptl_eq_find_local(ptl_handle_eq_t eq_handle);
/* PtlEQGetInPlace on such a queue: the same contract (an empty queue polls
 * once), for a caller that frees the queue only when done reading it. */
int onic_ptl_eq_get_inplace(struct onic_ptl_eq *eq, const ptl_event_t **event,
                             ptl_event_t *spare);
/* PtlEQPoll(timeout 0) on size such queues of one NI, read in place as
 * above; *which: the queue read. */
int onic_ptl_eq_poll_inplace(struct onic_ptl_eq *const *eqs, int size,
                             const ptl_event_t **event, ptl_event_t *spare, int *which);

/* A sleep another thread can end, for MPI_THREAD_MULTIPLE's waits, which
 * sleep without the lock that keeps one caller at a time in Portals:
 * onic_xport_sleep_arm's contract (xport.h) for this process's NI, armed
 * and disarmed holding that lock. 0, nothing armed: something waits (a
 * handler's call, an arrival), a back end serves the NI, or its transport
 * cannot sleep so; the caller then sleeps its own way. */
int  onic_ptl_sleep_arm(ptl_handle_ni_t ni_handle, uint32_t **word, uint32_t *val,
                        uint64_t *max_ns);
void onic_ptl_sleep_disarm(ptl_handle_ni_t ni_handle);

#endif
