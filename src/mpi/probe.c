/* Matched probe: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv (and
 * MPI_Message_c2f/f2c).
 *
 * A probe finds the oldest matching message the way MPI_Iprobe does (the
 * pulled list, then Portals' overflow list through PtlMEAttachSearch), and
 * then takes its header out of the pulled list: from there on no receive
 * or probe can match it, whatever other threads or calls do, and only the
 * MPI_Mrecv given its MPI_Message receives it (eager data copied from its
 * unexpected buffer, a rendezvous message pulled, as any receive that found
 * the header would). */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

typedef struct probe_msg {
    int              handle;
    MPI_Comm         comm;   /* its handle: looked up again when received */
    ptl_ovf_header_t hdr;
} probe_msg_t;

/* Made on first use; MPI_MESSAGE_NO_PROC is the object at index 0. */
static onic_mpi_htab_t msg_tab;
static int msg_ready;
static probe_msg_t msg_noproc = {.handle = MPI_MESSAGE_NO_PROC, .comm = MPI_COMM_NULL};

static int msg_init(void)
{
    if (msg_ready)
        return 0;
    onic_mpi_htab_init(&msg_tab, ONIC_MPI_KIND_MSG);
    if (onic_mpi_htab_set(&msg_tab, 0, &msg_noproc) != 0)
        return -1;
    msg_ready = 1;
    return 0;
}

void onic_mpi_probe_fini(void)
{
    if (!msg_ready)
        return;
    for (int i = 1; i < msg_tab.used; i++)
        onic_free(msg_tab.obj[i]);
    onic_mpi_htab_fini(&msg_tab);
    msg_ready = 0;
}

static void probe_status_noproc(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    status->onic_count = 0;
    status->onic_cancelled = 0;
}

/* The checks Iprobe makes, and the output arguments. */
static int probe_check(const char *call, int source, int tag, MPI_Comm comm, int *flag,
                       MPI_Message *message, MPI_Status *status, onic_mpi_comm_t **c_p)
{
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= c->npeers))
        return onic_mpi_err(c, MPI_ERR_RANK, call, "source %d is not a rank of the "
                            "communicator (0 to %d), MPI_ANY_SOURCE or MPI_PROC_NULL", source,
                            c->npeers - 1);
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > ONIC_MPI_TAG_UB))
        return onic_mpi_err(c, MPI_ERR_TAG, call, "tag %d is out of range (0 to %d, or "
                            "MPI_ANY_TAG)", tag, ONIC_MPI_TAG_UB);
    if ((rc = onic_mpi_asserts_check(c, source, tag, call)) != MPI_SUCCESS)
        return rc;
    if (flag == NULL || message == NULL || status == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL", flag == NULL ? "flag"
                            : message == NULL ? "message"
                                              : "status (use MPI_STATUS_IGNORE)");
    if (msg_init() != 0)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for the message table");
    *c_p = c;
    return MPI_SUCCESS;
}

static int probe_take(onic_mpi_comm_t *c, MPI_Comm comm, int source, int tag, int *flag,
                      MPI_Message *message, MPI_Status *status, const char *call)
{
    probe_msg_t *m;
    int rc;

    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        probe_status_noproc(status);
        return MPI_SUCCESS;
    }
    /* Room first: once the header is out of matching it must not be lost. */
    if ((m = onic_malloc(sizeof(*m))) == NULL ||
        onic_mpi_htab_add(&msg_tab, m, &m->handle) != 0) {
        onic_free(m);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a message handle");
    }
    rc = onic_mpi_p2p_improbe(c, source, tag, flag, &m->hdr, call);
    if (rc != MPI_SUCCESS || !*flag) {
        onic_mpi_htab_del_live(&msg_tab, m->handle);
        onic_free(m);
        return rc;
    }
    m->comm = comm;
    *message = m->handle;
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_p2p_hdr_status(&m->hdr, status);
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c = NULL;   /* set when rc is MPI_SUCCESS (gcc -O3 cannot tell) */
    int rc = probe_check("MPI_Improbe", source, tag, comm, flag, message, status, &c);

    if (rc != MPI_SUCCESS)
        return rc;
    return probe_take(c, comm, source, tag, flag, message, status, "MPI_Improbe");
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c = NULL;   /* as in MPI_Improbe */
    int flag = 0, rc = probe_check("MPI_Mprobe", source, tag, comm, &flag, message, status, &c);

    if (rc != MPI_SUCCESS)
        return rc;
    for (;;) {
        rc = probe_take(c, comm, source, tag, &flag, message, status, "MPI_Mprobe");
        if (rc != MPI_SUCCESS || flag)
            return rc;
        onic_mpi_progress(1);
    }
}

/* Check a receive of *message and start it: *r_p the request. */
static int mrecv_start(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                       const char *call, onic_mpi_req_t **r_p)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    probe_msg_t *m;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if (message == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "message is NULL");
    m = msg_ready ? onic_mpi_htab_get(&msg_tab, *message) : NULL;
    if (m == NULL)
        return onic_mpi_err(NULL, MPI_ERR_REQUEST, call, "message %#x is not a message from "
                            "MPI_Mprobe or MPI_Improbe (or it was received already: each is "
                            "received once)", (unsigned)*message);
    /* A communicator freed since the probe: errors go to MPI_COMM_WORLD's handler. */
    c = m == &msg_noproc ? onic_mpi_g.world : onic_mpi_comm_lookup(m->comm);
    if (c == NULL)
        c = onic_mpi_g.world;
    if (count < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "count %d is negative", count);
    if ((t = onic_mpi_type_check(datatype, c, call, &rc)) == NULL)
        return rc;
    if (buf == NULL && count > 0 && t->size > 0)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "buf is NULL with count %d", count);
    if (t->size * (size_t)count > ONIC_MPI_LEN_MAX)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "count %d of this type is more bytes than "
                            "onic moves in one message", count);
    if (m == &msg_noproc) {
        rc = onic_mpi_req_mrecv(buf, count, t, c, MPI_PROC_NULL, NULL, call, r_p);
    } else {
        int source = (int)(m->hdr.match_bits >> 24 & 0xffffff);
        /* The header is read when the receive starts, here: then it can go. */
        rc = onic_mpi_req_mrecv(buf, count, t, c, source, &m->hdr, call, r_p);
        if (rc != MPI_SUCCESS)
            return rc;
        onic_mpi_htab_del_live(&msg_tab, m->handle);
        onic_free(m);
    }
    if (rc == MPI_SUCCESS)
        *message = MPI_MESSAGE_NULL;
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *r;
    int rc;

    if (request == NULL) {
        ONIC_MPI_CHECK_INIT("MPI_Imrecv");
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Imrecv", "request is NULL; pass where to "
                            "store the request");
    }
    if ((rc = mrecv_start(buf, count, datatype, message, "MPI_Imrecv", &r)) != MPI_SUCCESS)
        return rc;
    *request = r->handle;
    return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *r;
    MPI_Status s;
    onic_mpi_comm_t *c;
    int rc;

    if (status == NULL) {
        ONIC_MPI_CHECK_INIT("MPI_Mrecv");
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Mrecv", "status is NULL; use "
                            "MPI_STATUS_IGNORE");
    }
    if ((rc = mrecv_start(buf, count, datatype, message, "MPI_Mrecv", &r)) != MPI_SUCCESS)
        return rc;
    while (!r->complete)
        onic_mpi_progress(1);
    s = r->status;
    c = r->comm;
    onic_mpi_req_free(r);
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    if (s.MPI_ERROR == MPI_ERR_TRUNCATE)
        return onic_mpi_err(c, MPI_ERR_TRUNCATE, "MPI_Mrecv", "the message from rank %d (tag "
                            "%d) is longer than the receive buffer (%lld bytes kept); receive "
                            "with a larger count (the probe's status gives its size)",
                            s.MPI_SOURCE, s.MPI_TAG, s.onic_count);
    if (s.MPI_ERROR != MPI_SUCCESS)
        return onic_mpi_err(c, s.MPI_ERROR, "MPI_Mrecv", "the receive failed (see the log "
                            "above)");
    return MPI_SUCCESS;
}

/* Fortran's integer is the handle itself: no lookup, no error (MPI defines
 * none for these; a bad handle is found where it is used). */
MPI_Fint MPI_Message_c2f(MPI_Message message)
{
    return (MPI_Fint)message;
}

MPI_Message MPI_Message_f2c(MPI_Fint message)
{
    return (MPI_Message)message;
}

MPI_Fint PMPI_Message_c2f(MPI_Message message) __attribute__((alias("MPI_Message_c2f")));
MPI_Message PMPI_Message_f2c(MPI_Fint message) __attribute__((alias("MPI_Message_f2c")));
