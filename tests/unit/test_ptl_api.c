/* Every Portals call with invalid arguments returns the specified error and
 * crashes nothing: calls before PtlInit, bad handles of each kind (another
 * kind's, freed ones, an old NI's), NULL outputs, out-of-range indexes.
 * Then a job of one (no onicrun) puts and gets to itself through the real
 * transport, waiting in PtlEQWait. */
#include "check.h"
#include "base/mem.h"
#include "base/clock.h"
#include "ptl/ptl.h"
#include <onic/portals.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SELF   ((ptl_process_id_t){0, 0})
#define ANYONE ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY})

static ptl_md_t md_desc(void *buf, size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
    ptl_md_t md = {buf, len, threshold, 0, options, NULL, eq};
    return md;
}

static void poll_never_ended(int sig)
{
    static const char msg[] = "test_ptl_api: PtlEQPoll with a timeout of 20 ms has not "
                              "returned after 10 s\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

/* Every call, with handles that may or may not be valid: the same code. */
static void all_calls_return(int rc, ptl_handle_ni_t ni, ptl_handle_me_t me, ptl_handle_md_t md,
                             ptl_handle_eq_t eq)
{
    ptl_handle_any_t h;
    ptl_pt_index_t pt;
    ptl_sr_value_t v;
    ptl_process_id_t id;
    ptl_uid_t uid;
    ptl_jid_t jid;
    ptl_event_t ev;
    ptl_md_t d = md_desc(NULL, 0, 1, 0, PTL_EQ_NONE);
    ptl_ovf_header_t hdr;
    int which;

    CHECK_EQ(PtlNIFini(ni), rc == PTL_NO_INIT ? PTL_NO_INIT : PTL_NI_INVALID);
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &v), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlGetId(ni, &id), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlGetUid(ni, &uid), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlGetJid(ni, &jid), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlNIHandle(md, &h), rc == PTL_NO_INIT ? rc : PTL_HANDLE_INVALID);
    CHECK_EQ(PtlMEAttach(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &h),
             rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlMEAttachAny(ni, &pt, ANYONE, 0, 0, PTL_RETAIN, &h),
             rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlMEAttachOverflow(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &h),
             rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlMEAttachSearch(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, d, PTL_RETAIN, &h,
                               &h, &hdr), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlMEInsert(me, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &h),
             rc == PTL_NO_INIT ? rc : PTL_ME_INVALID);
    CHECK_EQ(PtlMEUnlink(me), rc == PTL_NO_INIT ? rc : PTL_ME_INVALID);
    CHECK_EQ(PtlMEUnlinkAsync(me), rc == PTL_NO_INIT ? rc : PTL_ME_INVALID);
    CHECK_EQ(PtlMDAttach(me, d, PTL_RETAIN, &h), rc == PTL_NO_INIT ? rc : PTL_ME_INVALID);
    CHECK_EQ(PtlMDBind(ni, d, PTL_RETAIN, &h), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlMDUnlink(md), rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
    CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
    CHECK_EQ(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &h), rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlEQFree(eq), rc == PTL_NO_INIT ? rc : PTL_EQ_INVALID);
    CHECK_EQ(PtlEQGet(eq, &ev), rc == PTL_NO_INIT ? rc : PTL_EQ_INVALID);
    CHECK_EQ(PtlEQWait(eq, &ev), rc == PTL_NO_INIT ? rc : PTL_EQ_INVALID);
    CHECK_EQ(PtlEQPoll(&eq, 1, 0, &ev, &which), rc == PTL_NO_INIT ? rc : PTL_EQ_INVALID);
    CHECK_EQ(PtlACEntry(ni, 2, ANYONE, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY),
             rc == PTL_NO_INIT ? rc : PTL_NI_INVALID);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0), rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
    CHECK_EQ(PtlPutRegion(md, 0, 0, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0),
             rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
    CHECK_EQ(PtlGet(md, SELF, 0, 0, 0, 0), rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
    CHECK_EQ(PtlGetRegion(md, 0, 0, SELF, 0, 0, 0, 0), rc == PTL_NO_INIT ? rc : PTL_MD_INVALID);
}

static void test_before_init(void)
{
    ptl_handle_ni_t ni;

    all_calls_return(PTL_NO_INIT, 0, 0, 0, 0);
    CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), PTL_NO_INIT);
    CHECK_EQ(PtlInit(NULL), PTL_SEGV);
    PtlFini(); /* harmless without PtlInit */
}


/* PtlEQPoll of one queue at once, what it writes to stderr into out. */
static int eq_poll_said(ptl_handle_eq_t *eqs, ptl_event_t *ev, char *out, size_t outlen)
{
    FILE *tmp;
    int saved, which, rc;

    check_stderr_catch(&tmp, &saved);
    rc = PtlEQPoll(eqs, 1, 0, ev, &which);
    check_stderr_caught(tmp, saved, out, outlen);
    return rc;
}
static void test_errors(void)
{
    ptl_handle_ni_t ni, ni2;
    ptl_handle_me_t me, me2;
    ptl_handle_md_t md, md2;
    ptl_handle_eq_t eq, eq2;
    ptl_ni_limits_t want, got;
    ptl_pt_index_t pt;
    ptl_event_t ev;
    ptl_sr_value_t v;
    ptl_ovf_header_t hdr;
    uint8_t buf[4096];
    ptl_md_t d;
    int n, which;
    uint64_t t0;

    CHECK_EQ(PtlInit(&n), PTL_OK);
    CHECK_EQ(n, 1);
    /* No NI yet: every handle names nothing. */
    all_calls_return(PTL_OK, 0, 0, 0, 0);
    CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, NULL), PTL_SEGV);
    CHECK_EQ(PtlNIInit(3, PTL_PID_ANY, NULL, NULL, &ni), PTL_IFACE_INVALID);
    CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, 7, NULL, NULL, &ni), PTL_PID_INVALID);
    memset(&want, 0, sizeof(want));
    want.max_pt_index = 15;
    want.max_ac_index = 100000;
    want.max_mes = want.max_mds = want.max_eqs = want.max_me_list = 1000;
    CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, 0, &want, &got, &ni), PTL_OK);
    CHECK_EQ(got.max_pt_index, 15);
    CHECK_EQ(got.max_ac_index, 255);
    CHECK_EQ(got.max_mds, 1000);
    CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni2), PTL_IFACE_DUP);
    CHECK(ni2 == ni);

    CHECK_EQ(PtlNIStatus(ni, 3, &v), PTL_SR_INDEX_INVALID);
    /* onic's registers: the job's size, a job of one here; the longest put
     * sent with its data, which for a job of one is what the self
     * transport queues whole, 256 KiB. */
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_JOB_SIZE, &v), PTL_OK);
    CHECK_EQ(v, 1);
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_MAX_INLINE, &v), PTL_OK);
    CHECK_EQ(v, 262144);
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_DROP_COUNT, NULL), PTL_SEGV);
    CHECK_EQ(PtlGetId(ni, NULL), PTL_SEGV);
    CHECK_EQ(PtlGetUid(ni, NULL), PTL_SEGV);
    CHECK_EQ(PtlGetJid(ni, NULL), PTL_SEGV);
    CHECK_EQ(PtlNIHandle(PTL_INVALID_HANDLE, &ni2), PTL_HANDLE_INVALID);
    CHECK_EQ(PtlNIHandle(ni, NULL), PTL_SEGV);
    CHECK_EQ(PtlNIHandle(ni, &ni2), PTL_OK);

    /* Match entries. */
    CHECK_EQ(PtlMEAttach(ni, 16, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_PT_INDEX_INVALID);
    CHECK_EQ(PtlMEAttach(ni, 0, ((ptl_process_id_t){1, 0}), 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlMEAttach(ni, 0, ((ptl_process_id_t){0, 1}), 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me),
             PTL_PROCESS_INVALID); /* a job of one */
    CHECK_EQ(PtlMEAttach(ni, 0, ANYONE, 0, 0, (ptl_unlink_t)7, PTL_INS_AFTER, &me), PTL_FAIL);
    CHECK_EQ(PtlMEAttach(ni, 0, ANYONE, 0, 0, PTL_RETAIN, (ptl_ins_pos_t)7, &me), PTL_FAIL);
    CHECK_EQ(PtlMEAttach(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, NULL), PTL_SEGV);
    CHECK_EQ(PtlMEAttach(ni + 1, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_NI_INVALID);
    CHECK_EQ(PtlMEAttach(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMEAttach(me, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me2), PTL_NI_INVALID);
    CHECK_EQ(PtlMEInsert(ni, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me2), PTL_ME_INVALID);
    CHECK_EQ(PtlMEInsert(me, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, NULL), PTL_SEGV);
    CHECK_EQ(PtlMEInsert(me, ANYONE, 0, 0, PTL_RETAIN, (ptl_ins_pos_t)-1, &me2), PTL_FAIL);
    CHECK_EQ(PtlMEAttachAny(ni, NULL, ANYONE, 0, 0, PTL_RETAIN, &me2), PTL_SEGV);
    CHECK_EQ(PtlMEAttachAny(ni, &pt, ANYONE, 0, 0, PTL_RETAIN, NULL), PTL_SEGV);
    for (int i = 1; i <= 15; i++) {
        CHECK_EQ(PtlMEAttachAny(ni, &pt, ANYONE, 0, 0, PTL_RETAIN, &me2), PTL_OK);
        CHECK_EQ(pt, (unsigned)i);
    }
    CHECK_EQ(PtlMEAttachAny(ni, &pt, ANYONE, 0, 0, PTL_RETAIN, &me2), PTL_PT_FULL);
    CHECK_EQ(PtlMEUnlink(me2), PTL_OK);
    CHECK_EQ(PtlMEUnlink(me2), PTL_ME_INVALID);                 /* use after free */
    CHECK_EQ(PtlMEInsert(me2, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me2), PTL_ME_INVALID);
    CHECK_EQ(PtlMEAttachOverflow(ni, 99, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER, &me2),
             PTL_PT_INDEX_INVALID);

    /* Event queues. */
    CHECK_EQ(PtlEQAlloc(ni, 0, PTL_EQ_HANDLER_NONE, &eq), PTL_FAIL);
    CHECK_EQ(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, NULL), PTL_SEGV);
    onic_mem_fail_after(0);
    CHECK_EQ(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &eq), PTL_NO_SPACE);
    onic_mem_fail_after(-1);
    CHECK_EQ(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq), PTL_OK);
    CHECK_EQ(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq2), PTL_OK);
    CHECK_EQ(PtlEQGet(eq, NULL), PTL_SEGV);
    CHECK_EQ(PtlEQGet(me, &ev), PTL_EQ_INVALID);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(PtlEQPoll(&eq, 0, 0, &ev, &which), PTL_FAIL);
    {   /* 1 to 64 queues (portals.h) */
        ptl_handle_eq_t many[65];
        for (int i = 0; i < 65; i++)
            many[i] = eq;
        CHECK_EQ(PtlEQPoll(many, 64, 0, &ev, &which), PTL_EQ_EMPTY);
        CHECK_EQ(PtlEQPoll(many, 65, 0, &ev, &which), PTL_FAIL);
    }
    CHECK_EQ(PtlEQPoll(&eq, 1, -5, &ev, &which), PTL_FAIL);
    {   /* each refusal names the argument that is NULL, and only that one */
        char said[1024];
        CHECK_EQ(eq_poll_said(NULL, &ev, said, sizeof(said)), PTL_SEGV);
        CHECK(strstr(said, "PtlEQPoll/Wait with a NULL eq_handles\n") != NULL);
        CHECK(strstr(said, "NULL event") == NULL);
        CHECK_EQ(eq_poll_said(&eq, NULL, said, sizeof(said)), PTL_SEGV);
        CHECK(strstr(said, "PtlEQPoll/Wait with a NULL event\n") != NULL);
        CHECK(strstr(said, "NULL eq_handles") == NULL);
    }
    /* Refused, not a wait for ever on a queue nothing comes to. */
    check_watchdog("test_ptl_api: PtlEQWait with a NULL event", 10);
    CHECK_EQ(PtlEQWait(eq, NULL), PTL_SEGV);
    alarm(0);
    /* A timed poll with nothing to come is ended by its timeout (and not
     * before it): a poll that would sleep for ever fails here, not by
     * ctest's timeout. */
    signal(SIGALRM, poll_never_ended);
    alarm(10);
    t0 = onic_time_ns();
    CHECK_EQ(PtlEQPoll(&eq, 1, 20, &ev, &which), PTL_EQ_EMPTY);
    CHECK(onic_time_ns() - t0 >= 20000000u);
    alarm(0);
    CHECK_EQ(PtlEQFree(eq2), PTL_OK);
    CHECK_EQ(PtlEQFree(eq2), PTL_EQ_INVALID);
    CHECK_EQ(PtlEQGet(eq2, &ev), PTL_EQ_INVALID);
    {
        ptl_handle_eq_t two[2] = {eq, eq2};
        CHECK_EQ(PtlEQPoll(two, 2, 0, &ev, &which), PTL_EQ_INVALID);
    }

    /* Memory descriptors. */
    CHECK_EQ(PtlMDAttach(me, md_desc(NULL, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDBind(ni, md_desc(NULL, (ptl_size_t)1 << 47, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &md),
             PTL_MD_ILLEGAL); /* only PTL_SIZE_MAX may start at NULL */
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, -2, 0, PTL_EQ_NONE), PTL_RETAIN, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, md_desc(NULL, 4, 1, PTL_MD_IOVEC, PTL_EQ_NONE), PTL_RETAIN, &md),
             PTL_MD_ILLEGAL); /* an I/O vector without its array (test_ptl_iovec: the rest) */
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, 1, 0x10000, PTL_EQ_NONE), PTL_RETAIN, &md),
             PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, (ptl_size_t)1 << 48, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &md),
             PTL_MD_ILLEGAL);
    d = md_desc(buf, 4, 1, PTL_MD_MAX_SIZE, PTL_EQ_NONE);
    d.max_size = 5;
    CHECK_EQ(PtlMDAttach(me, d, PTL_RETAIN, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, 1, 0, PTL_EQ_NONE), (ptl_unlink_t)3, &md),
             PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, 1, 0, eq2), PTL_RETAIN, &md), PTL_EQ_INVALID);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, 1, 0, me), PTL_RETAIN, &md), PTL_EQ_INVALID);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, NULL), PTL_SEGV);
    CHECK_EQ(PtlMDAttach(eq, md_desc(buf, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &md), PTL_ME_INVALID);
    CHECK_EQ(PtlMDBind(me, md_desc(buf, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &md), PTL_NI_INVALID);
    CHECK_EQ(PtlMDBind(ni, md_desc(buf, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, NULL), PTL_SEGV);
    CHECK_EQ(PtlMDBind(ni, md_desc(buf, 4096, 1, 0, eq), PTL_RETAIN, &md), PTL_OK);
    CHECK_EQ(PtlMDUpdate(md, NULL, NULL, eq2), PTL_EQ_INVALID);
    CHECK_EQ(PtlMDUpdate(md, NULL, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(PtlMDUnlink(eq), PTL_MD_INVALID);

    /* Access control. */
    CHECK_EQ(PtlACEntry(ni, 256, ANYONE, PTL_UID_ANY, PTL_JID_ANY, 0), PTL_AC_INDEX_INVALID);
    CHECK_EQ(PtlACEntry(ni, 2, ((ptl_process_id_t){3, 0}), PTL_UID_ANY, PTL_JID_ANY, 0),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlACEntry(ni, 2, ANYONE, PTL_UID_ANY, PTL_JID_ANY, 16), PTL_PT_INDEX_INVALID);
    CHECK_EQ(PtlACEntry(ni, 2, ANYONE, PTL_UID_ANY, PTL_JID_ANY, PTL_PT_INDEX_ANY), PTL_OK);

    /* Puts and gets. */
    CHECK_EQ(PtlPut(md, (ptl_ack_req_t)5, SELF, 0, 0, 0, 0, 0), PTL_FAIL);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, ((ptl_process_id_t){0, 1}), 0, 0, 0, 0, 0),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, ((ptl_process_id_t){PTL_NID_ANY, 0}), 0, 0, 0, 0,
                          0), PTL_PROCESS_INVALID);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, SELF, 16, 0, 0, 0, 0), PTL_PT_INDEX_INVALID);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, SELF, 0, 256, 0, 0, 0), PTL_AC_INDEX_INVALID);
    CHECK_EQ(PtlPutRegion(md, 4090, 8, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlPutRegion(md, (ptl_size_t)-1, 8, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, SELF, 0, 0, 0, (ptl_size_t)1 << 48, 0), PTL_FAIL);
    CHECK_EQ(PtlGetRegion(md, 8, 4089, SELF, 0, 0, 0, 0), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlGetRegion(md, 0, 8, ((ptl_process_id_t){0, 9}), 0, 0, 0, 0), PTL_PROCESS_INVALID);
    CHECK_EQ(PtlGet(md, SELF, 0, 300, 0, 0), PTL_AC_INDEX_INVALID);
    CHECK_EQ(PtlGet(eq, SELF, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlMDBind(ni, md_desc(buf, 4, 0, 0, PTL_EQ_NONE), PTL_RETAIN, &md2), PTL_OK);
    CHECK_EQ(PtlPut(md2, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0), PTL_MD_INVALID); /* used up */
    CHECK_EQ(PtlGet(md2, SELF, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlMDUnlink(md2), PTL_OK);
    CHECK_EQ(PtlPut(md2, PTL_NOACK_REQ, SELF, 0, 0, 0, 0, 0), PTL_MD_INVALID); /* freed */
    CHECK_EQ(PtlMEAttachSearch(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER,
                               md_desc(buf, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &me2, &md2, NULL),
             PTL_SEGV);
    CHECK_EQ(PtlMEAttachSearch(ni, 0, ANYONE, 0, 0, PTL_RETAIN, PTL_INS_AFTER,
                               md_desc(NULL, 4, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &me2, &md2, &hdr),
             PTL_MD_ILLEGAL);

    CHECK(strcmp(PtlErrorStr(PTL_EQ_EMPTY), "PTL_EQ_EMPTY") == 0);
    CHECK(strcmp(PtlErrorStr(PTL_OVF_MATCHED), "PTL_OVF_MATCHED") == 0);
    CHECK(PtlErrorStr(-1) != NULL && PtlErrorStr(PTL_MAX_ERRNO) != NULL);

    /* Finalized: the NI's handles are dead, of every kind. */
    CHECK_EQ(PtlNIFini(ni), PTL_OK);
    all_calls_return(PTL_OK, ni, me, md, eq);
    PtlFini();
    all_calls_return(PTL_NO_INIT, ni, me, md, eq);
}

/* The job id as Portals sees it: the last 8 hex digits of the launcher's
 * job id, never PTL_JID_NONE (system processes, admitted by ACL entry 1)
 * nor PTL_JID_ANY (a wildcard). */
static void test_jid(void)
{
    CHECK_EQ(onic_ptl_jid_of("onic-1234abcd"), 0x1234abcd);
    CHECK_EQ(onic_ptl_jid_of("ff0000002a"), 0x2a);
    CHECK(onic_ptl_jid_of("onic-00000000") != PTL_JID_NONE);
    CHECK(onic_ptl_jid_of("onic-ffffffff") != PTL_JID_ANY);
    CHECK(onic_ptl_jid_of("") != PTL_JID_NONE);
    CHECK(onic_ptl_jid_of("") != PTL_JID_ANY);
}

/* PtlNIInit when memory runs out at each allocation in turn: the answer
 * is PTL_NO_SPACE (or PTL_NAL_FAILED while the transport opens), never
 * another code, and a later PtlNIInit opens the interface. */
static void test_ni_init_no_memory(void)
{
    ptl_handle_ni_t ni;
    int n, rc = PTL_FAIL, no_space = 0;
    long k;

    for (k = 0; k < 1000; k++) {
        REQUIRE(PtlInit(&n) == PTL_OK);
        onic_mem_fail_after(k);
        rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni);
        onic_mem_fail_after(-1);
        if (rc == PTL_OK) {
            CHECK_EQ(PtlNIFini(ni), PTL_OK);
            PtlFini();
            break;
        }
        no_space += rc == PTL_NO_SPACE;
        if (rc != PTL_NO_SPACE && rc != PTL_NAL_FAILED) {
            fprintf(stderr, "test_ptl_api: PtlNIInit with allocation %ld failing: %s\n", k + 1,
                    PtlErrorStr(rc));
            CHECK(rc == PTL_NO_SPACE || rc == PTL_NAL_FAILED);
        }
        CHECK_EQ(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
        CHECK_EQ(PtlNIFini(ni), PTL_OK);
        PtlFini();
    }
    CHECK_EQ(rc, PTL_OK);
    CHECK(no_space > 0); /* the interface's own allocations were reached */
}

/* A job of one puts and gets to itself through the transport. */
static void test_self(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_me_t me;
    ptl_handle_md_t tmd, smd, gmd;
    ptl_handle_eq_t teq, seq;
    ptl_process_id_t id;
    ptl_sr_value_t drops;
    ptl_event_t ev;
    uint8_t target[64] = {0}, source[4096], back[2048];
    static uint8_t big[4096], back2[4096];
    int n, got_ack = 0, got_end = 0;

    CHECK_EQ(PtlInit(&n), PTL_OK);
    /* Without the interface every wait below would wait for ever. */
    n = PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni);
    CHECK_EQ(n, PTL_OK);
    if (n != PTL_OK) {
        PtlFini();
        return;
    }
    CHECK_EQ(PtlGetId(ni, &id), PTL_OK);
    CHECK_EQ(id.nid, 0);
    CHECK_EQ(id.pid, 0);
    CHECK_EQ(PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &teq), PTL_OK);
    CHECK_EQ(PtlEQAlloc(ni, 16, PTL_EQ_HANDLER_NONE, &seq), PTL_OK);
    CHECK_EQ(PtlMEAttach(ni, 5, ANYONE, 0x77, 0, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, md_desc(target, 64, PTL_MD_THRESH_INF,
                                     PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE |
                                         PTL_MD_EVENT_START_DISABLE, teq),
                         PTL_RETAIN, &tmd), PTL_OK);
    for (int i = 0; i < 4096; i++)
        source[i] = (uint8_t)(i * 7);
    CHECK_EQ(PtlMDBind(ni, md_desc(source, 4096, PTL_MD_THRESH_INF, PTL_MD_EVENT_START_DISABLE, seq),
                       PTL_RETAIN, &smd), PTL_OK);
    CHECK_EQ(PtlPutRegion(smd, 100, 32, PTL_ACK_REQ, id, 5, 0, 0x77, 8, 5), PTL_OK);
    CHECK_EQ(PtlEQWait(teq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.mlength, 32);
    CHECK_EQ(ev.hdr_data, 5);
    CHECK(memcmp(target + 8, source + 100, 32) == 0);
    while (!got_ack) {
        n = PtlEQWait(seq, &ev);
        CHECK_EQ(n, PTL_OK);
        if (n != PTL_OK)
            break;
        got_end += ev.type == PTL_EVENT_SEND_END;
        got_ack += ev.type == PTL_EVENT_ACK;
    }
    CHECK_EQ(got_end, 1);
    CHECK_EQ(ev.mlength, 32);
    /* A get: the whole target MD back, truncated to what was asked. */
    CHECK_EQ(PtlMDBind(ni, md_desc(back, 2048, 1, 0, seq), PTL_UNLINK, &gmd), PTL_OK);
    CHECK_EQ(PtlGetRegion(gmd, 0, 40, id, 5, 0, 0x77, 8), PTL_OK);
    CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
    CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_END);
    CHECK_EQ(ev.mlength, 40);
    CHECK(memcmp(back, source + 100, 32) == 0);
    CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    /* From an MD spanning all memory, offsets are addresses. */
    {
        ptl_handle_md_t all;
        CHECK_EQ(PtlMDBind(ni, md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE),
                           PTL_RETAIN, &all), PTL_OK);
        memset(target, 0, sizeof(target));
        CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)(source + 40), 16, PTL_NOACK_REQ, id, 5,
                              0, 0x77, 4, 0), PTL_OK);
        do /* past the get's GET_END */
            CHECK_EQ(PtlEQWait(teq, &ev), PTL_OK);
        while (ev.type != PTL_EVENT_PUT_END);
        CHECK_EQ(ev.mlength, 16);
        CHECK(memcmp(target + 4, source + 40, 16) == 0);
        /* A one-shot MD with PTL_MD_EVENT_UNLINK_DISABLE: its END event is
         * the last, and it is gone after it. */
        {
            ptl_handle_me_t me1;
            ptl_handle_md_t md1;
            uint8_t one[8];
            CHECK_EQ(PtlMEAttach(ni, 6, ANYONE, 1, 0, PTL_UNLINK, PTL_INS_AFTER, &me1), PTL_OK);
            CHECK_EQ(PtlMDAttach(me1, md_desc(one, 8, 1, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE |
                                                           PTL_MD_EVENT_UNLINK_DISABLE, teq),
                                 PTL_UNLINK, &md1), PTL_OK);
            CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)source, 8, PTL_NOACK_REQ, id, 6, 0,
                                  1, 0, 0), PTL_OK);
            CHECK_EQ(PtlEQWait(teq, &ev), PTL_OK);
            CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
            CHECK(memcmp(one, source, 8) == 0);
            CHECK_EQ(PtlEQGet(teq, &ev), PTL_EQ_EMPTY);
            CHECK_EQ(PtlMDUnlink(md1), PTL_MD_INVALID);
            CHECK_EQ(PtlMEUnlink(me1), PTL_ME_INVALID);
        }
        CHECK_EQ(PtlMDUnlink(all), PTL_OK);
    }
    /* More than one message carries: by the transport's RMA, to oneself. */
    CHECK_EQ(PtlMEAttach(ni, 5, ANYONE, 0x88, 0, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, md_desc(big, sizeof(big), PTL_MD_THRESH_INF,
                                     PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE |
                                         PTL_MD_EVENT_START_DISABLE, teq),
                         PTL_RETAIN, &tmd), PTL_OK);
    CHECK_EQ(PtlPutRegion(smd, 500, 3000, PTL_ACK_REQ, id, 5, 0, 0x88, 10, 0), PTL_OK);
    do
        CHECK_EQ(PtlEQWait(teq, &ev), PTL_OK);
    while (ev.type != PTL_EVENT_PUT_END);
    CHECK_EQ(ev.mlength, 3000);
    CHECK(memcmp(big + 10, source + 500, 3000) == 0);
    for (got_ack = got_end = 0; !got_ack;) {
        CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
        got_end += ev.type == PTL_EVENT_SEND_END;
        got_ack += ev.type == PTL_EVENT_ACK;
    }
    CHECK_EQ(got_end, 1);
    CHECK_EQ(ev.mlength, 3000);
    memset(back2, 0, sizeof(back2));
    CHECK_EQ(PtlMDBind(ni, md_desc(back2, sizeof(back2), 1, 0, seq), PTL_UNLINK, &gmd), PTL_OK);
    CHECK_EQ(PtlGetRegion(gmd, 0, 3000, id, 5, 0, 0x88, 10), PTL_OK);
    do
        CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
    while (ev.type != PTL_EVENT_REPLY_END);
    CHECK_EQ(ev.mlength, 3000);
    CHECK(memcmp(back2, source + 500, 3000) == 0);
    /* A put nobody takes is counted, large or not; the large one still ends. */
    CHECK_EQ(PtlPutRegion(smd, 0, 8, PTL_NOACK_REQ, id, 6, 0, 0x77, 0, 0), PTL_OK);
    CHECK_EQ(PtlPutRegion(smd, 0, 4096, PTL_NOACK_REQ, id, 6, 0, 0x77, 0, 0), PTL_OK);
    do
        CHECK_EQ(PtlEQWait(seq, &ev), PTL_OK);
    while (ev.type != PTL_EVENT_SEND_END);
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &drops), PTL_OK);
    CHECK_EQ(drops, 2);
    CHECK_EQ(PtlNIFini(ni), PTL_OK);
    PtlFini();
}

int main(void)
{
    /* After a failure the later tests' waits may wait for events that a
     * broken queue dropped: stop at the first test that fails. */
    void (*const tests[])(void) = {test_before_init, test_errors, test_jid,
                                   test_ni_init_no_memory, test_self};

    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]) && check_failed == 0; i++)
        tests[i]();
    return check_summary("test_ptl_api");
}
