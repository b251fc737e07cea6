/* Sessions (MPI 4.0, 11.3): a library starts MPI for itself, without
 * MPI_Init, and makes its communicators from process sets.
 *
 * The library is one: the first MPI_Init or MPI_Session_init brings it up
 * (onic_mpi_lib_up), and the last of MPI_Finalize and MPI_Session_finalize
 * takes it down (onic_mpi_lib_down, a barrier over the job first), so a
 * session's communicators keep working after the program's MPI_Finalize
 * and the program's after a session ends. Once down it does not come up
 * again: MPI_Session_init then fails with MPI_ERR_OTHER saying so.
 *
 * Two process sets, as the standard names them (case-insensitively):
 * mpi://WORLD, the job's processes, and mpi://SELF. A communicator made
 * from a group (MPI_Comm_create_from_group) is MPI_Comm_create_group over
 * the job's processes: its members agree on a context id among
 * themselves. Errors on a session go to its handler; those without one (no
 * live session) as every other: MPI_COMM_WORLD's once MPI_Init was called,
 * else fatal. A session's thread level is the process's: the highest any
 * MPI_Init_thread or MPI_Session_init asked for, which its info says
 * ("thread_level"). */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct session {
    MPI_Session    handle;
    MPI_Errhandler errh;
} session_t;

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = 2 };

static const char *const thread_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                           "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/* Made with the library's first session; freed with the library. */
static onic_mpi_htab_t session_tab;
static int session_tab_ready;

static session_t *session_of(MPI_Session h)
{
    return session_tab_ready && onic_mpi_g.initialized ? onic_mpi_htab_get(&session_tab, h)
                                                       : NULL;
}

/* The session named by h, or NULL with the error reported (no session:
 * the default handler's). */
static session_t *session_get(MPI_Session h, const char *call, int *rc_p)
{
    session_t *s = session_of(h);

    if (s == NULL)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_SESSION, call, "session %#x is %s; pass one from "
                             "MPI_Session_init", (unsigned)h,
                             h == MPI_SESSION_NULL ? "MPI_SESSION_NULL"
                                                   : "not a live session");
    return s;
}

/* A session's handlers: the predefined ones (a program's handler would
 * be called with a communicator; onic has no MPI_Session_create_errhandler). */
static int session_errh_ok(MPI_Errhandler errh)
{
    return errh == MPI_ERRORS_RETURN || errh == MPI_ERRORS_ARE_FATAL;
}

/* The process set named: its index, or -1. */
static int pset_find(const char *name)
{
    for (int i = 0; i < NPSETS; i++)
        if (strcasecmp(name, pset_names[i]) == 0)
            return i;
    return -1;
}

static int pset_get(session_t *s, const char *name, const char *call, int *rc_p)
{
    int i = name != NULL ? pset_find(name) : -1;

    if (i < 0)
        *rc_p = onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "process set %s%s%s is not one of "
                                  "this session's: mpi://WORLD, mpi://SELF (see "
                                  "MPI_Session_get_nth_pset)", name != NULL ? "\"" : "",
                                  name != NULL ? name : "NULL", name != NULL ? "\"" : "");
    return i;
}

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_init";
    char level[MPI_MAX_INFO_VAL + 1];
    int required = MPI_THREAD_SINGLE, rc, found = 0;
    session_t *s;

    /* The handler first: the errors below go to it. */
    if (!session_errh_ok(errhandler))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errhandler %#x is not MPI_ERRORS_RETURN or "
                            "MPI_ERRORS_ARE_FATAL, the handlers a session takes in onic",
                            (unsigned)errhandler);
    if (session == NULL)
        return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "session is NULL");
    if (info != MPI_INFO_NULL &&
        (found = onic_mpi_info_value(info, "thread_level", level, sizeof(level))) < 0)
        return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "info %#x is not a live info "
                                 "object; pass one from MPI_Info_create, or MPI_INFO_NULL",
                                 (unsigned)info);
    if (found) {
        for (required = MPI_THREAD_MULTIPLE; required >= MPI_THREAD_SINGLE; required--)
            if (strcasecmp(level, thread_names[required]) == 0)
                break;
        if (required < MPI_THREAD_SINGLE)
            return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "info key thread_level is "
                                     "\"%s\"; give MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED "
                                     "or _MULTIPLE", level);
    }
    if (onic_mpi_g.finalized)
        return onic_mpi_err_errh(errhandler, MPI_ERR_OTHER, call, "MPI has been finalized in "
                                 "this process, and onic does not start it again; keep a "
                                 "session (or MPI_Init) open until the program's last MPI call");
    if (!onic_mpi_g.initialized && (rc = onic_mpi_lib_up(required, call)) != MPI_SUCCESS)
        return rc;
    onic_mpi_thread_want(required);
    if (!session_tab_ready) {
        onic_mpi_htab_init(&session_tab, ONIC_MPI_KIND_SESSION);
        session_tab_ready = 1;
    }
    if ((s = onic_calloc(1, sizeof(*s))) == NULL ||
        onic_mpi_htab_add(&session_tab, s, &s->handle) != 0) {
        onic_free(s);
        rc = onic_mpi_err_errh(errhandler, MPI_ERR_NO_MEM, call, "no memory for a session");
        /* A library brought up for nothing goes down again, as a finalize would. */
        if (onic_mpi_g.sessions == 0 && onic_mpi_g.world_state != 1)
            (void)onic_mpi_lib_down(call);
        return rc;
    }
    s->errh = errhandler;
    onic_mpi_g.sessions++;
    *session = s->handle;
    return MPI_SUCCESS;
}

int MPI_Session_finalize(MPI_Session *session)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_finalize";
    session_t *s;
    int rc;

    if (session == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "session is NULL");
    if ((s = session_get(*session, call, &rc)) == NULL)
        return rc;
    onic_mpi_htab_del(&session_tab, s->handle);
    onic_free(s);
    *session = MPI_SESSION_NULL;
    if (--onic_mpi_g.sessions > 0)
        return MPI_SUCCESS;
    onic_mpi_htab_fini(&session_tab);
    session_tab_ready = 0;
    /* The last session: MPI ends here unless MPI_Init's part goes on. */
    return onic_mpi_g.world_state == 1 ? MPI_SUCCESS : onic_mpi_lib_down(call);
}

int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_get_info";
    session_t *s;
    int rc;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if (info_used == NULL)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "info_used is NULL");
    /* The level provided, whatever was asked (MPI 4.0, 11.3.1). */
    if (onic_mpi_info_make(info_used, "thread_level",
                           thread_names[onic_mpi_g.thread_level]) != 0)
        return onic_mpi_err_errh(s->errh, MPI_ERR_NO_MEM, call, "no memory for an info");
    return MPI_SUCCESS;
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_get_num_psets";
    session_t *s;
    int rc;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    (void)info; /* no hint narrows the sets */
    if (npset_names == NULL)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

/* *pset_len 0: only the length (with the terminator) comes back; else at
 * most *pset_len - 1 characters and the terminator, and the whole length
 * in *pset_len (MPI 4.0, 11.3.2). */
int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                             char *pset_name)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_get_nth_pset";
    session_t *s;
    size_t len;
    int rc;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    (void)info;
    if (n < 0 || n >= NPSETS)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "n is %d; this session has %d "
                                 "process sets (0 to %d)", n, NPSETS, NPSETS - 1);
    if (pset_len == NULL || *pset_len < 0 || (*pset_len > 0 && pset_name == NULL))
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "pset_len is NULL or negative, or "
                                 "pset_name is NULL with pset_len above 0");
    len = strlen(pset_names[n]);
    if (*pset_len > 0) {
        size_t k = len < (size_t)*pset_len - 1 ? len : (size_t)*pset_len - 1;
        memcpy(pset_name, pset_names[n], k);
        pset_name[k] = '\0';
    }
    *pset_len = (int)len + 1;
    return MPI_SUCCESS;
}

int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_get_pset_info";
    char size[16];
    session_t *s;
    int rc, i;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if ((i = pset_get(s, pset_name, call, &rc)) < 0)
        return rc;
    if (info == NULL)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "info is NULL");
    snprintf(size, sizeof(size), "%d", i == 0 ? onic_mpi_g.size : 1);
    if (onic_mpi_info_make(info, "mpi_size", size) != 0)
        return onic_mpi_err_errh(s->errh, MPI_ERR_NO_MEM, call, "no memory for an info");
    return MPI_SUCCESS;
}

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Group_from_session_pset";
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    session_t *s;
    int rc, i;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if ((i = pset_get(s, pset_name, call, &rc)) < 0)
        return rc;
    if (newgroup == NULL)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "newgroup is NULL");
    c = onic_mpi_htab_get(&onic_mpi_g.comms, i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF);
    if ((g = onic_mpi_group_copy(c->group)) == NULL || onic_mpi_group_publish(g, newgroup) != 0) {
        onic_mpi_group_unref(g);
        return onic_mpi_err_errh(s->errh, MPI_ERR_NO_MEM, call, "no room for a group");
    }
    return MPI_SUCCESS;
}

/* A string tag as MPI_Comm_create_group's tag (0 to MPI_TAG_UB): its
 * FNV-1a hash, folded. Two creations at once on one process whose
 * different strings hash alike would take each other's messages: one
 * pair in 2^24. */
static int session_tag(const char *stringtag, size_t len)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)stringtag[i]) * 16777619u;
    return (int)((h ^ h >> 24) & ONIC_MPI_TAG_UB);
}

int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_create_from_group";
    onic_mpi_group_t *g;
    size_t taglen;
    int i, kind;

    ONIC_MPI_CHECK_INIT(call);
    kind = onic_mpi_errh_kind(errhandler);
    if (kind == ONIC_MPI_ERRH_NONE || kind == ONIC_MPI_ERRH_WIN)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "errhandler %#x is not a communicator's "
                            "error handler; use MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN or one "
                            "from MPI_Comm_create_errhandler", (unsigned)errhandler);
    taglen = stringtag != NULL ? strnlen(stringtag, MPI_MAX_STRINGTAG_LEN + 1) : 0;
    if ((g = onic_mpi_group_get(group)) == NULL)
        return onic_mpi_err_errh(errhandler, MPI_ERR_GROUP, call, "group %#x is not a live "
                                 "group", (unsigned)group);
    if (taglen == 0 || taglen > MPI_MAX_STRINGTAG_LEN)
        return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "stringtag %s; give 1 to "
                                 "MPI_MAX_STRINGTAG_LEN (%d) characters",
                                 stringtag == NULL ? "is NULL" : "is empty or too long",
                                 MPI_MAX_STRINGTAG_LEN);
    /* No hint is read: only the handle is checked. */
    if (info != MPI_INFO_NULL && onic_mpi_info_value(info, NULL, NULL, 0) < 0)
        return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "info %#x is not a live info "
                                 "object; pass one from MPI_Info_create, or MPI_INFO_NULL",
                                 (unsigned)info);
    if (newcomm == NULL)
        return onic_mpi_err_errh(errhandler, MPI_ERR_ARG, call, "newcomm is NULL");
    for (i = 0; i < g->size && g->world[i] != onic_mpi_g.rank; i++)
        ;
    if (i == g->size)
        return onic_mpi_err_errh(errhandler, MPI_ERR_GROUP, call, "this process is not in the "
                                 "group; only the group's members call "
                                 "MPI_Comm_create_from_group");
    /* The job's processes are the parent, and the string tag, hashed to a
     * tag, tells this creation from others going on at once (threads);
     * what the agreement reports goes to this call's handler, not to
     * MPI_COMM_WORLD's (which a session's program never set), and the
     * new communicator has it. */
    return onic_mpi_comm_create_group(onic_mpi_g.world, g, session_tag(stringtag, taglen), 1,
                                      errhandler, call, newcomm);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_set_errhandler";
    session_t *s;
    int rc;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if (!session_errh_ok(errhandler))
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "errhandler %#x is not "
                                 "MPI_ERRORS_RETURN or MPI_ERRORS_ARE_FATAL, the handlers a "
                                 "session takes in onic", (unsigned)errhandler);
    s->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_get_errhandler";
    session_t *s;
    int rc;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if (errhandler == NULL)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "errhandler is NULL");
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Session_call_errhandler";
    session_t *s;
    int rc, cls;

    if ((s = session_get(session, call, &rc)) == NULL)
        return rc;
    if (MPI_Error_class(errorcode, &cls) != MPI_SUCCESS)
        return onic_mpi_err_errh(s->errh, MPI_ERR_ARG, call, "errorcode %d is not an error "
                                 "code", errorcode);
    /* The handler runs; the call itself succeeds (MPI 4.0, 9.3.5). */
    (void)onic_mpi_err_errh(s->errh, errorcode, call, "raised by the program");
    return MPI_SUCCESS;
}

/* onic's handles are what Fortran would hold (mpi.h). */
MPI_Fint MPI_Session_c2f(MPI_Session session)
{
    return (MPI_Fint)session;
}

MPI_Session MPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)session;
}
