/* MPI_Init and MPI_Finalize, and the calls that describe the library.
 *
 * A program started without onicrun is a job of one process: the config
 * registry then reads ONIC_RANK 0 and ONIC_SIZE 1, and Portals opens a
 * transport that only reaches the process itself. */
#include "mpi/mpi_impl.h"
#include "base/log.h"
#include "base/mem.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

onic_mpi_state_t onic_mpi_g;
static pthread_t init_thread; /* MPI_Is_thread_main's */

static void init_tables(void)
{
    onic_mpi_htab_init(&onic_mpi_g.comms, ONIC_MPI_KIND_COMM);
    onic_mpi_htab_init(&onic_mpi_g.groups, ONIC_MPI_KIND_GROUP);
    onic_mpi_htab_init(&onic_mpi_g.types, ONIC_MPI_KIND_TYPE);
    onic_mpi_htab_init(&onic_mpi_g.ops, ONIC_MPI_KIND_OP);
    onic_mpi_htab_init(&onic_mpi_g.reqs, ONIC_MPI_KIND_REQ);
    onic_mpi_htab_init(&onic_mpi_g.errhs, ONIC_MPI_KIND_ERRH);
    onic_pool_init(&onic_mpi_g.req_pool, sizeof(onic_mpi_req_t), 64);
}

static void fini_tables(void)
{
    onic_mpi_htab_t *t = &onic_mpi_g.reqs;

    /* Requests never completed (reported by MPI_Finalize) go with the pool. */
    (void)t;
    onic_pool_fini(&onic_mpi_g.req_pool);
    onic_mpi_htab_fini(&onic_mpi_g.comms);
    onic_mpi_htab_fini(&onic_mpi_g.groups);
    onic_mpi_htab_fini(&onic_mpi_g.types);
    onic_mpi_op_fini();
    onic_mpi_scratch_fini();
    onic_mpi_attr_fini();
    onic_mpi_errh_fini();
    onic_mpi_htab_fini(&onic_mpi_g.ops);
    onic_mpi_htab_fini(&onic_mpi_g.reqs);
    onic_mpi_htab_fini(&onic_mpi_g.errhs);
}

/* Every process must split messages and unexpected space the same way, or
 * an eager message could find no room at its receiver. */
static int init_check_agreement(void)
{
    long long mine[4] = {(long long)onic_mpi_g.eager_limit, -(long long)onic_mpi_g.eager_limit,
                         (long long)onic_mpi_g.credits_per_peer, -(long long)onic_mpi_g.credits_per_peer};
    long long all[4];
    int rc = MPI_Allreduce(mine, all, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);

    if (rc != MPI_SUCCESS)
        return rc;
    if (all[0] != -all[1] || all[2] != -all[3])
        return onic_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Init", "the processes of this job have "
                            "different ONIC_EAGER_LIMIT (%lld to %lld) or ONIC_EAGER_CREDITS "
                            "(%lld to %lld bytes of credit); give every process the same values", -all[1],
                            all[0], -all[3], all[2]);
    return MPI_SUCCESS;
}

/* Every level is provided as asked. Below MPI_THREAD_MULTIPLE no call
 * takes a lock: the program promises one thread in MPI at a time. A later
 * MPI_Init_thread or MPI_Session_init may raise the level (never lower it:
 * other threads may count on it); raising happens while the caller is the
 * only thread in MPI, which the level so far promises. */
void onic_mpi_thread_want(int required)
{
    if (required <= onic_mpi_g.thread_level)
        return;
    onic_mpi_g.thread_level = required;
    if (required == MPI_THREAD_MULTIPLE)
        onic_mpi_mt_start();
}

int onic_mpi_lib_up(int required, const char *call)
{
    int rc;

    init_tables();
    onic_mpi_errh_init();
    if (onic_mpi_type_init() != 0)
        goto err_no_mem;
    if ((rc = onic_mpi_p2p_init()) != MPI_SUCCESS)
        return rc;
    if (onic_mpi_comm_init() != 0)
        goto err_no_mem;
    onic_mpi_g.initialized = 1;
    init_thread = pthread_self();
    onic_mpi_g.thread_level = MPI_THREAD_SINGLE;
    onic_mpi_thread_want(required);
    return init_check_agreement();

err_no_mem:
    fprintf(stderr, "onic: %s on rank %s failed: MPI_ERR_NO_MEM: no memory for MPI's "
            "tables\n", call, onic_mpi_rank_str());
    onic_mpi_die(MPI_ERR_NO_MEM);
}

/* Locked: under a session's MPI_THREAD_MULTIPLE other threads may be in
 * MPI already (before MPI starts the guard takes nothing). */
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    ONIC_MPI_LOCKED;
    int rc;

    (void)argc;
    (void)argv;
    if (onic_mpi_g.world_state != 0 || onic_mpi_g.finalized) {
        fprintf(stderr, "onic: MPI_Init on rank %s failed: MPI_ERR_OTHER: MPI is already %s; "
                "call MPI_Init once per process\n", onic_mpi_rank_str(),
                onic_mpi_g.world_state == 1 ? "initialized" : "finalized");
        onic_mpi_die(MPI_ERR_OTHER);
    }
    if (provided == NULL || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "onic: MPI_Init_thread on rank %s failed: MPI_ERR_ARG: %s\n",
                onic_mpi_rank_str(),
                provided == NULL ? "provided is NULL" : "required is not one of "
                "MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, _MULTIPLE");
        onic_mpi_die(MPI_ERR_ARG);
    }
    /* A session may have started the library: then its thread level. */
    if (onic_mpi_g.initialized) {
        rc = MPI_SUCCESS;
        onic_mpi_thread_want(required);
    } else {
        rc = onic_mpi_lib_up(required, "MPI_Init");
    }
    onic_mpi_g.world_state = 1;
    *provided = onic_mpi_g.thread_level;
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    ONIC_MPI_LOCKED;
    int provided;
    return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

/* Both say what MPI_Init and MPI_Finalize did, whatever sessions do (MPI
 * 4.0, 11.2.1). */
int MPI_Initialized(int *flag)
{
    ONIC_MPI_LOCKED;
    if (flag == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    *flag = onic_mpi_g.world_state != 0;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    ONIC_MPI_LOCKED;
    if (flag == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    *flag = onic_mpi_g.world_state == 2;
    return MPI_SUCCESS;
}

/* The thread that initialized MPI is the main one (MPI 3.1, 12.4.3). */
int MPI_Is_thread_main(int *flag)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Is_thread_main");
    if (flag == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    *flag = pthread_equal(pthread_self(), init_thread) != 0;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Query_thread");
    if (provided == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = onic_mpi_g.thread_level;
    return MPI_SUCCESS;
}

typedef struct fini_report {
    char  *buf;
    size_t len, used;
    int    n;
} fini_report_t;

static void fini_pending_one(void *elem, void *arg)
{
    onic_mpi_req_t *r = elem;
    fini_report_t *p = arg;

    if (!r->active || r->complete)
        return;
    if (p->n < 3 && p->used < p->len) {
        /* A send or receive by its peer and tag; a collective's or a
         * generalized request has neither. */
        char peer[24] = "", tag[24] = "";
        if (r->kind == ONIC_MPI_REQ_SEND || r->kind == ONIC_MPI_REQ_RECV) {
            if (r->peer == MPI_ANY_SOURCE)
                snprintf(peer, sizeof(peer), " %s MPI_ANY_SOURCE",
                         r->kind == ONIC_MPI_REQ_SEND ? "to" : "from");
            else
                snprintf(peer, sizeof(peer), " %s rank %d",
                         r->kind == ONIC_MPI_REQ_SEND ? "to" : "from", r->peer);
            if (r->tag == MPI_ANY_TAG)
                snprintf(tag, sizeof(tag), " MPI_ANY_TAG");
            else
                snprintf(tag, sizeof(tag), " tag %d", r->tag);
        }
        p->used += (size_t)snprintf(p->buf + p->used, p->len - p->used, "%s%s%s%s",
                                    p->n > 0 ? "; " : "", r->call, peer, tag);
    }
    p->n++;
}

/* Describe what is still pending, for MPI_Finalize's report: the requests
 * started and not complete, found by a walk of the request pool (a list of
 * them would cost every message a link and an unlink). A free request is
 * inactive (onic_mpi_req_free), a never-used one zeroed. */
static int fini_pending(char *buf, size_t len)
{
    fini_report_t p = {buf, len, 0, 0};

    buf[0] = '\0';
    onic_pool_each(&onic_mpi_g.req_pool, fini_pending_one, &p);
    return p.n;
}

int onic_mpi_lib_down(const char *call)
{
    char what[512];
    int rc, n;

    /* Everyone arrives before anyone leaves: a rank may still be pulling a
     * message from us. The barrier's progress serves those pulls. */
    rc = onic_mpi_coll_barrier(onic_mpi_htab_get(&onic_mpi_g.comms, MPI_COMM_WORLD), call);
    /* Pulls whose requests were queued before the barrier completed. */
    while (onic_mpi_progress(0) > 0)
        ;
    /* From here on, credits owed to processes that may have left stay here. */
    onic_mpi_g.finalizing = 1;
    n = fini_pending(what, sizeof(what));
    if (rc == MPI_SUCCESS && n > 0)
        rc = onic_mpi_err(NULL, MPI_ERR_PENDING, call, "%d operation%s never "
                          "completed (%s%s); complete every request with MPI_Wait or MPI_Test "
                          "(or cancel receives) before %s", n, n > 1 ? "s" : "", what,
                          n > 3 ? "; ..." : "", call);
    onic_mpi_icoll_fini();
    onic_mpi_probe_fini();
    onic_mpi_rma_fini();
    onic_mpi_comm_fini();
    onic_mpi_type_fini();
    onic_mpi_p2p_fini();
    fini_tables();
    onic_mpi_g.initialized = 0;
    onic_mpi_g.finalized = 1;
    /* The caller's hold on the lock ends with its call. */
    onic_mpi_mt_stop();
    return rc;
}

int MPI_Finalize(void)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Finalize");
    if (onic_mpi_g.world_state != 1)
        return onic_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Finalize", "MPI_Init was %s; "
                            "MPI_Finalize ends what MPI_Init started, once",
                            onic_mpi_g.world_state == 0 ? "not called (MPI runs for a session)"
                                                  : "already ended by MPI_Finalize");
    /* First, as if MPI_COMM_SELF were freed: its attributes' delete
     * callbacks, the last set first, while MPI still works (MPI 3.1,
     * 8.7.1); then MPI_COMM_WORLD's the same way. */
    for (int i = 0; i < 2; i++) {
        onic_mpi_comm_t *c = onic_mpi_htab_get(&onic_mpi_g.comms,
                                               i == 0 ? MPI_COMM_SELF : MPI_COMM_WORLD);
        if ((rc = onic_mpi_attr_delete_all(c)) != MPI_SUCCESS)
            return onic_mpi_err(c, rc, "MPI_Finalize", "an attribute's delete callback on %s "
                                "failed with %d; MPI is not finalized",
                                i == 0 ? "MPI_COMM_SELF" : "MPI_COMM_WORLD", rc);
    }
    onic_mpi_g.world_state = 2;
    /* Sessions still live keep the library up: their last finalize ends it. */
    if (onic_mpi_g.sessions > 0)
        return MPI_SUCCESS;
    return onic_mpi_lib_down("MPI_Finalize");
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Get_processor_name");
    if (name == NULL || resultlen == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_processor_name", "%s is NULL",
                            name == NULL ? "name" : "resultlen");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    ONIC_MPI_LOCKED;
    if (version == NULL || subversion == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_version", "%s is NULL",
                            version == NULL ? "version" : "subversion");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    ONIC_MPI_LOCKED;
    if (version == NULL || resultlen == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_library_version", "%s is NULL",
                            version == NULL ? "version" : "resultlen");
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "onic %s: MPI %d.%d point-to-point subset "
             "on Portals", ONIC_VERSION, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double MPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
