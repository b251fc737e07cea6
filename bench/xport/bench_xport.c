/* onic-bench-xport: onic's shared-memory transport against the raw floor of
 * this machine, measured in one run between two processes:
 *
 *   raw ping-pong  one cache line bounced between the two cores (one-way ns)
 *   raw ring       a plain single-producer ring of 16-byte items (items/s)
 *   shm latency    onic_xport_send + poll ping-pong, 8 B and 1 KB (one-way ns)
 *   shm rate       8-byte messages, 64 in flight, one reply per window (msgs/s)
 *
 * Run it as two processes bound to two cores:
 *     onicrun -n 2 --bind core build/onic-bench-xport [--quick] [--csv] [--reps N]
 * Rank 0 prints the median of the repetitions and each figure's ratio to
 * its raw floor. (RMA bandwidth comes with RMA.) */
#include "base/clock.h"
#include "base/config.h"
#include "xport/xport.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RAW_RING_ITEMS 1024

/* The raw floor's shared memory: flags and ring on their own lines. */
typedef struct raw_shared {
    _Alignas(64) uint64_t ping;
    _Alignas(64) uint64_t pong;
    _Alignas(64) uint64_t head;   /* consumer's count */
    _Alignas(64) uint64_t tail;   /* producer's count */
    _Alignas(64) uint64_t go;     /* a two-process barrier */
    _Alignas(64) uint64_t items[RAW_RING_ITEMS][2];
} raw_shared_t;

typedef struct bench {
    uint32_t       rank;
    raw_shared_t  *raw;
    onic_xport_t  *x;
    uint64_t       received;
    int            quick, csv;
    unsigned       reps;
} bench_t;

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    (void)src, (void)user_hdr, (void)user_len, (void)payload, (void)len;
    ((bench_t *)arg)->received++;
}

static void raw_barrier(bench_t *b, uint64_t round)
{
    __atomic_fetch_add(&b->raw->go, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&b->raw->go, __ATOMIC_ACQUIRE) < 2 * round)
        ;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef double (*bench_fn_t)(bench_t *b, uint64_t n, size_t len);

static double fn_raw_pingpong(bench_t *b, uint64_t n, size_t len) { (void)len; return raw_pingpong(b, n); }
static double fn_raw_ring(bench_t *b, uint64_t n, size_t len) { (void)len; return raw_ring(b, n); }
static double fn_shm_pingpong(bench_t *b, uint64_t n, size_t len) { return shm_pingpong(b, n, len); }
static double fn_shm_rate(bench_t *b, uint64_t n, size_t len) { (void)len; return shm_rate(b, n); }

/* Median of b->reps repetitions, each after a barrier. */
static double bench_median(bench_t *b, uint64_t *round, bench_fn_t fn, uint64_t n, size_t len)
{
    double v[64];
    unsigned reps = b->reps < 64 ? b->reps : 64;

    raw_barrier(b, ++*round);
    fn(b, n / 4 + 1, len); /* warm-up */
    for (unsigned r = 0; r < reps; r++) {
        raw_barrier(b, ++*round);
        v[r] = fn(b, n, len);
    }
    qsort(v, reps, sizeof(v[0]), cmp_double);
    return v[reps / 2];
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_xport_params_t p;
    bench_t b = {0};
    char name[80];
    uint64_t round = 0, scale;
    int fd;

    b.reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            b.quick = 1, b.reps = 3;
        else if (strcmp(argv[i], "--csv") == 0)
            b.csv = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            b.reps = (unsigned)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: onicrun -n 2 --bind core %s [--quick] [--csv] [--reps N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (onic_config_read(&cfg) != ONIC_OK || cfg.size != 2 || cfg.jobid[0] == '\0') {
        fprintf(stderr, "onic-bench-xport: run it as two processes: "
                        "onicrun -n 2 --bind core %s\n", argv[0]);
        return 2;
    }
    b.rank = cfg.rank;
    scale = b.quick ? 1 : 10;

    /* The raw floor's memory, named like every object of the job. */
    snprintf(name, sizeof(name), "/onic-%s-bench-raw", cfg.jobid);
    fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(raw_shared_t)) != 0) {
        fprintf(stderr, "onic-bench-xport: cannot create %s: %m\n", name);
        return 1;
    }
    b.raw = mmap(NULL, sizeof(raw_shared_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    p.rank = cfg.rank;
    p.size = cfg.size;
    p.jobid = cfg.jobid;
    p.recv_cb = on_message;
    p.cb_arg = &b;
    p.cfg = &cfg;
    if (b.raw == MAP_FAILED || onic_xport_open(&p, &b.x) != ONIC_OK) {
        fprintf(stderr, "onic-bench-xport: cannot set up rank %u\n", b.rank);
        return 1;
    }

    double raw_pp = bench_median(&b, &round, fn_raw_pingpong, 20000 * scale, 0);
    double raw_rg = bench_median(&b, &round, fn_raw_ring, 200000 * scale, 0);
    double lat8 = bench_median(&b, &round, fn_shm_pingpong, 10000 * scale, 8);
    double lat1k = bench_median(&b, &round, fn_shm_pingpong, 10000 * scale, 1024);
    double rate = bench_median(&b, &round, fn_shm_rate, 2000 * scale, 0);
    raw_barrier(&b, ++round);

    if (b.rank == 0) {
        if (b.csv) {
            printf("measure,value,unit,ratio_to_raw\n");
            printf("raw_pingpong_oneway,%.1f,ns,1.00\n", raw_pp);
            printf("raw_ring_16B,%.0f,items/s,1.00\n", raw_rg);
            printf("shm_latency_8B,%.1f,ns,%.2f\n", lat8, lat8 / raw_pp);
            printf("shm_latency_1KB,%.1f,ns,%.2f\n", lat1k, lat1k / raw_pp);
            printf("shm_rate_8B_64_in_flight,%.0f,msgs/s,%.2f\n", rate, rate / raw_rg);
        } else {
            printf("onic-bench-xport: median of %u repetitions, 2 processes (ONIC_SHM_RING_SLOTS=%u)\n",
                   b.reps, cfg.shm_ring_slots);
            printf("  raw cache-line ping-pong     %8.1f ns one-way\n", raw_pp);
            printf("  raw ring, 16-byte items      %8.1f M items/s\n", raw_rg / 1e6);
            printf("  shm latency, 8 B             %8.1f ns one-way   %.2fx the raw ping-pong\n",
                   lat8, lat8 / raw_pp);
            printf("  shm latency, 1 KB            %8.1f ns one-way   %.2fx the raw ping-pong\n",
                   lat1k, lat1k / raw_pp);
            printf("  shm rate, 8 B, 64 in flight  %8.1f M msgs/s     %.0f%% of the raw ring\n",
                   rate / 1e6, 100.0 * rate / raw_rg);
        }
    }
    onic_xport_close(b.x);
    munmap(b.raw, sizeof(raw_shared_t));
    if (b.rank == 0)
        shm_unlink(name);
    return 0;
}
