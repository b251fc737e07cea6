/* onic-bench-ptl: what the Portals layer adds to the transport, measured in
 * one run between two processes:
 *
 *   raw xport      onic_xport_send + poll ping-pong, 8 B (one-way ns), and 8-byte
 *                  messages with 64 in flight (msgs/s): the floor
 *   put            PtlPut ping-pong, 8 B, no ack (one-way ns)
 *   put + ack      PtlPut with PTL_ACK_REQ until its ACK event (round trip ns)
 *   get            PtlGet of 8 B until REPLY_END (round trip ns)
 *   put rate       8-byte puts, 64 in flight, one put back per window (msgs/s)
 *
 * for every matching engine, with the matching entry alone on its portal
 * (depth 1) and behind 1023 entries that do not match (depth 1024). Run it as
 *     onicrun -n 2 --bind core build/onic-bench-ptl [--quick] [--csv] [--reps N]
 * Rank 0 prints medians and, for put and put rate, the cost added over the
 * raw transport. */
#include "base/clock.h"
#include "base/config.h"
#include "xport/xport.h"
#include "../pair.h"
#include <onic/match.h>
#include <onic/portals.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PT       4
#define BITS     42ull
#define WINDOW   64
#define EQ_COUNT 4096

typedef struct bench {
    uint32_t        rank;
    bench_pair_t *sh;
    uint64_t        round;
    unsigned        reps;
    int             quick, csv;
    /* raw transport */
    onic_xport_t   *x;
    uint64_t        received;
    /* Portals */
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;       /* target events (PUT_END, GET_END) */
    ptl_handle_eq_t send_eq;  /* initiator events (SEND_END, ACK, REPLY_END) */
    ptl_handle_md_t md_noeq, md_ack, md_get;
    uint64_t        buf[8], target[8];
} bench_t;

static void barrier(bench_t *b)
{
    bench_barrier(b->sh, ++b->round);
}

static double median(bench_t *b, bench_fn_t fn, uint64_t n)
{
    return bench_median(b->sh, &b->round, b->reps, fn, b, n, 0);
}

/* --- the raw transport ---------------------------------------------------- */

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    (void)src, (void)user_hdr, (void)user_len, (void)payload, (void)len;
    ((bench_t *)arg)->received++;
}

static double raw_pingpong(void *arg, uint64_t n, size_t len)
{
    bench_t *b = arg;
    uint64_t word = 7, t0 = onic_time_ns(), base = b->received;

    (void)len;
    for (uint64_t i = 1; i <= n; i++) {
        if (b->rank == 0)
            onic_xport_send(b->x, 1, NULL, 0, &word, sizeof(word));
        while (b->received < base + i)
            onic_xport_poll(b->x);
        if (b->rank == 1)
            onic_xport_send(b->x, 0, NULL, 0, &word, sizeof(word));
    }
    return (double)(onic_time_ns() - t0) / (2.0 * (double)n);
}

static double raw_rate(void *arg, uint64_t windows, size_t len)
{
    bench_t *b = arg;
    uint64_t word = 7, t0 = onic_time_ns(), base = b->received;

    (void)len;
    for (uint64_t w = 1; w <= windows; w++) {
        if (b->rank == 0) {
            for (int i = 0; i < WINDOW; i++)
                onic_xport_send(b->x, 1, NULL, 0, &word, sizeof(word));
            while (b->received < base + w)
                onic_xport_poll(b->x);
        } else {
            while (b->received < base + WINDOW * w)
                onic_xport_poll(b->x);
            onic_xport_send(b->x, 0, NULL, 0, NULL, 0);
        }
    }
    return (double)windows * WINDOW * 1e9 / (double)(onic_time_ns() - t0);
}

/* --- Portals ------------------------------------------------------------------ */

static const ptl_process_id_t peer_of[2] = {{0, 1}, {0, 0}};

/* The next event of kind type on eq (others are skipped). */
static void wait_event(ptl_handle_eq_t eq, ptl_event_kind_t type)
{
    ptl_event_t ev;

    for (;;) {
        int rc = PtlEQGet(eq, &ev);
        if ((rc == PTL_OK || rc == PTL_EQ_DROPPED) && ev.type == type)
            return;
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED && rc != PTL_EQ_EMPTY) {
            fprintf(stderr, "onic-bench-ptl: PtlEQGet: %s\n", PtlErrorStr(rc));
            exit(1);
        }
    }
}

/* Rank 1 answers gets and acks until rank 0 is done. */
static void serve(bench_t *b)
{
    ptl_event_t ev;

    while (!__atomic_load_n(&b->sh->stop, __ATOMIC_ACQUIRE))
        PtlEQGet(b->eq, &ev);
}

static double put_pingpong(void *arg, uint64_t n, size_t len)
{
    bench_t *b = arg;
    uint64_t t0 = onic_time_ns();

    (void)len;
    for (uint64_t i = 0; i < n; i++) {
        if (b->rank == 0)
            PtlPut(b->md_noeq, PTL_NOACK_REQ, peer_of[0], PT, 0, BITS, 0, 0);
        wait_event(b->eq, PTL_EVENT_PUT_END);
        if (b->rank == 1)
            PtlPut(b->md_noeq, PTL_NOACK_REQ, peer_of[1], PT, 0, BITS, 0, 0);
    }
    return (double)(onic_time_ns() - t0) / (2.0 * (double)n);
}

/* Round trips started by rank 0 (a put asking for an ack, or a get) while
 * rank 1 serves them; ns each. */
static double round_trips(bench_t *b, uint64_t n, int get)
{
    uint64_t t0 = onic_time_ns();

    if (b->rank == 1) {
        serve(b);
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (get)
            PtlGet(b->md_get, peer_of[0], PT, 0, BITS, 0);
        else
            PtlPut(b->md_ack, PTL_ACK_REQ, peer_of[0], PT, 0, BITS, 0, 0);
        wait_event(b->send_eq, get ? PTL_EVENT_REPLY_END : PTL_EVENT_ACK);
    }
    t0 = onic_time_ns() - t0;
    __atomic_store_n(&b->sh->stop, 1, __ATOMIC_RELEASE);
    return (double)t0 / (double)n;
}

static double put_ack(void *arg, uint64_t n, size_t len)
{
    (void)len;
    return round_trips(arg, n, 0);
}

static double get_latency(void *arg, uint64_t n, size_t len)
{
    (void)len;
    return round_trips(arg, n, 1);
}

static double put_rate(void *arg, uint64_t windows, size_t len)
{
    bench_t *b = arg;
    uint64_t t0 = onic_time_ns();

    (void)len;
    for (uint64_t w = 0; w < windows; w++) {
        if (b->rank == 0) {
            for (int i = 0; i < WINDOW; i++)
                PtlPut(b->md_noeq, PTL_NOACK_REQ, peer_of[0], PT, 0, BITS, 0, 0);
            wait_event(b->eq, PTL_EVENT_PUT_END);
        } else {
            for (int i = 0; i < WINDOW; i++)
                wait_event(b->eq, PTL_EVENT_PUT_END);
            PtlPut(b->md_noeq, PTL_NOACK_REQ, peer_of[1], PT, 0, BITS, 0, 0);
        }
    }
    return (double)windows * WINDOW * 1e9 / (double)(onic_time_ns() - t0);
}

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "onic-bench-ptl: %s: %s\n", what, PtlErrorStr(rc));
        exit(1);
    }
}

/* An interface with the engine ONIC_MATCH names and depth entries on PT,
 * the one that matches last. */
static void ptl_setup(bench_t *b, unsigned depth)
{
    ptl_md_t md = {0};
    ptl_handle_me_t me;
    ptl_handle_md_t mdh;
    ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
    int max;

    check(PtlInit(&max), "PtlInit");
    check(PtlNIInit(PTL_IFACE_DEFAULT, b->rank, NULL, NULL, &b->ni), "PtlNIInit");
    check(PtlEQAlloc(b->ni, EQ_COUNT, PTL_EQ_HANDLER_NONE, &b->eq), "PtlEQAlloc");
    check(PtlEQAlloc(b->ni, EQ_COUNT, PTL_EQ_HANDLER_NONE, &b->send_eq), "PtlEQAlloc");
    md.start = b->target;
    md.length = sizeof(uint64_t);
    md.threshold = PTL_MD_THRESH_INF;
    md.options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_EVENT_START_DISABLE |
                 PTL_MD_MANAGE_REMOTE;
    md.eq_handle = b->eq;
    for (unsigned i = 0; i < depth; i++) {
        check(PtlMEAttach(b->ni, PT, any, i + 1 == depth ? BITS : 1000 + i, 0, PTL_RETAIN,
                          PTL_INS_AFTER, &me), "PtlMEAttach");
        check(PtlMDAttach(me, md, PTL_RETAIN, &mdh), "PtlMDAttach");
    }
    md.start = b->buf;
    md.options = PTL_MD_EVENT_START_DISABLE;
    md.eq_handle = PTL_EQ_NONE;
    check(PtlMDBind(b->ni, md, PTL_RETAIN, &b->md_noeq), "PtlMDBind");
    md.eq_handle = b->send_eq;
    md.options = PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE; /* the ACK only */
    check(PtlMDBind(b->ni, md, PTL_RETAIN, &b->md_ack), "PtlMDBind");
    md.options = PTL_MD_EVENT_START_DISABLE;
    check(PtlMDBind(b->ni, md, PTL_RETAIN, &b->md_get), "PtlMDBind");
}

static void ptl_teardown(bench_t *b)
{
    check(PtlNIFini(b->ni), "PtlNIFini");
    PtlFini();
}

int main(int argc, char **argv)
{
    static const unsigned depths[] = {1, 1024};
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    bench_t b = {0};
    bench_opts_t opt;
    uint64_t scale;
    double raw_lat, raw_rt;

    if (bench_opts_parse(argc, argv, &opt) != 0)
        return 2;
    if (opt.csv_file != NULL) {
        fprintf(stderr, "onic-bench-ptl: --csv-file is onic-bench-xport's; use --csv\n");
        return 2;
    }
    b.quick = opt.quick;
    b.csv = opt.csv;
    b.reps = opt.reps;
    if (onic_config_read(&cfg) != ONIC_OK || cfg.size != 2 || cfg.jobid[0] == '\0') {
        fprintf(stderr, "onic-bench-ptl: run it as two processes: onicrun -n 2 --bind core %s\n",
                argv[0]);
        return 2;
    }
    b.rank = cfg.rank;
    scale = b.quick ? 1 : 10;
    b.sh = bench_shared_map(&cfg, "ptl", sizeof(bench_pair_t));
    if (b.sh == NULL)
        return 1;

    /* The floor: the transport alone, closed again before Portals opens it. */
    p.rank = cfg.rank;
    p.size = cfg.size;
    p.jobid = cfg.jobid;
    p.recv_cb = on_message;
    p.cb_arg = &b;
    p.cfg = &cfg;
    if (onic_xport_open(&p, &b.x) != ONIC_OK)
        return 1;
    raw_lat = median(&b, raw_pingpong, 10000 * scale);
    raw_rt = median(&b, raw_rate, 1000 * scale);
    barrier(&b);
    onic_xport_close(b.x);
    barrier(&b);

    if (b.rank == 0) {
        if (b.csv)
            printf("engine,depth,measure,value,unit,added_over_raw\n"
                   "raw,0,xport_latency_8B,%.1f,ns,0\nraw,0,xport_rate_8B,%.0f,msgs/s,0\n",
                   raw_lat, raw_rt);
        else
            printf("onic-bench-ptl: median of %u repetitions, 2 processes\n"
                   "  raw transport: 8 B one-way %.1f ns, rate %.1f M msgs/s (%.1f ns each)\n"
                   "  %-6s %6s %12s %10s %12s %10s %14s %10s\n", b.reps, raw_lat, raw_rt / 1e6,
                   1e9 / raw_rt, "engine", "depth", "put ns", "added", "put+ack ns", "get ns",
                   "put rate M/s", "added ns");
    }
    for (const char *const *e = onic_match_engines(); *e != NULL; e++) {
        for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
            setenv("ONIC_MATCH", *e, 1);
            ptl_setup(&b, depths[d]);
            barrier(&b);
            double put = median(&b, put_pingpong, 10000 * scale);
            double ack = median(&b, put_ack, 10000 * scale);
            double get = median(&b, get_latency, 10000 * scale);
            double rate = median(&b, put_rate, 1000 * scale);
            barrier(&b);
            ptl_teardown(&b);
            barrier(&b);
            if (b.rank != 0)
                continue;
            if (b.csv)
                printf("%s,%u,put_latency_8B,%.1f,ns,%.1f\n%s,%u,put_ack_8B,%.1f,ns,\n"
                       "%s,%u,get_latency_8B,%.1f,ns,\n%s,%u,put_rate_8B,%.0f,msgs/s,%.1f\n",
                       *e, depths[d], put, put - raw_lat, *e, depths[d], ack, *e, depths[d],
                       get, *e, depths[d], rate, 1e9 / rate - 1e9 / raw_rt);
            else
                printf("  %-6s %6u %12.1f %+10.1f %12.1f %10.1f %14.1f %+10.1f\n", *e, depths[d],
                       put, put - raw_lat, ack, get, rate / 1e6, 1e9 / rate - 1e9 / raw_rt);
        }
    }
    munmap(b.sh, sizeof(bench_pair_t));
    return 0;
}
