/* The interface between the transport front end (xport.c) and each
 * transport. A transport fills one const onic_xport_ops_t; the front end
 * validates arguments, picks the transport per peer (self for this process,
 * shm for the others) and loops on ONIC_ERR_NO_RESOURCE. */
#ifndef ONIC_XPORT_TRANSPORT_H
#define ONIC_XPORT_TRANSPORT_H

#include "xport/xport.h"

typedef struct onic_xport_ops {
    const char *name;
    onic_status_t (*open)(const onic_xport_params_t *p, void **state_p);
    void          (*close)(void *state);
    /* ONIC_ERR_NO_RESOURCE: no room now, nothing sent. */
    onic_status_t (*send)(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len);
    unsigned      (*poll)(void *state, const onic_xport_params_t *p);
    size_t        (*max_payload)(const void *state);
    uint64_t      (*drops)(const void *state);
    /* Optional: sleep until a message may have arrived or timeout_ns pass,
     * without losing a wake-up from a sender. NULL: cannot sleep. */
    void          (*sleep)(void *state, uint64_t timeout_ns);
} onic_xport_ops_t;

extern const onic_xport_ops_t onic_xport_self_ops;
extern const onic_xport_ops_t onic_xport_shm_ops;

#endif
