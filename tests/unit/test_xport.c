/* The transport's front end in one process (a job of one, given by params,
 * so no launcher and no shared memory): the job id made from the name it
 * is given (16 hex digits kept, anything else hashed by 64-bit FNV-1a),
 * which transport reaches which rank (none past the last), messages to
 * oneself delivered by the next poll, in order, never inside send, and a
 * wait with nothing to come that its timeout ends, and errors that name
 * the rank a call was refused for. Deterministic. */
#include "check.h"
#include "base/config.h"
#include "xport/xport.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct got {
    unsigned n;
    uint32_t src[8];
    uint64_t seq[8];
    size_t   len[8];
    size_t   hdr_len[8];
    uint8_t  last[8];
} got_t;

static void on_msg(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                   const void *payload, size_t len)
{
    got_t *g = arg;

    if (g->n < 8) {
        g->src[g->n] = src;
        g->seq[g->n] = 0;
        if (user_len == sizeof(uint64_t))
            memcpy(&g->seq[g->n], user_hdr, sizeof(uint64_t));
        g->len[g->n] = len;
        g->hdr_len[g->n] = user_len;
        g->last[g->n] = len > 0 ? ((const uint8_t *)payload)[len - 1] : 0;
    }
    g->n++;
}

static onic_xport_t *open_one(onic_config_t *cfg, const char *jobid, got_t *g)
{
    onic_xport_params_t p = {0};
    onic_xport_t *x = NULL;

    p.rank = 0;
    p.size = 1;
    p.jobid = jobid;
    p.recv_cb = on_msg;
    p.cb_arg = g;
    p.cfg = cfg;
    CHECK_EQ(onic_xport_open(&p, &x), ONIC_OK);
    return x;
}

/* The name a job is given becomes its id: 1 to 16 lowercase hex digits as
 * they are (onicrun's ids), any other name its FNV-1a hash in 16 digits,
 * so that every process of a launcher's job makes the same id and
 * different names make different ones. */
static void test_jobid(onic_config_t *cfg)
{
    static const struct {
        const char *name, *id;
    } cases[] = {
        {"abc123", "abc123"},
        {"0123456789abcdef", "0123456789abcdef"},
        /* FNV-1a 64 of "foobar": the published test vector. */
        {"foobar", "85944171f73967e8"},
        {"job.42", "917efeb67302453c"},
        {"job.43", "917effb6730246ef"},
        /* 17 hex digits are not an id: hashed, not cut. */
        {"0123456789abcdef0", "353d49cf45a687d7"},
        {"ABC", "fa2fe219a07442eb"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        got_t g = {0};
        onic_xport_t *x = open_one(cfg, cases[i].name, &g);
        if (x == NULL)
            continue;
        if (strcmp(onic_xport_jobid(x), cases[i].id) != 0) {
            CHECK(!"job id");
            fprintf(stderr, "  job named \"%s\": id %s, expected %s\n", cases[i].name,
                    onic_xport_jobid(x), cases[i].id);
        } else {
            CHECK(1);
        }
        onic_xport_close(x);
    }
}

static void test_self(onic_config_t *cfg)
{
    got_t g = {0};
    onic_xport_t *x = open_one(cfg, NULL, &g);
    uint8_t payload[100];

    if (x == NULL)
        return;
    CHECK_EQ(onic_xport_rank(x), 0);
    CHECK_EQ(onic_xport_size(x), 1);
    /* Rank 0 is this process; there is no rank 1. */
    CHECK(onic_xport_peer_transport(x, 0) != NULL &&
          strcmp(onic_xport_peer_transport(x, 0), "self") == 0);
    CHECK(onic_xport_peer_transport(x, 1) == NULL);
    CHECK(onic_xport_peer_transport(x, UINT32_MAX) == NULL);
    CHECK(onic_xport_peer_transport(NULL, 0) == NULL);
    CHECK(onic_xport_caps(x, 0) & ONIC_XPORT_CAP_RMA);
    CHECK_EQ(onic_xport_caps(x, 1), 0);
    CHECK(onic_xport_max_payload(x) >= sizeof(payload));

    /* Three messages to oneself: none delivered inside send, all by the
     * next poll, in the order sent, from rank 0. */
    for (uint64_t seq = 1; seq <= 3; seq++) {
        memset(payload, (int)(seq * 10), sizeof(payload));
        CHECK_EQ(onic_xport_send(x, 0, &seq, sizeof(seq), payload, (size_t)seq * 30),
                 ONIC_OK);
    }
    CHECK_EQ(g.n, 0);
    CHECK_EQ(onic_xport_backlog(x), 0);
    CHECK_EQ(onic_xport_poll(x), 3);
    CHECK_EQ(g.n, 3);
    for (unsigned i = 0; i < 3 && i < g.n; i++) {
        CHECK_EQ(g.src[i], 0);
        CHECK_EQ(g.seq[i], i + 1);
        CHECK_EQ(g.len[i], (i + 1) * 30);
        CHECK_EQ(g.last[i], (i + 1) * 10);
    }
    CHECK_EQ(onic_xport_poll(x), 0);
    CHECK_EQ(onic_xport_send(x, 1, NULL, 0, NULL, 0), ONIC_ERR_INVALID_PARAM);

    /* Nothing will come: the wait ends by its timeout, with nothing. */
    CHECK_EQ(onic_xport_wait(x, 20 * 1000000ull), 0);
    CHECK_EQ(g.n, 3);
    onic_xport_close(x);
}

/* Size 0 asks the launcher; with none (no ONIC_* job variables) the
 * process is a job of one, as MPI's singleton is. */
static void test_no_launcher(onic_config_t *cfg)
{
    onic_xport_params_t p = {0};
    onic_xport_t *x = NULL;
    got_t g = {0};
    uint64_t seq = 7;

    p.recv_cb = on_msg;
    p.cb_arg = &g;
    p.cfg = cfg;
    CHECK_EQ(onic_xport_open(&p, &x), ONIC_OK);
    if (x == NULL)
        return;
    CHECK_EQ(onic_xport_rank(x), 0);
    CHECK_EQ(onic_xport_size(x), 1);
    CHECK(onic_xport_peer_transport(x, 0) != NULL &&
          strcmp(onic_xport_peer_transport(x, 0), "self") == 0);
    CHECK_EQ(onic_xport_send(x, 0, &seq, sizeof(seq), NULL, 0), ONIC_OK);
    CHECK_EQ(onic_xport_poll(x), 1);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.seq[0], 7);
    onic_xport_close(x);
}

/* The limits are inclusive: a user header of ONIC_XPORT_USER_HDR bytes and
 * a payload of the endpoint's largest go, and arrive whole; one byte more
 * of either is refused. */
static void test_limits(onic_config_t *cfg)
{
    got_t g = {0};
    onic_xport_t *x = open_one(cfg, NULL, &g);
    uint8_t hdr[ONIC_XPORT_USER_HDR + 1];
    uint8_t *payload;
    size_t max;

    if (x == NULL)
        return;
    max = onic_xport_max_payload(x);
    payload = calloc(1, max + 1);
    REQUIRE(payload != NULL);
    memset(hdr, 0x5a, sizeof(hdr));
    payload[max - 1] = 0xa5;
    CHECK_EQ(onic_xport_send(x, 0, hdr, ONIC_XPORT_USER_HDR, payload, max), ONIC_OK);
    CHECK_EQ(onic_xport_poll(x), 1);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.len[0], max);
    CHECK_EQ(g.last[0], 0xa5);
    CHECK_EQ(g.hdr_len[0], ONIC_XPORT_USER_HDR);
    CHECK_EQ(onic_xport_send(x, 0, hdr, ONIC_XPORT_USER_HDR + 1, NULL, 0),
             ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_xport_send(x, 0, NULL, 0, payload, max + 1), ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_xport_poll(x), 0);
    CHECK_EQ(g.n, 1);
    free(payload);
    onic_xport_close(x);
}

/* A send or RMA to a rank the job does not have is refused, and the error
 * names the rank and the job's ranks (the log rule: the object and its
 * value), not a NULL argument. Rank 1 in a job of one is the first rank
 * past the last. */
static void test_bad_rank_named(onic_config_t *cfg)
{
    got_t g = {0};
    onic_xport_t *x = open_one(cfg, NULL, &g);
    onic_xport_mkey_t key;
    uint64_t word = 0;
    char said[1024];
    FILE *tmp;
    int saved;

    if (x == NULL)
        return;
    memset(&key, 0, sizeof(key));
    check_stderr_catch(&tmp, &saved);
    CHECK_EQ(onic_xport_send(x, 1, NULL, 0, NULL, 0), ONIC_ERR_INVALID_PARAM);
    check_stderr_caught(tmp, saved, said, sizeof(said));
    CHECK(strstr(said, "send to rank 1, but the job has ranks 0 to 0") != NULL);

    check_stderr_catch(&tmp, &saved);
    CHECK_EQ(onic_xport_rma_read(x, 1, &word, &key, 0, sizeof(word), NULL),
             ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_xport_rma_write(x, 1, &word, &key, 0, sizeof(word), NULL),
             ONIC_ERR_INVALID_PARAM);
    check_stderr_caught(tmp, saved, said, sizeof(said));
    CHECK(strstr(said, "rma_read to rank 1, but the job has ranks 0 to 0") != NULL);
    CHECK(strstr(said, "rma_write to rank 1, but the job has ranks 0 to 0") != NULL);
    if (strstr(said, "to rank 1") == NULL)
        fprintf(stderr, "  the errors said:\n%s", said);
    onic_xport_close(x);
}

static void on_alarm(int sig)
{
    static const char msg[] = "test_xport: a wait of 20 ms has not returned after 20 s\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

int main(void)
{
    onic_config_t cfg;

    /* A wait that never ends fails the test here rather than by ctest's
     * timeout. */
    signal(SIGALRM, on_alarm);
    alarm(20);
    onic_config_defaults(&cfg);
    cfg.wait_spin_us = 0; /* the wait goes on to yield and sleep at once */
    test_jobid(&cfg);
    test_self(&cfg);
    test_no_launcher(&cfg);
    test_limits(&cfg);
    test_bad_rank_named(&cfg);
    return check_summary("test_xport");
}
