/* onic Portals: the Portals 3.3 API with the semantics of paper 003
 * (Portals 3.0, sections 4.2 to 4.8), on onic's transports.
 *
 * One network interface per process (PTL_IFACE_DEFAULT). A process's id is
 * {nid 0 (this node), pid = its rank in the job}; a program started without
 * onicrun is a job of one process and can put and get to itself.
 *
 * Progress: the target side (what happens when a put, get, ack or reply
 * arrives) runs inside this process's own Portals calls that read events:
 * PtlEQGet, PtlEQWait and PtlEQPoll poll the transport (one poll hands over
 * a bounded number of messages), PtlEQWait sleeps when nothing arrives.
 * PtlPut and PtlGet do not poll, so what a caller starts while handling its
 * events never floods its queues. No call is thread-safe: one thread at a
 * time.
 *
 * Differences from the 3.3 specification, all from paper 003:
 * - a match entry holds a LIST of memory descriptors; PtlMDAttach appends to
 *   it and only the first one is considered when a request matches;
 * - an acknowledgment needs only its event queue to exist (the MD that sent
 *   the put may have been unlinked since); it does not count against the
 *   MD's threshold.
 * Limits of this implementation: lengths and offsets below 2^48; an I/O
 * vector MD has at most max_md_iovecs entries (PTL_MD_IOVEC_MAX) and is
 * refused under ONIC_ONLOAD (the engine cannot read the vector;
 * max_md_iovecs is 1 there); PtlGetPut is not offered. Puts and gets
 * longer than the transport's inline limit (2048 bytes) move by its RMA,
 * straight between the two MDs; a put's SEND_END then means the target has
 * taken the data.
 *
 * onic extension (marked "onic extension" below): an overflow list per
 * portal whose entries keep the headers of the puts they take, and
 * PtlMEAttachSearch, which atomically searches those headers and otherwise
 * attaches a new match entry with its memory descriptor (what MPI needs for
 * unexpected messages; paper 000, section II). */
#ifndef ONIC_PORTALS_H
#define ONIC_PORTALS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- Base types ------------------------------------------------------------ */
typedef uint64_t ptl_size_t;
typedef uint64_t ptl_handle_any_t;
typedef ptl_handle_any_t ptl_handle_ni_t;
typedef ptl_handle_any_t ptl_handle_eq_t;
typedef ptl_handle_any_t ptl_handle_md_t;
typedef ptl_handle_any_t ptl_handle_me_t;
typedef uint32_t ptl_nid_t;
typedef uint32_t ptl_pid_t;
typedef uint32_t ptl_uid_t;
typedef uint32_t ptl_jid_t;
typedef uint32_t ptl_pt_index_t;
typedef uint32_t ptl_ac_index_t;
typedef uint64_t ptl_match_bits_t;
typedef uint64_t ptl_hdr_data_t;
typedef uint32_t ptl_seq_t;
typedef int      ptl_interface_t;
typedef int      ptl_sr_index_t;
typedef int      ptl_sr_value_t;
typedef int      ptl_time_t;    /* milliseconds; PTL_TIME_FOREVER waits for ever */
typedef int      ptl_ni_fail_t;

typedef struct {
    ptl_nid_t nid;
    ptl_pid_t pid;
} ptl_process_id_t;

/* Requested (desired) and granted (actual) limits of an interface. */
typedef struct {
    int max_mes;        /* match entries */
    int max_mds;        /* memory descriptors */
    int max_eqs;        /* event queues */
    int max_ac_index;   /* highest access control index (at least 1) */
    int max_pt_index;   /* highest portal table index */
    int max_md_iovecs;  /* entries of an I/O vector MD (PTL_MD_IOVEC) */
    int max_me_list;    /* match entries per portal */
    int max_getput_md;  /* 0: PtlGetPut is not offered */
} ptl_ni_limits_t;

typedef enum { PTL_RETAIN = 0, PTL_UNLINK = 1 } ptl_unlink_t;
typedef enum { PTL_INS_BEFORE = 0, PTL_INS_AFTER = 1 } ptl_ins_pos_t;
typedef enum { PTL_ACK_REQ = 0, PTL_NOACK_REQ = 1 } ptl_ack_req_t;
#define PTL_NO_ACK_REQ PTL_NOACK_REQ /* the 3.3 specification's spelling */

typedef struct {
    void           *start;
    ptl_size_t      length;
    int             threshold;  /* operations left; PTL_MD_THRESH_INF: unlimited */
    ptl_size_t      max_size;   /* with PTL_MD_MAX_SIZE */
    unsigned int    options;    /* PTL_MD_* */
    void           *user_ptr;
    ptl_handle_eq_t eq_handle;  /* PTL_EQ_NONE: no events */
} ptl_md_t;

/* One entry of an I/O vector MD (PTL_MD_IOVEC): md.start points to an array
 * of these and md.length is how many there are. */
typedef struct {
    void      *iov_base;
    ptl_size_t iov_len;
} ptl_md_iovec_t;

typedef enum {
    PTL_EVENT_GET_START,
    PTL_EVENT_GET_END,
    PTL_EVENT_PUT_START,
    PTL_EVENT_PUT_END,
    PTL_EVENT_REPLY_START,
    PTL_EVENT_REPLY_END,
    PTL_EVENT_SEND_START,
    PTL_EVENT_SEND_END,
    PTL_EVENT_ACK,
    PTL_EVENT_UNLINK
} ptl_event_kind_t;

typedef struct {
    ptl_event_kind_t type;
    ptl_process_id_t initiator;  /* the process that caused the event */
    ptl_uid_t        uid;
    ptl_jid_t        jid;
    ptl_pt_index_t   pt_index;
    ptl_match_bits_t match_bits;
    ptl_size_t       rlength;    /* requested length */
    ptl_size_t       mlength;    /* manipulated (delivered) length */
    ptl_size_t       offset;     /* into the MD */
    ptl_handle_md_t  md_handle;
    ptl_md_t         md;         /* the MD's state after the operation */
    ptl_hdr_data_t   hdr_data;
    ptl_seq_t        link;       /* an END event: the sequence of its START */
    ptl_ni_fail_t    ni_fail_type;
    ptl_seq_t        sequence;   /* per event queue, from 0 */
} ptl_event_t;

typedef void (*ptl_eq_handler_t)(ptl_event_t *event);

/* --- Constants --------------------------------------------------------------- */
#define PTL_IFACE_DEFAULT   0
#define PTL_NID_ANY         ((ptl_nid_t)0xffffffffu)
#define PTL_PID_ANY         ((ptl_pid_t)0xffffffffu)
#define PTL_UID_ANY         ((ptl_uid_t)0xffffffffu)
#define PTL_JID_ANY         ((ptl_jid_t)0xffffffffu)
#define PTL_JID_NONE        ((ptl_jid_t)0)   /* system processes */
#define PTL_PT_INDEX_ANY    ((ptl_pt_index_t)0xffffffffu)
#define PTL_INVALID_HANDLE  ((ptl_handle_any_t)~(uint64_t)0)
#define PTL_HANDLE_NONE     PTL_INVALID_HANDLE
#define PTL_EQ_NONE         PTL_INVALID_HANDLE
#define PTL_EQ_HANDLER_NONE ((ptl_eq_handler_t)0)
#define PTL_MD_THRESH_INF   (-1)
/* onic extension, as Portals 4: an MD with start NULL and this length spans
 * the whole address space, so an offset into it is an address. One such MD
 * serves every send of a program that would otherwise bind one per send. */
#define PTL_SIZE_MAX        UINT64_MAX
#define PTL_TIME_FOREVER    (-1)
#define PTL_SR_DROP_COUNT   0
#define PTL_SR_JOB_SIZE     1   /* onic extension: processes in the NI's job */
#define PTL_SR_MAX_INLINE   2   /* onic extension: the longest put sent with its data */
#define PTL_NI_OK           0
#define PTL_NI_FAIL         1

/* MD options */
#define PTL_MD_OP_PUT              0x0001u
#define PTL_MD_OP_GET              0x0002u
#define PTL_MD_MANAGE_REMOTE       0x0004u  /* use the request's offset, not the local one */
#define PTL_MD_TRUNCATE            0x0008u  /* take what fits of a request too long */
#define PTL_MD_ACK_DISABLE         0x0010u  /* never acknowledge a put */
/* md.start is a ptl_md_iovec_t array of md.length entries; the MD is their
 * bytes in order, one flat MD of their total length for offsets, max_size,
 * truncation and events. onic copies the array when the MD is made, so it
 * need not outlive the call; an event's md.start points at that copy (alive
 * while the MD is). */
#define PTL_MD_IOVEC               0x0020u
/* The most entries an I/O vector MD may have (max_md_iovecs, not above it). */
#define PTL_MD_IOVEC_MAX           4096
#define PTL_MD_MAX_SIZE            0x0040u  /* at most max_size per operation; the MD is
                                               used up when less than max_size is left */
#define PTL_MD_EVENT_START_DISABLE 0x0080u
#define PTL_MD_EVENT_END_DISABLE   0x0100u
/* onic extension, as Portals 4's PTL_ME_EVENT_UNLINK_DISABLE: no UNLINK
 * event when the MD is unlinked automatically (the END event that used it
 * up already says so to a caller that counts). */
#define PTL_MD_EVENT_UNLINK_DISABLE 0x0200u
/* onic extension: a put from this MD sends its header alone and the target
 * pulls the data by RMA, whatever its length, where that pull is one copy
 * made by the target alone (shm's cross-memory attach); elsewhere the
 * option changes nothing. The initiator's core then copies nothing, even
 * for a put short enough to travel with its data: MPI asks for it when
 * messages go both ways at once, so each core copies what it receives,
 * once. */
#define PTL_MD_PUT_PULLED          0x0400u

/* --- Return codes ------------------------------------------------------------ */
enum {
    PTL_OK = 0,
    PTL_SEGV,              /* a NULL (or unusable) pointer argument */
    PTL_NO_SPACE,          /* out of memory or a table is full */
    PTL_ME_IN_USE,
    PTL_NAL_FAILED,
    PTL_NO_INIT,           /* PtlInit has not been called */
    PTL_IFACE_DUP,         /* the interface is already initialized (handle returned) */
    PTL_IFACE_INVALID,
    PTL_HANDLE_INVALID,
    PTL_MD_INVALID,
    PTL_ME_INVALID,
    PTL_PROCESS_INVALID,
    PTL_PT_INDEX_INVALID,
    PTL_SR_INDEX_INVALID,
    PTL_EQ_INVALID,
    PTL_EQ_DROPPED,        /* an event was returned, but earlier ones were lost */
    PTL_EQ_EMPTY,
    PTL_MD_NO_UPDATE,
    PTL_FAIL,              /* anything else; the log says what */
    PTL_AC_INDEX_INVALID,
    PTL_MD_ILLEGAL,        /* the ptl_md_t (or a region of it) is not acceptable */
    PTL_ME_LIST_TOO_LONG,
    PTL_MD_IN_USE,         /* operations on the MD are still under way */
    PTL_NI_INVALID,
    PTL_PID_INVALID,
    PTL_PT_FULL,
    PTL_OVF_MATCHED,       /* onic extension: PtlMEAttachSearch found a header */
    PTL_MAX_ERRNO
};

/* The name of a return code ("PTL_EQ_EMPTY"); never NULL. */
const char *PtlErrorStr(int errnum);

/* --- Interfaces -----------------------------------------------------------------
 * Every call below returns PTL_NO_INIT before PtlInit (and after PtlFini),
 * PTL_SEGV for a NULL output pointer, and the code naming a bad handle:
 * PTL_NI_INVALID, PTL_ME_INVALID, PTL_MD_INVALID or PTL_EQ_INVALID (also for
 * a handle of another kind, a freed object's handle and one of an interface
 * that has been finalized). */
int PtlInit(int *max_interfaces);
void PtlFini(void);
/* pid: PTL_PID_ANY or this process's rank (else PTL_PID_INVALID); iface:
 * PTL_IFACE_DEFAULT (else PTL_IFACE_INVALID). desired may be NULL; its
 * fields are clamped to what onic allows and the result written to actual
 * (may be NULL). The ACL starts with entry 0 admitting every process of the
 * job on every portal, entry 1 admitting system processes (jid PTL_JID_NONE),
 * every other entry denying all. */
int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t *desired,
              ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle);
int PtlNIFini(ptl_handle_ni_t ni_handle);
/* reg: PTL_SR_DROP_COUNT (else PTL_SR_INDEX_INVALID): messages discarded, for
 * every reason of paper 003 section 4.8 and for malformed ones;
 * PTL_SR_JOB_SIZE (onic): the processes of the job, pids 0 to that - 1, as
 * the launcher said; PTL_SR_MAX_INLINE (onic): the longest put whose data
 * leaves with the call (its memory may be used again once PtlPut returns);
 * a longer one is a large put, whose target takes the data from the MD
 * later, until its SEND_END. */
int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t reg, ptl_sr_value_t *status);
/* The interface of any handle; PTL_HANDLE_INVALID if it names nothing. */
int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);
int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t *id);
int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid);
int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid);
/* Bundles (after Portals 4): between PtlStartBundle and PtlEndBundle the
 * caller expects several operations in a row, and onic may hold messages
 * back to send them together (ofi with ONIC_OFI_BUNDLE: many in one network
 * message; the first of a bundle to each process leaves at once). What is
 * held leaves when onic next polls the network (a PtlEQGet, PtlEQWait or
 * PtlEQPoll that finds its queues empty, PtlNIStatus) or at PtlEndBundle,
 * which may wait for room as a put does; answers onic sends while it polls
 * are never held, and order between messages is kept either way. A hint:
 * without a network transport nothing is held. Bundles do not nest:
 * PtlStartBundle in a bundle keeps it open, one PtlEndBundle ends it. */
int PtlStartBundle(ptl_handle_ni_t ni_handle);
int PtlEndBundle(ptl_handle_ni_t ni_handle);

/* --- Match entries ----------------------------------------------------------
 * match_id: nid 0 or PTL_NID_ANY, pid a rank of the job or PTL_PID_ANY (else
 * PTL_PROCESS_INVALID). position PTL_INS_BEFORE puts the entry first in the
 * portal's match list, PTL_INS_AFTER last; for PtlMEInsert, just before or
 * just after base, in base's list. unlink PTL_UNLINK: the entry is unlinked
 * when its last memory descriptor is. A bad unlink or position is PTL_FAIL. */
int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
                ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                ptl_ins_pos_t position, ptl_handle_me_t *me_handle);
/* Attaches to a portal whose match and overflow lists are empty; PTL_PT_FULL
 * if there is none. */
int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index, ptl_process_id_t match_id,
                   ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                   ptl_handle_me_t *me_handle);
int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                ptl_handle_me_t *me_handle);
/* Unlinks the entry and all its memory descriptors (no UNLINK events);
 * PTL_ME_IN_USE while one of them has an operation under way. */
int PtlMEUnlink(ptl_handle_me_t me_handle);
/* onic extension: PtlMEUnlink of an entry that expects no more operations,
 * without waiting for the outcome where an onload engine runs this process's
 * Portals (there an unlink is a round trip that wakes the engine; MPI unlinks
 * a finished send's exposed buffer this way). A handle that is no entry's
 * is refused at once; a failure found later in the engine (a stale handle,
 * an entry in use) is logged, and the entry then stays. Inline, it is
 * PtlMEUnlink. */
int PtlMEUnlinkAsync(ptl_handle_me_t me_handle);

/* --- Memory descriptors -----------------------------------------------------
 * A ptl_md_t is PTL_MD_ILLEGAL when: start is NULL with a length, length is
 * 2^48 or more, threshold is negative but not PTL_MD_THRESH_INF, options
 * has unknown bits, or PTL_MD_MAX_SIZE is set with max_size above length.
 * With PTL_MD_IOVEC, "length" is the entries' total and the vector is
 * PTL_MD_ILLEGAL when: start is NULL, length (entries) is 0 or above the
 * NI's max_md_iovecs, an entry has a NULL iov_base and a nonzero iov_len,
 * or the total is 2^48 or more (or wraps); and under ONIC_ONLOAD, always.
 * The header of a put that an overflow entry's I/O vector MD took has
 * `start` NULL unless its data lies within one entry. Its eq_handle must be PTL_EQ_NONE or a live event queue
 * (else PTL_EQ_INVALID); unlink_op PTL_UNLINK or PTL_RETAIN (else
 * PTL_MD_ILLEGAL). An MD is used up when its threshold reaches 0 or, with
 * PTL_MD_MAX_SIZE, less than max_size is left after its local offset; a used
 * up MD with PTL_UNLINK is unlinked (PTL_EVENT_UNLINK), one with PTL_RETAIN
 * stays but takes no more operations. */
int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                ptl_handle_md_t *md_handle);
int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
              ptl_handle_md_t *md_handle);
/* No UNLINK event; PTL_MD_IN_USE while a get waits for its reply. */
int PtlMDUnlink(ptl_handle_md_t md_handle);
/* old_md (may be NULL) receives the current state; new_md (may be NULL)
 * replaces the descriptor (local offset back to 0) only if eq_handle is
 * PTL_EQ_NONE or that event queue is empty, else PTL_MD_NO_UPDATE. */
int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md,
                ptl_handle_eq_t eq_handle);

/* --- Event queues -----------------------------------------------------------
 * Circular: when the consumer falls behind, the oldest events are
 * overwritten and the next PtlEQGet/Wait/Poll returns PTL_EQ_DROPPED with the
 * oldest event still held. count: 1 to 2^20 (else PTL_FAIL). handler, if not
 * PTL_EQ_HANDLER_NONE, runs for each event as it is recorded, inside a
 * Portals call of this process; it may call Portals (which then does not poll
 * the transport again). */
int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_eq_handler_t handler,
               ptl_handle_eq_t *eq_handle);
int PtlEQFree(ptl_handle_eq_t eq_handle);
/* PTL_EQ_EMPTY if nothing is there after one poll of the transport. */
int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event);
int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event);
/* onic extension: PtlEQGet, the event read where the queue keeps it rather
 * than copied out (a receive's completion reads its one event once).
 * *event points into the queue, or to *spare, and stays valid until the
 * next PtlEQGetInPlace on this queue or until the queue has recorded count
 * more events (an overflow, which the next read reports as PTL_EQ_DROPPED),
 * whichever comes first; PtlEQGet and PtlEQPoll in between leave it alone.
 * The read that empties the queue copies the event to *spare (the queue
 * then starts again at its first slot, which keeps a queue drained as it
 * fills in cache), and so does a queue kept by another process (the onload
 * engine). */
int PtlEQGetInPlace(ptl_handle_eq_t eq_handle, const ptl_event_t **event, ptl_event_t *spare);
/* The first of size queues (1 to 64) to hold an event, within timeout ms
 * (PTL_TIME_FOREVER: no limit; 0: look once); *which is its position.
 * PTL_EQ_EMPTY after the timeout. */
int PtlEQPoll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout, ptl_event_t *event,
              int *which);

/* --- Access control ---------------------------------------------------------
 * Entry ac_index admits requests from match_id (wildcards allowed) with that
 * uid and jid (or PTL_UID_ANY / PTL_JID_ANY) on pt_index (or
 * PTL_PT_INDEX_ANY). Requests from this job carry this process's uid and
 * jid. */
int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index, ptl_process_id_t match_id,
               ptl_uid_t uid, ptl_jid_t jid, ptl_pt_index_t pt_index);

/* --- Data movement ----------------------------------------------------------
 * target_id must be {0, a rank of the job} (else PTL_PROCESS_INVALID);
 * pt_index and ac_index within this interface's limits (else
 * PTL_PT_INDEX_INVALID / PTL_AC_INDEX_INVALID; the target drops what is
 * beyond its own). The MD must not be used up (else PTL_MD_INVALID); a region
 * outside it is PTL_MD_ILLEGAL. A put counts as one operation of its MD
 * (SEND_START, SEND_END, then UNLINK if that used it up); an acknowledgment
 * is requested only if the MD has an event queue. A get's reply counts as
 * one operation of its MD (REPLY_START, REPLY_END) and lands at the region's
 * start, truncated to the region. */
int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
           ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
           ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);
int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                 ptl_hdr_data_t hdr_data);
int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
           ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset);
int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                 ptl_match_bits_t match_bits, ptl_size_t remote_offset);

/* --- onic extension: overflow lists and PtlMEAttachSearch --------------------
 * Each portal has, besides its match list, an OVERFLOW list searched only
 * when no entry of the match list takes a request (the same rules: match
 * criteria, first MD only, skip if it rejects). A put that lands in an
 * overflow entry's MD is delivered there as usual (events and all) and its
 * header is also kept, oldest first, in the portal's list of unexpected
 * headers. PtlMEAttachSearch then looks for the oldest kept header that
 * matches (match_id, match_bits, ignore_bits):
 *   - found: the header is removed from the list and copied to *header, and
 *     the call returns PTL_OVF_MATCHED; nothing is attached;
 *   - not found: a match entry is attached to the portal's match list at
 *     position (as PtlMEAttach) with md attached to it (as PtlMDAttach), and
 *     the call returns PTL_OK with both handles.
 * No message can arrive between the search and the attach: the target side
 * runs only inside this process's Portals calls (or, later, as one command
 * of the onload engine), and this call does not poll the transport. So a put
 * goes either into the new entry or into the overflow list, never lost
 * between them. A header's data stays in the overflow MD: `start` points at
 * it and is the caller's to consume before that memory is reused. */
typedef struct {
    ptl_process_id_t initiator;
    ptl_pt_index_t   pt_index;
    ptl_match_bits_t match_bits;
    ptl_size_t       rlength;    /* what the initiator sent */
    ptl_size_t       mlength;    /* what landed in the overflow MD */
    ptl_size_t       offset;     /* where, in that MD */
    ptl_handle_md_t  md_handle;  /* the overflow MD */
    void            *start;      /* the data: md.start + offset (NULL if mlength is 0, or for
                                    an I/O vector MD, if it spans entries) */
    ptl_hdr_data_t   hdr_data;
} ptl_ovf_header_t;

/* Like PtlMEAttach, into pt_index's overflow list. PtlMEInsert next to an
 * overflow entry inserts into the overflow list. */
int PtlMEAttachOverflow(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                        ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                        ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                        ptl_ins_pos_t position, ptl_handle_me_t *me_handle);
int PtlMEAttachSearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                      ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                      ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                      ptl_md_t md, ptl_unlink_t md_unlink, ptl_handle_me_t *me_handle,
                      ptl_handle_md_t *md_handle, ptl_ovf_header_t *header);

#ifdef __cplusplus
}
#endif

#endif
