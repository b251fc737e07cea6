/* onic-bench-xport: onic's shared-memory transport against the raw floor of
 * this machine, measured in one run between two processes:
 *
 *   raw ping-pong  one cache line bounced between the two cores (one-way ns)
 *   raw ring       a plain single-producer ring of 16-byte items (items/s)
 *   shm latency    onic_xport_send + poll ping-pong, 8 B and 1 KB (one-way ns)
 *   shm rate       8-byte messages, 64 in flight, one reply per window (msgs/s)
 *   RMA bandwidth  onic_xport_rma_read of 4 KiB to 64 MiB from the other
 *                  process, with each mechanism (cma, copy), beside memcpy
 *                  of the same sizes in one process (GB/s)
 *
 * Run it as two processes bound to two cores:
 *     onicrun -n 2 --bind core build/onic-bench-xport [--quick] [--csv] [--reps N]
 *                                                     [--csv-file FILE]
 * Rank 0 prints the median of the repetitions and each figure's ratio to
 * its raw floor, and each RMA figure's ratio to memcpy. */
#include "base/clock.h"
#include "base/config.h"
#include "base/copy.h"
#include "xport/xport.h"
#include "../pair.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RAW_RING_ITEMS 1024
#define RMA_MAX        (64u << 20)
#define RAW_LANES      64
#define RAW_SLOTS      256
#define RAW_CHUNK      65536
#define RAW_CHUNKS     4

/* The two receive-queue designs, plainly: a slot is one line whose first
 * word is the message's sequence number + 1, written last. */
typedef struct raw_slot {
    uint64_t ready;
    uint64_t data[7];
} raw_slot_t;

typedef struct raw_lane {
    _Alignas(64) uint64_t head;  /* consumer's count */
    _Alignas(64) uint64_t tail;  /* producers' count (kept across runs) */
    _Alignas(64) raw_slot_t slots[RAW_SLOTS];
} raw_lane_t;

/* The raw floor's shared memory: flags and ring on their own lines. */
typedef struct raw_shared {
    _Alignas(64) uint64_t ping;
    _Alignas(64) uint64_t pong;
    _Alignas(64) uint64_t head;   /* consumer's count */
    _Alignas(64) uint64_t tail;   /* producer's count */
    bench_pair_t pair;            /* barrier and stop flag */
    _Alignas(64) onic_xport_mkey_t key;  /* rank 1's RMA source */
    raw_lane_t lanes[RAW_LANES];         /* one per sender; only lane 0 is fed */
    raw_lane_t mpsc;                     /* one ring every sender claims slots in */
    _Alignas(64) uint64_t chunk_prod;    /* the raw pipelined copy */
    _Alignas(64) uint64_t chunk_cons;
    _Alignas(4096) uint8_t chunks[RAW_CHUNKS][RAW_CHUNK];
    _Alignas(64) uint64_t items[RAW_RING_ITEMS][2];
} raw_shared_t;

typedef struct bench {
    uint32_t       rank;
    raw_shared_t  *raw;
    onic_xport_t  *x;
    uint64_t       received, completed;
    uint8_t       *src, *dst;     /* RMA_MAX bytes each */
    int            quick, csv;
    unsigned       reps;
    const char    *csv_file;
} bench_t;

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    (void)src, (void)user_hdr, (void)user_len, (void)payload, (void)len;
    ((bench_t *)arg)->received++;
}

static void raw_barrier(bench_t *b, uint64_t round)
{
    bench_barrier(&b->raw->pair, round);
}

/* One-way ns of a cache line bounced n times. */
static double raw_pingpong(bench_t *b, uint64_t n)
{
    uint64_t t0 = onic_time_ns();
    for (uint64_t i = 1; i <= n; i++) {
        if (b->rank == 0) {
            __atomic_store_n(&b->raw->ping, i, __ATOMIC_RELEASE);
            while (__atomic_load_n(&b->raw->pong, __ATOMIC_ACQUIRE) != i)
                ;
        } else {
            while (__atomic_load_n(&b->raw->ping, __ATOMIC_ACQUIRE) != i)
                ;
            __atomic_store_n(&b->raw->pong, i, __ATOMIC_RELEASE);
        }
    }
    return (double)(onic_time_ns() - t0) / (2.0 * (double)n);
}

/* Items per second through a plain SPSC ring of 16-byte items. */
static double raw_ring(bench_t *b, uint64_t n)
{
    raw_shared_t *r = b->raw;
    uint64_t t0 = onic_time_ns(), sum = 0;

    if (b->rank == 0) {
        uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED), head = 0;
        for (uint64_t i = 0; i < n; i++, tail++) {
            while (tail - head >= RAW_RING_ITEMS)
                head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
            r->items[tail % RAW_RING_ITEMS][0] = i;
            r->items[tail % RAW_RING_ITEMS][1] = ~i;
            __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
        }
    } else {
        uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED), tail = head;
        for (uint64_t i = 0; i < n; i++, head++) {
            while (tail == head)
                tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
            sum += r->items[head % RAW_RING_ITEMS][0] ^ r->items[head % RAW_RING_ITEMS][1];
            __atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
        }
        if (sum != n * UINT64_MAX) /* every item read whole */
            fprintf(stderr, "onic-bench-xport: raw ring data corrupted\n");
    }
    return (double)n * 1e9 / (double)(onic_time_ns() - t0);
}

/* Messages per second from rank 0 into rank 1 through lane 0 of `lanes`
 * lanes (the receiver visits all of them, as it must when any sender may
 * write), or, with mpsc, through one ring whose slots a sender claims with
 * an atomic add on the shared tail, as every sender of a shared ring must. */
static double raw_queue(bench_t *b, uint64_t n, unsigned lanes, int mpsc)
{
    raw_lane_t *q = mpsc ? &b->raw->mpsc : &b->raw->lanes[0];
    uint64_t t0 = onic_time_ns(), bad = 0;

    if (b->rank == 0) {
        uint64_t head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
        uint64_t tail = q->tail;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t pos = mpsc ? __atomic_fetch_add(&q->tail, 1, __ATOMIC_RELAXED) : tail++;
            while (pos - head >= RAW_SLOTS)
                head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
            q->slots[pos % RAW_SLOTS].data[0] = i;
            __atomic_store_n(&q->slots[pos % RAW_SLOTS].ready, pos + 1, __ATOMIC_RELEASE);
        }
        if (!mpsc)
            q->tail = tail;
    } else {
        raw_lane_t *all = mpsc ? q : b->raw->lanes;
        uint64_t got = 0, heads[RAW_LANES];
        for (unsigned l = 0; l < lanes; l++)
            heads[l] = all[l].head;
        while (got < n) {
            for (unsigned l = 0; l < lanes; l++) {
                raw_lane_t *lane = &all[l];
                unsigned k = 0;
                while (k < 64 && __atomic_load_n(&lane->slots[heads[l] % RAW_SLOTS].ready,
                                                 __ATOMIC_ACQUIRE) == heads[l] + 1) {
                    bad += lane->slots[heads[l] % RAW_SLOTS].data[0] != got + k;
                    heads[l]++;
                    k++;
                    if (heads[l] % 32 == 0)
                        __atomic_store_n(&lane->head, heads[l], __ATOMIC_RELEASE);
                }
                got += k;
            }
        }
        for (unsigned l = 0; l < lanes; l++)
            __atomic_store_n(&all[l].head, heads[l], __ATOMIC_RELEASE);
        if (bad)
            fprintf(stderr, "onic-bench-xport: raw queue data out of order\n");
    }
    return (double)n * 1e9 / (double)(onic_time_ns() - t0);
}

/* GB/s of len bytes moved n times from rank 1's memory into rank 0's by two
 * copies at once through RAW_CHUNKS shared chunks: the floor of the copy
 * mechanism. The copies are onic_copy's, as the mechanism's: a plain
 * memcpy out of a page-aligned chunk into malloc'd memory takes glibc's
 * slow path on some CPUs (base/copy.h) and made this floor 20x too low. */
static double raw_copy_bw(void *arg, uint64_t n, size_t len)
{
    bench_t *b = arg;
    raw_shared_t *r = b->raw;
    uint64_t t0 = onic_time_ns();
    uint64_t per = (len + RAW_CHUNK - 1) / RAW_CHUNK;

    if (b->rank == 1) {
        uint64_t p = r->chunk_prod;
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t c = 0; c < per; c++, p++) {
                size_t off = c * RAW_CHUNK, l = len - off < RAW_CHUNK ? len - off : RAW_CHUNK;
                while (p - __atomic_load_n(&r->chunk_cons, __ATOMIC_ACQUIRE) >= RAW_CHUNKS)
                    ;
                onic_copy(r->chunks[p % RAW_CHUNKS], b->src + off, l);
                __atomic_store_n(&r->chunk_prod, p + 1, __ATOMIC_RELEASE);
            }
        return 0;
    }
    uint64_t q = r->chunk_cons;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t c = 0; c < per; c++, q++) {
            size_t off = c * RAW_CHUNK, l = len - off < RAW_CHUNK ? len - off : RAW_CHUNK;
            while (__atomic_load_n(&r->chunk_prod, __ATOMIC_ACQUIRE) == q)
                ;
            onic_copy(b->dst + off, r->chunks[q % RAW_CHUNKS], l);
            __atomic_store_n(&r->chunk_cons, q + 1, __ATOMIC_RELEASE);
        }
    return (double)n * (double)len / (double)(onic_time_ns() - t0);
}

static void recv_until(bench_t *b, uint64_t count)
{
    while (b->received < count)
        onic_xport_poll(b->x);
}

/* One-way ns of an onic message of len bytes bounced n times. */
static double shm_pingpong(bench_t *b, uint64_t n, size_t len)
{
    static uint8_t payload[1024];
    uint64_t t0 = onic_time_ns(), base = b->received;

    for (uint64_t i = 1; i <= n; i++) {
        if (b->rank == 0) {
            onic_xport_send(b->x, 1, NULL, 0, payload, len);
            recv_until(b, base + i);
        } else {
            recv_until(b, base + i);
            onic_xport_send(b->x, 0, NULL, 0, payload, len);
        }
    }
    return (double)(onic_time_ns() - t0) / (2.0 * (double)n);
}

/* Messages per second: windows of 64 8-byte messages, one reply each. */
static double shm_rate(bench_t *b, uint64_t windows)
{
    uint64_t word = 42, t0 = onic_time_ns(), base = b->received;

    for (uint64_t w = 1; w <= windows; w++) {
        if (b->rank == 0) {
            for (int i = 0; i < 64; i++)
                onic_xport_send(b->x, 1, NULL, 0, &word, sizeof(word));
            recv_until(b, base + w);
        } else {
            recv_until(b, base + 64 * w);
            onic_xport_send(b->x, 0, NULL, 0, NULL, 0);
        }
    }
    return (double)windows * 64 * 1e9 / (double)(onic_time_ns() - t0);
}

static void on_rma(void *arg, void *ctx, onic_status_t status)
{
    (void)ctx;
    if (status != ONIC_OK)
        fprintf(stderr, "onic-bench-xport: RMA failed: %s\n", onic_status_str(status));
    ((bench_t *)arg)->completed++;
}

/* GB/s of reads of len bytes from rank 1's source, n times, one at a time
 * (rank 1 polls meanwhile, which the copy mechanism needs). */
static double rma_read_bw(void *arg, uint64_t n, size_t len)
{
    bench_t *b = arg;
    uint64_t t0 = onic_time_ns();

    if (b->rank == 1) {
        while (!__atomic_load_n(&b->raw->pair.stop, __ATOMIC_ACQUIRE))
            onic_xport_poll(b->x);
        return 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t want = b->completed + 1;
        onic_xport_rma_read(b->x, 1, b->dst, &b->raw->key, 0, len, NULL);
        while (b->completed < want)
            onic_xport_poll(b->x);
    }
    t0 = onic_time_ns() - t0;
    __atomic_store_n(&b->raw->pair.stop, 1, __ATOMIC_RELEASE);
    return (double)n * (double)len / (double)t0;
}

/* GB/s of memcpy of len bytes in rank 0, n times: what RMA is held to. */
static double memcpy_bw(void *arg, uint64_t n, size_t len)
{
    bench_t *b = arg;
    uint64_t t0 = onic_time_ns();

    if (b->rank == 1)
        return 0;
    for (uint64_t i = 0; i < n; i++) {
        memcpy(b->dst, b->src + (i & 1) * 64, len);
        __asm__ volatile("" ::: "memory"); /* each copy happens */
    }
    return (double)n * (double)len / (double)(onic_time_ns() - t0);
}

static double fn_raw_pingpong(void *arg, uint64_t n, size_t len) { (void)len; return raw_pingpong(arg, n); }
static double fn_raw_ring(void *arg, uint64_t n, size_t len) { (void)len; return raw_ring(arg, n); }
static double fn_shm_pingpong(void *arg, uint64_t n, size_t len) { return shm_pingpong(arg, n, len); }
static double fn_shm_rate(void *arg, uint64_t n, size_t len) { (void)len; return shm_rate(arg, n); }
static double fn_raw_lanes(void *arg, uint64_t n, size_t len) { return raw_queue(arg, n, (unsigned)len, 0); }
static double fn_raw_mpsc(void *arg, uint64_t n, size_t len) { (void)len; return raw_queue(arg, n, 1, 1); }

static double median(bench_t *b, uint64_t *round, bench_fn_t fn, uint64_t n, size_t len)
{
    return bench_median(&b->raw->pair, round, b->reps, fn, b, n, len);
}

/* The results as CSV (--csv, --csv-file), one line a measure. */
static void print_csv(FILE *f, double raw_pp, double raw_rg, double lat8, double lat1k, double rate,
                      double lane1, double lane64, double mpsc, const size_t *bw_sizes, int nbw,
                      const double *bw_memcpy, const double *bw_raw, const double *bw_cma,
                      const double *bw_copy)
{
    fprintf(f, "measure,value,unit,ratio_to_raw\n");
    fprintf(f, "raw_pingpong_oneway,%.1f,ns,1.00\n", raw_pp);
    fprintf(f, "raw_ring_16B,%.0f,items/s,1.00\n", raw_rg);
    fprintf(f, "shm_latency_8B,%.1f,ns,%.2f\n", lat8, lat8 / raw_pp);
    fprintf(f, "shm_latency_1KB,%.1f,ns,%.2f\n", lat1k, lat1k / raw_pp);
    fprintf(f, "shm_rate_8B_64_in_flight,%.0f,msgs/s,%.2f\n", rate, rate / raw_rg);
    fprintf(f, "raw_lane_of_1_64B_slots,%.0f,msgs/s,1.00\n", lane1);
    fprintf(f, "raw_lane_of_64_64B_slots,%.0f,msgs/s,%.2f\n", lane64, lane64 / lane1);
    fprintf(f, "raw_mpsc_ring_64B_slots,%.0f,msgs/s,%.2f\n", mpsc, mpsc / lane1);
    for (int k = 0; k < nbw; k++) {
        fprintf(f, "memcpy_%zuB,%.2f,GB/s,1.00\n", bw_sizes[k], bw_memcpy[k]);
        fprintf(f, "raw_pipelined_copy_%zuB,%.2f,GB/s,%.2f\n", bw_sizes[k], bw_raw[k],
                bw_raw[k] / bw_memcpy[k]);
        for (int m = 0; m < 2; m++) {
            const double *bw = m == 0 ? bw_cma : bw_copy;
            fprintf(f, "rma_read_%s_%zuB,%.2f,GB/s,%.2f\n", m == 0 ? "cma" : "copy",
                    bw_sizes[k], bw[k], bw[k] / bw_memcpy[k]);
        }
    }
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    bench_t b = {0};
    bench_opts_t opt;
    uint64_t round = 0, scale;

    if (bench_opts_parse(argc, argv, &opt) != 0)
        return 2;
    b.quick = opt.quick;
    b.csv = opt.csv;
    b.csv_file = opt.csv_file;
    b.reps = opt.reps;
    if (onic_config_read(&cfg) != ONIC_OK || cfg.size != 2 || cfg.jobid[0] == '\0') {
        fprintf(stderr, "onic-bench-xport: run it as two processes: "
                        "onicrun -n 2 --bind core %s\n", argv[0]);
        return 2;
    }
    b.rank = cfg.rank;
    scale = b.quick ? 1 : 10;

    /* The raw floor's memory, shared without a name (pair.h). */
    b.raw = bench_shared_map(&cfg, "raw", sizeof(raw_shared_t));
    p.rank = cfg.rank;
    p.size = cfg.size;
    p.jobid = cfg.jobid;
    p.recv_cb = on_message;
    p.rma_cb = on_rma;
    p.cb_arg = &b;
    p.cfg = &cfg;
    if (b.raw == NULL || onic_xport_open(&p, &b.x) != ONIC_OK) {
        fprintf(stderr, "onic-bench-xport: cannot set up rank %u\n", b.rank);
        return 1;
    }

    double raw_pp = median(&b, &round, fn_raw_pingpong, 20000 * scale, 0);
    double raw_rg = median(&b, &round, fn_raw_ring, 200000 * scale, 0);
    double lat8 = median(&b, &round, fn_shm_pingpong, 10000 * scale, 8);
    double lat1k = median(&b, &round, fn_shm_pingpong, 10000 * scale, 1024);
    double rate = median(&b, &round, fn_shm_rate, 2000 * scale, 0);
    double lane1 = median(&b, &round, fn_raw_lanes, 200000 * scale, 1);
    double lane64 = median(&b, &round, fn_raw_lanes, 200000 * scale, RAW_LANES);
    double mpsc = median(&b, &round, fn_raw_mpsc, 200000 * scale, 0);

    /* RMA: reopen the endpoint with each mechanism forced. */
    static const size_t bw_sizes[] = {4096, 65536, 1u << 20, 4u << 20, 16u << 20, RMA_MAX};
    enum { NBW = sizeof(bw_sizes) / sizeof(bw_sizes[0]) };
    static const unsigned bw_modes[] = {ONIC_SHM_RMA_CMA, ONIC_SHM_RMA_COPY};
    double bw_memcpy[NBW], bw_rma[2][NBW];
    int bw_cma_ok = 1;
    b.src = malloc(RMA_MAX + 128);
    b.dst = malloc(RMA_MAX + 128);
    if (b.src == NULL || b.dst == NULL) {
        fprintf(stderr, "onic-bench-xport: cannot allocate RMA buffers\n");
        return 1;
    }
    memset(b.src, 1, RMA_MAX + 128); /* fault every page in before timing */
    memset(b.dst, 2, RMA_MAX + 128);
    double bw_raw[NBW];
    for (int k = 0; k < NBW; k++) {
        uint64_t n = (b.quick ? 64ull << 20 : 512ull << 20) / bw_sizes[k] + 2;
        bw_memcpy[k] = median(&b, &round, memcpy_bw, n, bw_sizes[k]);
        bw_raw[k] = median(&b, &round, raw_copy_bw, n, bw_sizes[k]);
    }
    for (int m = 0; m < 2; m++) {
        onic_xport_mkey_t key;
        raw_barrier(&b, ++round);
        onic_xport_close(b.x);
        raw_barrier(&b, ++round); /* both closed before either reopens */
        cfg.shm_rma = bw_modes[m];
        if (onic_xport_open(&p, &b.x) != ONIC_OK)
            return 1;
        if (b.rank == 1) {
            if (onic_xport_mem_reg(b.x, b.src, RMA_MAX, &key) != ONIC_OK)
                return 1;
            b.raw->key = key;
        }
        if (bw_modes[m] == ONIC_SHM_RMA_CMA && !(onic_xport_caps(b.x, 1 - b.rank) & ONIC_XPORT_CAP_CMA))
            bw_cma_ok = 0;
        raw_barrier(&b, ++round); /* the key is out */
        for (int k = 0; k < NBW; k++)
            bw_rma[m][k] = median(&b, &round, rma_read_bw,
                                        (b.quick ? 64ull << 20 : 512ull << 20) / bw_sizes[k] + 2,
                                        bw_sizes[k]);
    }
    raw_barrier(&b, ++round);

    if (b.rank == 0) {
        FILE *cf = b.csv_file != NULL ? fopen(b.csv_file, "w") : NULL;
        if (b.csv_file != NULL && cf == NULL) {
            fprintf(stderr, "onic-bench-xport: cannot write %s\n", b.csv_file);
            return 1;
        }
        if (cf != NULL) {
            print_csv(cf, raw_pp, raw_rg, lat8, lat1k, rate, lane1, lane64, mpsc, bw_sizes, NBW,
                      bw_memcpy, bw_raw, bw_rma[0], bw_rma[1]);
            fclose(cf);
        }
        if (b.csv) {
            print_csv(stdout, raw_pp, raw_rg, lat8, lat1k, rate, lane1, lane64, mpsc, bw_sizes, NBW,
                      bw_memcpy, bw_raw, bw_rma[0], bw_rma[1]);
        } else {
            printf("onic-bench-xport: median of %u repetitions, 2 processes (ONIC_SHM_RING_SLOTS=%u)\n",
                   b.reps, onic_config_shm_ring_slots(&cfg, 2));
            printf("  raw cache-line ping-pong     %8.1f ns one-way\n", raw_pp);
            printf("  raw ring, 16-byte items      %8.1f M items/s\n", raw_rg / 1e6);
            printf("  shm latency, 8 B             %8.1f ns one-way   %.2fx the raw ping-pong\n",
                   lat8, lat8 / raw_pp);
            printf("  shm latency, 1 KB            %8.1f ns one-way   %.2fx the raw ping-pong\n",
                   lat1k, lat1k / raw_pp);
            printf("  shm rate, 8 B, 64 in flight  %8.1f M msgs/s     %.0f%% of the raw ring\n",
                   rate / 1e6, 100.0 * rate / raw_rg);
            printf("  receive-queue designs, raw, 64-byte slots, one sender:\n");
            printf("    a lane per sender, 1 lane  %8.1f M msgs/s\n", lane1 / 1e6);
            printf("    ... receiver visits 64     %8.1f M msgs/s     %.2fx\n", lane64 / 1e6,
                   lane64 / lane1);
            printf("    one shared (MPSC) ring     %8.1f M msgs/s     %.2fx\n", mpsc / 1e6,
                   mpsc / lane1);
            printf("  RMA read bandwidth, GB/s (and share of memcpy)%s:\n",
                   bw_cma_ok ? "" : " [cma refused by the kernel: both rows copy]");
            printf("  %10s %8s %16s %16s %16s\n", "bytes", "memcpy", "raw 2-copy", "cma", "copy");
            for (int k = 0; k < NBW; k++)
                printf("  %10zu %8.2f %9.2f (%3.0f%%) %9.2f (%3.0f%%) %9.2f (%3.0f%%)\n",
                       bw_sizes[k], bw_memcpy[k], bw_raw[k], 100.0 * bw_raw[k] / bw_memcpy[k],
                       bw_rma[0][k], 100.0 * bw_rma[0][k] / bw_memcpy[k],
                       bw_rma[1][k], 100.0 * bw_rma[1][k] / bw_memcpy[k]);
        }
    }
    onic_xport_close(b.x);
    munmap(b.raw, sizeof(raw_shared_t));
    free(b.src);
    free(b.dst);
    return 0;
}
