/* The NI's back ends: who runs this process's Portals.
 *
 * Two today. The local one -- this process's own state (ni.c me.c md.c eq.c
 * initiator.c and the target side) -- is no table at all: it is the body of
 * each public call, reached by a straight call, because it is the hot path.
 * The other runs the NI in the job's onload engine: each call becomes a
 * command to the engine (src/onload/client_ptl.c fills the table).
 *
 * Every public call that a back end takes starts with
 *     if (onic_ptl_backend_g != NULL)
 *         return onic_ptl_backend_g->call(...);
 * one load and one predictable branch on the local path. PtlNIInit sets
 * onic_ptl_backend_g once the back end's ni_open says PTL_OK; PtlNIFini and
 * PtlFini clear it once its ni_fini or fini does.
 *
 * How PtlNIInit finds the onload table: it is declared here and defined in
 * src/onload, a link-time dependency (both are in libonic), so nothing in
 * src/ptl includes src/onload. Registration at run time would need someone
 * to register before the first PtlNIInit, and nothing runs before it that
 * knows about onload: the process learns it is onloaded from ONIC_ONLOAD,
 * which PtlNIInit reads (the Portals tests call PtlNIInit directly, MPI
 * knows nothing of onload), and constructors are not used (STYLE.md).
 *
 * Every slot is filled: a back end implements every call below, with the
 * arguments and Portals codes of the public call it stands for. */
#ifndef ONIC_PTL_BACKEND_H
#define ONIC_PTL_BACKEND_H

#include <onic/portals.h>

struct onic_config;

typedef struct onic_ptl_backend_ops {
    /* PtlNIInit. cfg is the ONIC_* configuration when the process has no NI
     * yet; NULL when this back end already runs it (then PTL_IFACE_DUP,
     * with the handle and limits). */
    int (*ni_open)(const struct onic_config *cfg, ptl_pid_t pid, const ptl_ni_limits_t *desired,
                   ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle);
    /* PtlNIFini: PTL_OK when the NI is gone. */
    int (*ni_fini)(ptl_handle_ni_t ni_handle);
    /* PtlFini: close the NI if it can be; PTL_OK when it is gone. */
    int (*fini)(void);
    int (*ni_status)(ptl_handle_ni_t ni_handle, ptl_sr_index_t reg, ptl_sr_value_t *status);
    int (*ni_handle)(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle);
    /* PtlStartBundle (on 1) and PtlEndBundle (on 0). */
    int (*ni_bundle)(ptl_handle_ni_t ni_handle, int on);
    /* PtlGetId, PtlGetUid, PtlGetJid: the one asked for is not NULL. */
    int (*ni_ids)(ptl_handle_ni_t ni_handle, ptl_process_id_t *id, ptl_uid_t *uid,
                  ptl_jid_t *jid);
    int (*ac_entry)(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index,
                    ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
                    ptl_pt_index_t pt_index);
    /* kind: 0 PtlMEAttach, 1 PtlMEAttachAny (*pt_index is set), 2
     * PtlMEAttachOverflow. */
    int (*me_attach)(int kind, ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index,
                     ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                     ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                     ptl_handle_me_t *me_handle);
    int (*me_insert)(ptl_handle_me_t base, ptl_process_id_t match_id,
                     ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
                     ptl_unlink_t unlink, ptl_ins_pos_t position, ptl_handle_me_t *me_handle);
    int (*me_unlink)(ptl_handle_me_t me_handle);
    int (*me_unlink_async)(ptl_handle_me_t me_handle);
    /* PtlMEAttachSearch. */
    int (*me_search)(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                     ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                     ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                     ptl_md_t md, ptl_unlink_t md_unlink, ptl_handle_me_t *me_handle,
                     ptl_handle_md_t *md_handle, ptl_ovf_header_t *header);
    int (*md_attach)(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                     ptl_handle_md_t *md_handle);
    int (*md_bind)(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                   ptl_handle_md_t *md_handle);
    int (*md_unlink)(ptl_handle_md_t md_handle);
    int (*md_update)(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md,
                     ptl_handle_eq_t eq_handle);
    int (*eq_alloc)(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_eq_handler_t handler,
                    ptl_handle_eq_t *eq_handle);
    int (*eq_free)(ptl_handle_eq_t eq_handle);
    /* PtlEQPoll; PtlEQGet is a poll of one queue with timeout 0 and PtlEQWait
     * one with PTL_TIME_FOREVER. */
    int (*eq_poll)(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
                   ptl_event_t *event, int *which);
    /* PtlPutRegion (whole 0) and PtlPut (whole 1: the whole MD;
     * local_offset and length are ignored). */
    int (*put)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, int whole,
               ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
               ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
               ptl_hdr_data_t hdr_data);
    /* PtlGetRegion (whole 0) and PtlGet (whole 1), as put. */
    int (*get)(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length, int whole,
               ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
               ptl_match_bits_t match_bits, ptl_size_t remote_offset);
} onic_ptl_backend_ops_t;

/* The back end running this process's NI; NULL: this process's own state. */
extern const onic_ptl_backend_ops_t *onic_ptl_backend_g __attribute__((visibility("hidden")));

/* The onload engine's back end (src/onload/client_ptl.c). */
extern const onic_ptl_backend_ops_t onic_ptl_backend_onload;

#endif
