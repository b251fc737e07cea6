/* Portals over the onload rings: the records a process whose Portals runs in
 * the engine (src/onload/client_ptl.c) and the engine (src/onload/serve.c) send
 * each other. One command per Portals call; every call but a put or an
 * unlink marked "no answer wanted" is answered by one ANSWER, in order.
 * Events, the data the target side writes into the process's MDs, and the
 * news that a bound MD is gone come on the event ring in the order the
 * engine made them, so a process applying its records in order has the data
 * in place before the event that reports it. Both sides run the same build
 * (the rings' version is checked at attach). */
#ifndef ONIC_ONLOAD_PROTO_H
#define ONIC_ONLOAD_PROTO_H

#include <assert.h>
#include <stdint.h>
#include <onic/portals.h>
#include "onload/onload.h"

#define ONIC_ONLOAD_CMD_PTL    8  /* onic_onload_call_t [+ a put's data] */

#define ONIC_ONLOAD_EVT_ANSWER 16 /* onic_onload_reply_t: the last call's outcome */
#define ONIC_ONLOAD_EVT_EVENT  17 /* onic_onload_event_t: into the process's queue */
#define ONIC_ONLOAD_EVT_DATA   18 /* uint64_t address, then the bytes to write there */
#define ONIC_ONLOAD_EVT_MD_GONE 19 /* ptl_handle_md_t: a bound MD was unlinked */
#define ONIC_ONLOAD_EVT_FAILED 20 /* onic_onload_reply_t (value: the op): a put or
                                     unlink the process did not wait for failed in
                                     the engine */

typedef enum onic_onload_op {
    ONIC_ONLOAD_OP_NI_INIT = 1,
    ONIC_ONLOAD_OP_NI_FINI,
    ONIC_ONLOAD_OP_NI_STATUS,
    ONIC_ONLOAD_OP_NI_HANDLE,
    ONIC_ONLOAD_OP_AC_ENTRY,
    ONIC_ONLOAD_OP_ME_ATTACH,     /* flag: 0 attach, 1 any portal, 2 overflow */
    ONIC_ONLOAD_OP_ME_INSERT,
    ONIC_ONLOAD_OP_ME_UNLINK,     /* flag: 2 no answer wanted */
    ONIC_ONLOAD_OP_ME_SEARCH,
    ONIC_ONLOAD_OP_MD_ATTACH,
    ONIC_ONLOAD_OP_MD_BIND,
    ONIC_ONLOAD_OP_MD_UNLINK,
    ONIC_ONLOAD_OP_MD_UPDATE,     /* flag: 1 old wanted, 2 new given */
    ONIC_ONLOAD_OP_EQ_ALLOC,
    ONIC_ONLOAD_OP_EQ_FREE,
    ONIC_ONLOAD_OP_PUT,           /* flag: 1 whole MD, 2 no answer wanted */
    ONIC_ONLOAD_OP_GET,           /* flag: 1 whole MD */
    ONIC_ONLOAD_OP_READY,         /* no answer: deliver arrivals from now on */
    ONIC_ONLOAD_OP_LAST = ONIC_ONLOAD_OP_READY
} onic_onload_op_t;

/* A call's arguments; each op uses the fields its Portals call has. */
typedef struct onic_onload_call {
    uint32_t         op;
    uint32_t         flag;
    uint64_t         h;       /* the handle the call is on (NI, ME, MD or EQ) */
    uint64_t         h2;      /* MD_UPDATE: the event queue to test */
    ptl_process_id_t id;      /* match_id or target_id */
    uint32_t         pt, ac;
    uint32_t         unlink, pos;   /* PUT: ack_req in unlink */
    uint32_t         md_unlink, nbytes; /* PUT: how many bytes of data follow */
    ptl_match_bits_t bits, ignore;
    uint64_t         off, len, roff, hdr; /* NI_STATUS: the register in off;
                                             EQ_ALLOC: count in len;
                                             MD_UPDATE: the queue's next unread
                                             sequence in off, UINT64_MAX if
                                             events wait in it */
    union {
        ptl_md_t md;
        struct {
            uint32_t        rank, size;
            ptl_uid_t       uid;
            ptl_jid_t       jid;
            uint32_t        have_limits, pad;
            ptl_ni_limits_t limits;
            char            engine[16];  /* ONIC_MATCH of the process; "" default */
        } init;
    } u;
} onic_onload_call_t;

typedef struct onic_onload_reply {
    int32_t  rc;
    uint32_t pt;              /* ME_ATTACH any: the portal */
    uint64_t h, h2;           /* handles made */
    int64_t  value;           /* NI_STATUS */
    union {
        ptl_ni_limits_t  limits;  /* NI_INIT */
        ptl_ovf_header_t hdr;     /* ME_SEARCH, PTL_OVF_MATCHED */
        ptl_md_t         md;      /* MD_UPDATE: the old state */
    } u;
} onic_onload_reply_t;

typedef struct onic_onload_event {
    ptl_handle_eq_t eq;
    ptl_event_t     ev;
} onic_onload_event_t;

/* The largest put whose data travels with its call; a larger one, or one
 * from an MD the process does not know the address of, moves by RMA. */
#define ONIC_ONLOAD_PUT_INLINE 4096u
/* The largest write the engine sends as DATA rather than by CMA. */
#define ONIC_ONLOAD_DATA_INLINE 4096u

static_assert(sizeof(onic_onload_call_t) + ONIC_ONLOAD_PUT_INLINE <= ONIC_ONLOAD_MSG_MAX,
              "a put with its data is one record");
static_assert(sizeof(uint64_t) + ONIC_ONLOAD_DATA_INLINE <= ONIC_ONLOAD_MSG_MAX,
              "a DATA record fits a reader's buffer");

/* Ring slots an exchange may need at once: the engine takes a command only
 * with this much room in the process's event ring (its answer, events,
 * MD news, and DATA for an arrival), so rings must be at least this big. */
#define ONIC_ONLOAD_EVT_NEED(rec) \
    ((sizeof(uint64_t) + ONIC_ONLOAD_DATA_INLINE + 8 + (rec) - 1) / (rec) + \
     8 * ((sizeof(onic_onload_event_t) + 8 + (rec) - 1) / (rec)))
#define ONIC_ONLOAD_CMD_NEED(rec) \
    ((sizeof(onic_onload_call_t) + ONIC_ONLOAD_PUT_INLINE + 8 + (rec) - 1) / (rec))

#endif
