/* Errors: classes and their strings (and those the program adds), the two
 * predefined handlers, the report every failing call makes, and MPI_Abort.
 *
 * A report names the call, this rank, what was wrong and what to do. Under
 * MPI_ERRORS_ARE_FATAL (the default) it is printed and the job stops with
 * the error class as the exit status (onicrun then stops the other ranks);
 * under MPI_ERRORS_RETURN the class is returned and the text goes to the
 * debug log only, since the program asked to handle errors itself. */
#include "mpi/mpi_impl.h"
#include "base/log.h"
#include "base/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const error_strings[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer or buffered-send space",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated on receive",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: other error",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid attribute key",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronisation of RMA calls",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size argument",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement argument",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory is not part of the window",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_SESSION] = "MPI_ERR_SESSION: invalid session",
};

/* Classes and codes the program adds (MPI_Add_error_class, _code): the
 * numbers after MPI_ERR_LASTCODE, in the order added; each with its class
 * (itself for a class) and its string, "" until MPI_Add_error_string.
 * MPI_Finalize forgets them. */
typedef struct error_user {
    int  cls;
    char str[MPI_MAX_ERROR_STRING];
} error_user_t;

static error_user_t *error_users;
static int error_nusers, error_cap;

static error_user_t *error_user(int code)
{
    int i = code - (MPI_ERR_LASTCODE + 1);

    return i >= 0 && i < error_nusers ? &error_users[i] : NULL;
}

/* Codes with no class (gaps in the numbering) have no string. */
static int error_code_valid(int code)
{
    return (code >= 0 && code <= MPI_ERR_LASTCODE && error_strings[code] != NULL) ||
           error_user(code) != NULL;
}

/* The string of a valid code. */
static const char *error_string(int code)
{
    return code <= MPI_ERR_LASTCODE ? error_strings[code] : error_user(code)->str;
}

int onic_mpi_err_lastused(void)
{
    return MPI_ERR_LASTCODE + error_nusers;
}

/* The predefined handlers' objects: only their handles matter. */
static int errh_fatal_obj, errh_return_obj;

/* A handler from MPI_Comm_create_errhandler or MPI_Win_create_errhandler
 * (win set: fn is a window's, given the window). MPI_Errhandler_free marks
 * it freed (no object may take it again) but keeps it for those that have
 * it; MPI_Finalize frees them all. */
typedef struct errh_user {
    MPI_Comm_errhandler_function *fn;
    MPI_Win_errhandler_function  *wfn;
    int                           freed;
    int                           win;
} errh_user_t;

static errh_user_t *errh_user(MPI_Errhandler h)
{
    if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN)
        return NULL;
    return onic_mpi_htab_get(&onic_mpi_g.errhs, h);
}

void onic_mpi_errh_init(void)
{
    onic_mpi_htab_set(&onic_mpi_g.errhs, MPI_ERRORS_ARE_FATAL & 0xfffff, &errh_fatal_obj);
    onic_mpi_htab_set(&onic_mpi_g.errhs, MPI_ERRORS_RETURN & 0xfffff, &errh_return_obj);
}

static const char *error_name(int cls)
{
    static char name[128];
    const char *colon;

    /* Every string starts with the class's name. */
    if (error_user(cls) != NULL) {
        snprintf(name, sizeof(name), "error %s %d%s%.40s", error_user(cls)->cls == cls ?
                 "class" : "code", cls, error_user(cls)->str[0] != '\0' ? ", " : "",
                 error_user(cls)->str);
        return name;
    }
    if (!error_code_valid(cls))
        return "MPI_ERR_UNKNOWN";
    colon = strchr(error_strings[cls], ':');
    snprintf(name, sizeof(name), "%.*s", (int)(colon - error_strings[cls]), error_strings[cls]);
    return name;
}

_Noreturn void onic_mpi_die(int code)
{
    /* Exit statuses are 8 bits, and 0 would not stop the job. */
    int status = code & 0xff;
    /* Under PMIx or PMI-1 the launcher is told, so it ends the other ranks
     * even where a non-zero exit alone would not (srun without
     * --kill-on-bad-exit). onicrun ends them when this one exits. */
    onic_log_abort_job(status != 0 ? status : 1, "stopping the job (see the error above)");
    fflush(stdout);
    fflush(stderr);
    _exit(status != 0 ? status : 1);
}

/* This rank, for a report: MPI's once it knows it, else the launcher's
 * (known before the transport opens), else "?" (the launcher said none). */
const char *onic_mpi_rank_str(void)
{
    static char buf[16];
    int rank = onic_mpi_g.size > 0 ? onic_mpi_g.rank : onic_log_rank();

    if (rank < 0)
        return "?";
    snprintf(buf, sizeof(buf), "%d", rank);
    return buf;
}

/* An error to handler errh; comm, the object a program's handler is given
 * (NULL: MPI_COMM_WORLD). */
static int error_report_to(MPI_Errhandler errh, onic_mpi_comm_t *comm, int cls, const char *call,
                           const char *fmt, va_list ap)
{
    char what[768];

    if (cls == MPI_SUCCESS)   /* an error, whatever the caller passed (mpi_impl.h) */
        cls = MPI_ERR_INTERN;
    vsnprintf(what, sizeof(what), fmt, ap);
    if (errh == MPI_ERRORS_RETURN) {
        onic_debug("mpi: %s on rank %s: %s: %s", call, onic_mpi_rank_str(), error_name(cls),
                   what);
        return cls;
    }
    if (errh_user(errh) != NULL) {
        /* The program's handler; the call then returns the class. A
         * window's handler sits on the window's private communicator and
         * is given the window. */
        MPI_Comm h = comm != NULL ? comm->handle : MPI_COMM_WORLD;
        MPI_Win wh = comm != NULL ? comm->win : MPI_WIN_NULL;
        int code = cls;
        onic_debug("mpi: %s on rank %s: %s: %s (to the program's handler)", call,
                   onic_mpi_rank_str(), error_name(cls), what);
        if (errh_user(errh)->win)
            errh_user(errh)->wfn(&wh, &code);
        else
            errh_user(errh)->fn(&h, &code);
        return cls;
    }
    fprintf(stderr, "onic: %s on rank %s failed: %s: %s (MPI_ERRORS_ARE_FATAL: stopping the "
            "job with exit status %d)\n", call, onic_mpi_rank_str(), error_name(cls), what, cls);
    onic_mpi_die(cls);
}

__attribute__((cold, noinline)) int onic_mpi_err_report(onic_mpi_comm_t *comm, int cls,
                                                        const char *call, const char *fmt, ...)
{
    MPI_Errhandler errh = MPI_ERRORS_ARE_FATAL;
    onic_mpi_comm_t *world;
    va_list ap;
    int rc;

    if (comm != NULL)
        errh = comm->errh;
    else if (onic_mpi_g.initialized &&
             (world = onic_mpi_htab_get(&onic_mpi_g.comms, MPI_COMM_WORLD)) != NULL)
        errh = world->errh;
    va_start(ap, fmt);
    rc = error_report_to(errh, comm, cls, call, fmt, ap);
    va_end(ap);
    return rc;
}

__attribute__((cold, noinline)) int onic_mpi_err_errh(MPI_Errhandler errh, int cls,
                                                      const char *call, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = error_report_to(errh, NULL, cls, call, fmt, ap);
    va_end(ap);
    return rc;
}

__attribute__((cold, noinline)) int onic_mpi_err_ptl(onic_mpi_comm_t *comm, const char *call, const char *what, int rc)
{
    return onic_mpi_err(comm, MPI_ERR_INTERN, call, "the Portals layer failed to %s: %s (the "
                        "log above says why; ONIC_LOG=debug says more)", what, PtlErrorStr(rc));
}

_Noreturn int onic_mpi_err_state(const char *call)
{
    fprintf(stderr, "onic: %s on rank %s failed: MPI_ERR_OTHER: %s (MPI_ERRORS_ARE_FATAL: "
            "stopping with exit status %d)\n", call, onic_mpi_rank_str(),
            onic_mpi_g.finalized ? "MPI has been finalized (by MPI_Finalize or the last "
            "MPI_Session_finalize); no MPI call but MPI_Initialized, MPI_Finalized, "
            "MPI_Get_version and friends may follow"
                                 : "MPI is not initialized; call MPI_Init or MPI_Session_init "
                                   "first",
            MPI_ERR_OTHER);
    onic_mpi_die(MPI_ERR_OTHER);
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    ONIC_MPI_LOCKED;
    if (errorclass == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class",
                            "errorclass is NULL; pass where to store the class");
    if (errorcode < 0 || !error_code_valid(errorcode))
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class",
                            "error code %d is not one onic returns (0 to %d)", errorcode,
                            MPI_ERR_LASTCODE);
    *errorclass = errorcode <= MPI_ERR_LASTCODE ? errorcode : error_user(errorcode)->cls;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    ONIC_MPI_LOCKED;
    if (string == NULL || resultlen == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string",
                            "%s is NULL; pass a buffer of MPI_MAX_ERROR_STRING characters and "
                            "an int", string == NULL ? "string" : "resultlen");
    if (errorcode < 0 || !error_code_valid(errorcode))
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string",
                            "error code %d is not one onic returns (0 to %d)", errorcode,
                            MPI_ERR_LASTCODE);
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", error_string(errorcode));
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

/* A new code (of class cls, or a class if cls < 0): 0, or -1 for no memory. */
static int error_add(int cls, int *code)
{
    if (error_nusers == error_cap) {
        int cap = error_cap > 0 ? 2 * error_cap : 16;
        error_user_t *n = onic_realloc(error_users, (size_t)cap * sizeof(*n));
        if (n == NULL)
            return -1;
        error_users = n;
        error_cap = cap;
    }
    *code = MPI_ERR_LASTCODE + 1 + error_nusers;
    error_users[error_nusers].cls = cls < 0 ? *code : cls;
    error_users[error_nusers].str[0] = '\0';
    error_nusers++;
    return 0;
}

int MPI_Add_error_class(int *errorclass)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Add_error_class";

    ONIC_MPI_CHECK_INIT(call);
    if (errorclass == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errorclass is NULL; pass where to store "
                            "the new class");
    if (error_add(-1, errorclass) != 0)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for an error class");
    return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Add_error_code";

    ONIC_MPI_CHECK_INIT(call);
    if (errorcode == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errorcode is NULL; pass where to store "
                            "the new code");
    if (!error_code_valid(errorclass) ||
        (error_user(errorclass) != NULL && error_user(errorclass)->cls != errorclass))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%d is not an error class: pass a "
                            "predefined class (MPI_ERR_...) or one from MPI_Add_error_class",
                            errorclass);
    if (error_add(errorclass, errorcode) != 0)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for an error code");
    return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Add_error_string";
    error_user_t *u;

    ONIC_MPI_CHECK_INIT(call);
    if ((u = error_user(errorcode)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "error code %d is not one from "
                            "MPI_Add_error_class or MPI_Add_error_code (the predefined ones' "
                            "strings cannot be changed)", errorcode);
    if (string == NULL || strlen(string) >= MPI_MAX_ERROR_STRING)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "string %s; give at most "
                            "MPI_MAX_ERROR_STRING - 1 (%d) characters",
                            string == NULL ? "is NULL" : "is too long", MPI_MAX_ERROR_STRING - 1);
    strcpy(u->str, string);
    return MPI_SUCCESS;
}

int onic_mpi_errh_kind(MPI_Errhandler h)
{
    errh_user_t *u = errh_user(h);

    if (u != NULL)
        return u->freed ? ONIC_MPI_ERRH_NONE : u->win ? ONIC_MPI_ERRH_WIN : ONIC_MPI_ERRH_COMM;
    return onic_mpi_htab_get(&onic_mpi_g.errhs, h) != NULL ? ONIC_MPI_ERRH_PREDEFINED
                                                            : ONIC_MPI_ERRH_NONE;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc, kind;

    ONIC_MPI_CHECK_INIT("MPI_Comm_set_errhandler");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_set_errhandler", &rc)) == NULL)
        return rc;
    if ((kind = onic_mpi_errh_kind(errhandler)) == ONIC_MPI_ERRH_NONE ||
        kind == ONIC_MPI_ERRH_WIN)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                            "errhandler %#x is not a communicator's error handler%s; use "
                            "MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or one from "
                            "MPI_Comm_create_errhandler", (unsigned)errhandler,
                            kind == ONIC_MPI_ERRH_WIN ? " (it is a window's)" : "");
    c->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_get_errhandler");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_get_errhandler", &rc)) == NULL)
        return rc;
    if (errhandler == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_errhandler",
                            "errhandler is NULL; pass where to store the handler");
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

/* A program's handler: fn for communicators, or (win) wfn for windows. */
static int errh_create(MPI_Comm_errhandler_function *fn, MPI_Win_errhandler_function *wfn,
                       int win, MPI_Errhandler *errhandler, const char *call)
{
    errh_user_t *u;
    int h;

    ONIC_MPI_CHECK_INIT(call);
    if ((win ? wfn == NULL : fn == NULL) || errhandler == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL",
                            errhandler == NULL ? "errhandler"
                            : win              ? "win_errhandler_fn"
                                               : "comm_errhandler_fn");
    if ((u = onic_calloc(1, sizeof(*u))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a handler");
    u->fn = fn;
    u->wfn = wfn;
    u->win = win;
    if (onic_mpi_htab_add(&onic_mpi_g.errhs, u, &h) != 0) {
        onic_free(u);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for a handler handle");
    }
    *errhandler = h;
    return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    return errh_create(comm_errhandler_fn, NULL, 0, errhandler, "MPI_Comm_create_errhandler");
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                              MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    return errh_create(NULL, win_errhandler_fn, 1, errhandler, "MPI_Win_create_errhandler");
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Errhandler_free";
    errh_user_t *u;

    ONIC_MPI_CHECK_INIT(call);
    if (errhandler == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errhandler is NULL");
    /* Freeing a predefined handler's handle only clears the caller's. */
    if (*errhandler == MPI_ERRORS_ARE_FATAL || *errhandler == MPI_ERRORS_RETURN) {
        *errhandler = MPI_ERRHANDLER_NULL;
        return MPI_SUCCESS;
    }
    if ((u = errh_user(*errhandler)) == NULL || u->freed)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errhandler %#x is not a live error "
                            "handler", (unsigned)*errhandler);
    u->freed = 1;
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* MPI-1's names (deprecated, still used): the same handlers. */
int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    return MPI_Comm_create_errhandler(function, errhandler);
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    ONIC_MPI_LOCKED;
    return MPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    return MPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_call_errhandler";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    /* As if a call on comm had failed with errorcode (fatal stops the job). */
    rc = onic_mpi_err(c, errorcode, call, "MPI_Comm_call_errhandler with error code %d",
                      errorcode);
    return rc == errorcode ? MPI_SUCCESS : rc;
}

void onic_mpi_errh_fini(void)
{
    onic_mpi_htab_t *t = &onic_mpi_g.errhs;

    for (int i = 2; i < t->used; i++)
        onic_free(t->obj[i]);
    onic_free(error_users);
    error_users = NULL;
    error_nusers = error_cap = 0;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    ONIC_MPI_LOCKED;
    /* Whatever comm is, the whole job stops: onicrun ends the other ranks
     * when one exits non-zero, and its own exit status is this one's. */
    (void)comm;
    fprintf(stderr, "onic: MPI_Abort called on rank %d with error code %d; stopping the job\n",
            onic_mpi_g.rank, errorcode);
    onic_mpi_die(errorcode);
}
