/* onic-bench-replay: what tracing costs a queue operation, in-process, and
 * how fast onic-replay's parts replay a trace of a million operations.
 *
 *   onic-bench-replay [--ops N] [--runs R] [--depth D] [--engine E] [--dir D]
 *
 * The traces go to a new directory in --dir (default /tmp).
 * 1. Tracing cost: R runs, each timing the same stream of appends and
 *    matches (a queue held near depth D, the posted-receive pattern of a
 *    message-rate test) on an untraced and a traced matcher, in alternating
 *    order; the medians and their ratio, in wall time and in the thread's
 *    CPU time (on a loaded machine the first also counts waiting for a
 *    core or for the file system).
 * 2. Replay speed: one traced stream of N operations (appends, matches,
 *    peeks, finds with refusals, removes; depth around D) written, read
 *    back, and replayed through the models alone and through the models
 *    and the four engines; records per second of each step (median of R).
 * The machine is shared: quote ratios and medians, not single runs. */
#include "match/engine.h"
#include "match/trace.h"
#include "replay/replay.h"
#include "base/clock.h"
#include "base/rand.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[200];

static void clean(void)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[600];

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
}

static int trace_path(char *path, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;

    while (d != NULL && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".trace") != NULL) {
            snprintf(path, len, "%s/%s", dir, de->d_name);
            found = 1;
        }
    if (d != NULL)
        closedir(d);
    return found;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per operation of `ops` appends and matches at depth `depth`, wall
 * and (in *cpu_p) CPU time. The matcher's destroy, which writes the last
 * buffer, is inside the timing. */
static double stream(const char *engine, int traced, long ops, unsigned depth, double *cpu_p)
{
    uint64_t c0;
    onic_config_t cfg;
    onic_matcher_t *m;
    onic_mkey_t none = {0, 0};
    uint64_t t0;
    long i;

    onic_config_defaults(&cfg);
    if (traced)
        snprintf(cfg.trace, sizeof(cfg.trace), "%.200s", dir);
    if (onic_matcher_create_cfg(engine, &cfg, &m) != ONIC_OK)
        exit(1);
    for (unsigned k = 0; k < depth; k++) {
        onic_mkey_t key = {k, 1};
        onic_matcher_append(m, key, none, m, NULL);
    }
    c0 = cpu_ns();
    t0 = onic_time_ns();
    for (i = 0; i < ops / 2; i++) {
        onic_mkey_t key = {depth + (uint64_t)i, 1}, q = {(uint64_t)i, 1};
        onic_matcher_append(m, key, none, m, NULL);
        if (onic_matcher_match(m, q, none) == NULL)
            exit(2);
    }
    onic_matcher_destroy(m);
    t0 = onic_time_ns() - t0;
    *cpu_p = (double)(cpu_ns() - c0) / (double)(2 * i);
    clean();
    return (double)t0 / (double)(2 * i);
}

static int accept_odd(void *arg, void *cookie)
{
    (void)arg;
    return ((uintptr_t)cookie & 1) != 0;
}

/* A traced mixed stream of `ops` operations near `depth`. */
static void generate(long ops, unsigned depth)
{
    onic_config_t cfg;
    onic_matcher_t *m;
    onic_mentry_t **live = calloc(4 * depth + 16, sizeof(*live));
    size_t n = 0, cap = 4 * depth + 16;
    onic_rand_t r;

    onic_config_defaults(&cfg);
    snprintf(cfg.trace, sizeof(cfg.trace), "%.200s", dir);
    onic_rand_seed(&r, 7);
    if (live == NULL || onic_matcher_create_cfg("list", &cfg, &m) != ONIC_OK)
        exit(1);
    onic_matcher_label(m, ONIC_MATCH_QUEUE_POSTED, 0);
    for (long i = 0; i < ops; i++) {
        unsigned what = onic_rand_below(&r, 100);
        onic_mkey_t key = {onic_rand_below(&r, 2 * depth + 1), onic_rand_below(&r, 4)};
        onic_mkey_t ign = {0, what % 10 == 0 ? UINT64_MAX : 0};
        if ((n < depth && what < 60) || n == 0) {
            if (n < cap &&
                onic_matcher_append(m, key, ign, (void *)(uintptr_t)(i + 1), &live[n]) == ONIC_OK)
                n++;
        } else if (what < 90) {
            int accept = what >= 80;
            void *c = onic_matcher_find(m, key, ign, accept ? accept_odd : NULL, NULL,
                                        what < 85);
            if (c != NULL && what < 85)
                for (size_t k = 0; k < n; k++)
                    if (live[k]->seq == ONIC_MENTRY_FREE) {
                        live[k] = live[--n];
                        break;
                    }
        } else {
            size_t k = onic_rand_below(&r, (unsigned)n);
            onic_matcher_remove(m, live[k]);
            live[k] = live[--n];
        }
    }
    onic_matcher_destroy(m);
    free(live);
}

int main(int argc, char **argv)
{
    long ops = 1000000;
    int runs = 5;
    unsigned depth = 32;
    const char *engine = "hash";
    char path[1000], err[256];
    double off[64], on[64], offc[64], onc[64], rd[64], mo[64], en[64];
    const char *where = "/tmp";
    size_t nrecs = 0;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ops") == 0)
            ops = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--depth") == 0)
            depth = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--engine") == 0)
            engine = argv[i + 1];
        else if (strcmp(argv[i], "--dir") == 0)
            where = argv[i + 1];
    }
    if (argc % 2 == 0 || ops < 2 || runs < 1 || runs > 64 || depth < 1) {
        fprintf(stderr, "usage: %s [--ops N] [--runs 1-64] [--depth D] [--engine E]\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof(dir), "%.150s/onic-bench-replay-XXXXXX", where);
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    for (int r = 0; r < runs; r++) {
        if (r % 2 == 0) {
            off[r] = stream(engine, 0, ops, depth, &offc[r]);
            on[r] = stream(engine, 1, ops, depth, &onc[r]);
        } else {
            on[r] = stream(engine, 1, ops, depth, &onc[r]);
            off[r] = stream(engine, 0, ops, depth, &offc[r]);
        }
    }
    printf("tracing cost, %s engine, append + match at depth %u, %ld ops, %d runs, traces "
           "in %s\n", engine, depth, ops, runs, where);
    printf("  wall: off %.1f ns/op, on %.1f ns/op (medians), on/off %.3f\n", median(off, runs),
           median(on, runs), median(on, runs) / median(off, runs));
    printf("  cpu:  off %.1f ns/op, on %.1f ns/op (medians), on/off %.3f\n", median(offc, runs),
           median(onc, runs), median(onc, runs) / median(offc, runs));

    for (int r = 0; r < runs; r++) {
        onic_trace_t t;
        replay_opts_t opts;
        replay_result_t *res;
        uint64_t t0;

        generate(ops, depth);
        if (!trace_path(path, sizeof(path)))
            return 1;
        t0 = onic_time_ns();
        if (onic_trace_read(path, &t, err, sizeof(err)) != ONIC_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        rd[r] = (double)t.nrecs / ((onic_time_ns() - t0) / 1e9);
        nrecs = t.nrecs;
        memset(&opts, 0, sizeof(opts));
        replay_params_defaults(&opts.params);
        opts.keep_samples = 1;
        for (int measure = 0; measure < 2; measure++) {
            opts.measure = measure;
            res = replay_result_new();
            t0 = onic_time_ns();
            if (replay_trace(&t, &opts, res, NULL) != 0) {
                fprintf(stderr, "replay failed: %s\n", res->error);
                return 1;
            }
            (measure ? en : mo)[r] = (double)t.nrecs / ((onic_time_ns() - t0) / 1e9);
            replay_result_free(res);
        }
        onic_trace_free(&t);
        clean();
    }
    rmdir(dir);
    printf("replay of a %zu-record trace (depth ~%u), records/s, median of %d\n", nrecs, depth,
           runs);
    printf("  read %.3g, models %.3g, models + 4 engines timed %.3g\n", median(rd, runs),
           median(mo, runs), median(en, runs));
    return 0;
}
