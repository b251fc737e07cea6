/* onic status codes: one type for every internal call (0 ok, 1 in progress,
 * errors negative). Public APIs map these to PTL_* / MPI_ERR_* at their edge. */
#ifndef ONIC_STATUS_H
#define ONIC_STATUS_H

typedef enum onic_status {
    ONIC_OK                 =  0,
    ONIC_INPROGRESS         =  1,
    ONIC_ERR_NO_MEMORY      = -1,
    ONIC_ERR_NO_RESOURCE    = -2, /* a fixed-size queue or table is full */
    ONIC_ERR_INVALID_PARAM  = -3,
    ONIC_ERR_NO_ELEM        = -4, /* no such entry (already matched or removed) */
    ONIC_ERR_TRUNCATED      = -5,
    ONIC_ERR_UNSUPPORTED    = -6,
    ONIC_ERR_IO             = -7,
    ONIC_ERR_LAST           = -8
} onic_status_t;

/* A short lowercase description; never NULL, also for unknown values. */
const char *onic_status_str(onic_status_t status);

#endif
