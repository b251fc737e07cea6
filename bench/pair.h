/* What the two-process benchmarks (onic-bench-xport, onic-bench-ptl) share:
 * their options, a barrier through a nameless shared page, and the median
 * of repeated runs. Header-only: each benchmark is one small program. */
#ifndef ONIC_BENCH_PAIR_H
#define ONIC_BENCH_PAIR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/config.h"
#include "boot/boot.h"
#include "fdpass.h"

/* In shared memory, each word on its own line. */
typedef struct bench_pair {
    _Alignas(64) uint64_t go;    /* barrier arrivals, ever */
    _Alignas(64) uint64_t stop;  /* rank 0 is done with what rank 1 serves */
} bench_pair_t;

typedef struct bench_opts {
    int         quick, csv;
    unsigned    reps;
    const char *csv_file; /* also the CSV, here (make demo hands it to bench/suite.py) */
} bench_opts_t;

/* --quick, --csv, --reps N, --csv-file FILE. 0, or 2 after printing the usage. */
static inline int bench_opts_parse(int argc, char **argv, bench_opts_t *o)
{
    o->quick = o->csv = 0;
    o->reps = 5;
    o->csv_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            o->quick = 1, o->reps = 3;
        else if (strcmp(argv[i], "--csv") == 0)
            o->csv = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            o->reps = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv-file") == 0 && i + 1 < argc)
            o->csv_file = argv[++i];
        else {
            fprintf(stderr, "usage: onicrun -n 2 --bind core %s [--quick] [--csv] [--reps N]"
                            " [--csv-file FILE]\n", argv[0]);
            return 2;
        }
    }
    return 0;
}

/* Map size bytes of nameless shared memory in both processes (rank 0
 * makes it, bench/fdpass.h), the token and pids traded through the
 * launcher's store under "bench-<what>". NULL after a message. */
static inline void *bench_shared_map(const onic_config_t *cfg, const char *what, size_t size)
{
    struct { uint64_t pid; char token[BENCH_TOKEN_LEN + 1]; } me = {0}, peer = {0};
    size_t len = sizeof(peer);
    char key[64];
    onic_boot_t *b;
    void *mem = MAP_FAILED;
    int fd = -1, lsock = -1;

    if (onic_boot_open(cfg, &b) != ONIC_OK) {
        fprintf(stderr, "onic-bench: no launcher to share scratch memory through\n");
        return NULL;
    }
    snprintf(key, sizeof(key), "bench-%s", what);
    me.pid = (uint64_t)getpid();
    if (cfg->rank == 0 && ((fd = bench_fdpass_create(what, size)) < 0 ||
                           (lsock = bench_fdpass_listen(me.token)) < 0))
        goto out;
    if (onic_boot_put(b, key, &me, sizeof(me)) != ONIC_OK || onic_boot_fence(b) != ONIC_OK ||
        onic_boot_get(b, 1 - cfg->rank, key, &peer, &len) != ONIC_OK || len != sizeof(peer) ||
        peer.token[BENCH_TOKEN_LEN] != '\0') {
        fprintf(stderr, "onic-bench: cannot trade the scratch memory's token\n");
        goto out;
    }
    if (cfg->rank == 0) {
        int rc = bench_fdpass_give(lsock, (pid_t)peer.pid, fd);
        lsock = -1;
        if (rc != 0)
            goto out;
    } else if ((fd = bench_fdpass_take(peer.token, (pid_t)peer.pid, size)) < 0) {
        goto out;
    }
    mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
out:
    if (lsock >= 0)
        close(lsock);
    if (fd >= 0)
        close(fd);
    onic_boot_close(b);
    return mem == MAP_FAILED ? NULL : mem;
}

/* Both processes pass round r (1, 2, ...) together. */
static inline void bench_barrier(bench_pair_t *p, uint64_t round)
{
    __atomic_fetch_add(&p->go, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&p->go, __ATOMIC_ACQUIRE) < 2 * round)
        ;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef double (*bench_fn_t)(void *arg, uint64_t n, size_t len);

/* The median of reps runs of fn (at most 64), after a warm-up of n / 4 + 1.
 * Before each, both clear `stop` between two barriers: then neither can see
 * the other's clear after the run has begun. */
static inline double bench_median(bench_pair_t *p, uint64_t *round, unsigned reps, bench_fn_t fn,
                                  void *arg, uint64_t n, size_t len)
{
    double v[64];

    reps = reps < 64 ? reps : 64;
    for (unsigned r = 0; r <= reps; r++) {
        bench_barrier(p, ++*round);
        __atomic_store_n(&p->stop, 0, __ATOMIC_RELAXED);
        bench_barrier(p, ++*round);
        if (r == 0)
            fn(arg, n / 4 + 1, len);
        else
            v[r - 1] = fn(arg, n, len);
    }
    qsort(v, reps, sizeof(v[0]), bench_cmp_double);
    return v[reps / 2];
}

#endif
