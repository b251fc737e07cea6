/* Match traces and their replay: random operations traced and replayed
 * through the list model give exactly the live run's entries-inspected
 * counts (and the real engines find exactly the live run's entries);
 * traces of two ranks replay together; a killed writer's file keeps every
 * chunk it wrote, an exiting one every record; truncated and corrupted
 * traces are reported with their offsets and never crash the reader; the
 * NIC models' costs on small cases computed by hand; the parameter file's
 * errors. */
#include "check.h"
#include "match/engine.h"
#include "match/trace.h"
#include "match/trace_rec.h"
#include "replay/replay.h"
#include "base/clock.h"
#include "base/rand.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/onic-test-trace-XXXXXX";

/* Every *.trace in dir, sorted, removed from the directory as read when
 * consume is set. Returns how many were found (at most max). */
static int trace_files(char paths[][512], int max)
{
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    int n = 0;

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL && n < max) {
        size_t len = strlen(de->d_name);
        if (len > 6 && strcmp(de->d_name + len - 6, ".trace") == 0)
            snprintf(paths[n++], 512, "%s/%s", tmpdir, de->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++)   /* sorted, so ranks come in order */
        for (int j = i + 1; j < n; j++)
            if (strcmp(paths[i], paths[j]) > 0) {
                char t[512];
                memcpy(t, paths[i], 512);
                memcpy(paths[i], paths[j], 512);
                memcpy(paths[j], t, 512);
            }
    return n;
}

static void clean_dir(void)
{
    char paths[16][512];
    int n = trace_files(paths, 16);

    for (int i = 0; i < n; i++)
        unlink(paths[i]);
}

static onic_config_t traced_cfg(unsigned rank)
{
    onic_config_t cfg;

    onic_config_defaults(&cfg);
    snprintf(cfg.trace, sizeof(cfg.trace), "%s", tmpdir);
    cfg.size = 4;
    cfg.rank = rank;
    return cfg;
}

/* --- file names --- */

/* The process's first file is DIR/onic-<job>-r<rank>-p<pid>.trace (trace.h);
 * one opened again after the last queue closed the first is ...-2.trace, so
 * a later run of queues does not write over an earlier one. Run first: the
 * count is the process's. */
static void test_file_names(void)
{
    onic_config_t cfg = traced_cfg(2);
    onic_mkey_t k = {1, 2}, none = {0, 0};
    char paths[4][512], want[512];
    onic_matcher_t *m;

    clean_dir();
    for (int round = 1; round <= 2; round++) {
        REQUIRE(onic_matcher_create_cfg("list", &cfg, &m) == ONIC_OK);
        CHECK(onic_matcher_append(m, k, none, NULL, NULL) == ONIC_OK);
        onic_matcher_destroy(m);
        REQUIRE(trace_files(paths, 4) == 1);
        if (round == 1)
            snprintf(want, sizeof(want), "%s/onic-nojob-r2-p%d.trace", tmpdir, (int)getpid());
        else
            snprintf(want, sizeof(want), "%s/onic-nojob-r2-p%d-2.trace", tmpdir, (int)getpid());
        CHECK(strcmp(paths[0], want) == 0);
        clean_dir();
    }
}

/* --- round trip --- */

#define RT_MAXQ 256

typedef struct rt_entry {
    onic_mentry_t *h[2];   /* in the traced matcher and in the untraced list */
    uintptr_t      id;     /* the cookie: refusals depend on it alone */
} rt_entry_t;

typedef struct rt_accept {
    uint64_t salt;
} rt_accept_t;

/* Refuse about a third of the matching entries and take a sixth as their
 * last use (ONIC_MATCH_TAKE_LAST: removed even by a lookup that keeps what
 * it finds), the same way everywhere. */
static int rt_accept(void *arg, void *cookie)
{
    const rt_accept_t *a = arg;
    uint64_t h = ((uintptr_t)cookie * 0x9e3779b97f4a7c15ull + a->salt) % 6;

    return h % 3 == 0 ? 0 : h == 1 ? ONIC_MATCH_TAKE_LAST : 1;
}

static onic_mkey_t rt_key(onic_rand_t *r, int wild)
{
    onic_mkey_t k = {onic_rand_below(r, 6), onic_rand_below(r, 3)};
    (void)wild;
    return k;
}

static onic_mkey_t rt_ignore(onic_rand_t *r)
{
    onic_mkey_t i = {0, 0};
    unsigned w = (unsigned)onic_rand_below(r, 8);
    if (w == 0)
        i.bits = UINT64_MAX;
    if (w == 1)
        i.id = UINT64_MAX;
    return i;
}

/* What the k-th lookup's record must say: its operation (MATCH when it
 * removes, PEEK when not) and flags (ACCEPT with a callback, HIT when it
 * found an entry). */
typedef struct rt_want {
    uint8_t op, flags;
} rt_want_t;

/* How long rt_run's queue gets: RT_SHORT stays within the hash engine's
 * ring (HASH_SMALL_MAX, 32), RT_LONG grows to RT_MAXQ and stays long (its
 * index). */
enum { RT_MIXED, RT_LONG, RT_SHORT };

/* Runs `ops` random operations on a traced `engine` matcher and an untraced
 * list beside it; live_inspected[k] is the untraced list's count for the
 * k-th lookup, want[k] its record's operation and flags; grow is one of
 * RT_MIXED, RT_LONG, RT_SHORT. Returns the number of lookups. */
static size_t rt_run(const char *engine, uint64_t seed, size_t ops, int grow,
                     uint64_t *live_inspected, uint64_t *traced_inspected, rt_want_t *want)
{
    onic_config_t cfg = traced_cfg(0), plain;
    onic_matcher_t *m[2];
    rt_entry_t q[RT_MAXQ];
    size_t n = 0, lookups = 0;
    uintptr_t next_id = 1;
    size_t longest = 0, empty_lookups = 0, took_last = 0;
    onic_rand_t r;

    onic_config_defaults(&plain);
    onic_rand_seed(&r, seed);
    CHECK(onic_matcher_create_cfg(engine, &cfg, &m[0]) == ONIC_OK);
    CHECK(onic_matcher_create_cfg("list", &plain, &m[1]) == ONIC_OK);
    /* Traced or not, the engine is the same; untraced, its table is the
     * engine's own: nothing stands between the front end and the engine. */
    CHECK(strcmp(onic_matcher_engine(m[0]), engine) == 0);
    CHECK(m[1]->ops == &onic_match_list_ops);
    CHECK(m[0]->ops != onic_match_ops_find(engine));
    onic_matcher_label(m[0], ONIC_MATCH_QUEUE_POSTED, 7);
    for (size_t op = 0; op < ops; op++) {
        /* the first three: lookups on the empty queue (a match, a match
         * with refusals, a peek with refusals) */
        unsigned what = op < 3 ? 45u + 15u * (unsigned)op : (unsigned)onic_rand_below(&r, 100);
        onic_mkey_t key = rt_key(&r, 0), ign = rt_ignore(&r);
        if (op >= 3 && n < RT_MAXQ &&
            (what < (grow == RT_LONG ? 60u : grow == RT_SHORT ? 25u : 40u) || n == 0)) {
            /* append, or insert at the head, before or after an entry */
            onic_match_pos_t pos = ONIC_MATCH_TAIL;
            size_t at = n > 0 ? onic_rand_below(&r, n) : 0;
            if (what >= 30)
                pos = n == 0 ? ONIC_MATCH_HEAD : (onic_match_pos_t)(1 + onic_rand_below(&r, 3));
            rt_entry_t e = {{NULL, NULL}, next_id++};
            for (int i = 0; i < 2; i++)
                REQUIRE(onic_matcher_insert(m[i], key, ign, (void *)e.id, pos,
                                            n > 0 ? q[at].h[i] : NULL, &e.h[i]) == ONIC_OK);
            size_t place = pos == ONIC_MATCH_TAIL ? n : pos == ONIC_MATCH_HEAD ? 0 :
                           pos == ONIC_MATCH_BEFORE ? at : at + 1;
            memmove(&q[place + 1], &q[place], (n - place) * sizeof(q[0]));
            q[place] = e;
            n++;
            if (n > longest)
                longest = n;
        } else if (what < 85) {
            /* match, peek, or find with refusals, removing or not */
            int remove = what < 70, accept = what >= 60, removed;
            rt_accept_t a = {seed + op};
            void *c[2];
            empty_lookups += n == 0;
            for (int i = 0; i < 2; i++) {
                onic_match_stats_t before, after;
                onic_matcher_stats(m[i], &before);
                c[i] = onic_matcher_find(m[i], key, ign, accept ? rt_accept : NULL, &a, remove);
                onic_matcher_stats(m[i], &after);
                if (i == 1)
                    live_inspected[lookups] = after.inspected - before.inspected;
                else
                    traced_inspected[lookups] = after.inspected - before.inspected;
            }
            REQUIRE(c[0] == c[1]);
            removed = remove || (accept && c[0] != NULL &&
                                 rt_accept(&a, c[0]) == ONIC_MATCH_TAKE_LAST);
            took_last += !remove && removed;
            want[lookups].op = removed ? ONIC_TRACE_OP_MATCH : ONIC_TRACE_OP_PEEK;
            want[lookups].flags = (uint8_t)((accept ? ONIC_TRACE_ACCEPT : 0) |
                                            (c[0] != NULL ? ONIC_TRACE_HIT : 0));
            lookups++;
            if (removed && c[0] != NULL) {
                for (size_t k = 0; k < n; k++)
                    if (q[k].id == (uintptr_t)c[0]) {
                        memmove(&q[k], &q[k + 1], (n - k - 1) * sizeof(q[0]));
                        n--;
                        break;
                    }
            }
        } else if (n > 0) {
            size_t k = onic_rand_below(&r, n);
            for (int i = 0; i < 2; i++)
                REQUIRE(onic_matcher_remove(m[i], q[k].h[i]) == ONIC_OK);
            memmove(&q[k], &q[k + 1], (n - k - 1) * sizeof(q[0]));
            n--;
        }
    }
    onic_matcher_destroy(m[0]);
    onic_matcher_destroy(m[1]);
    if (grow == RT_LONG)
        CHECK(longest == RT_MAXQ);
    else if (grow == RT_SHORT)
        CHECK(longest <= 32);   /* the hash engine's ring (HASH_SMALL_MAX) */
    else
        CHECK(longest < RT_MAXQ);
    CHECK(empty_lookups >= 3);
    CHECK(took_last > 0);   /* peeks that removed: their records are matches */
    return lookups;
}

static unsigned char *file_load(const char *path, size_t *len_p);
static size_t check_times(const unsigned char *buf, size_t plen, const onic_trace_t *t);

static void test_round_trip(const char *engine, uint64_t seed, size_t ops, int grow)
{
    uint64_t *live = calloc(ops, sizeof(*live)), *traced = calloc(ops, sizeof(*traced));
    rt_want_t *want = calloc(ops, sizeof(*want));
    uint64_t *model;
    unsigned char *buf;
    size_t plen;
    char paths[4][512], err[256];
    onic_trace_t t;
    replay_opts_t opts;
    replay_result_t *res = replay_result_new();
    size_t lookups, k = 0, checked = 0;

    clean_dir();
    lookups = rt_run(engine, seed, ops, grow, live, traced, want);
    CHECK(trace_files(paths, 4) == 1);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged);
    CHECK_EQ(t.hdr.rank, 0);
    CHECK(strcmp(t.hdr.clock, "tsc") == 0 || strcmp(t.hdr.clock, "ns") == 0);
    CHECK(t.hdr.tick_hz > 0);
    for (size_t i = 1; i < t.nrecs; i++)   /* one queue: its records in time order */
        REQUIRE(t.recs[i].time >= t.recs[i - 1].time);
    /* the clock is read every ONIC_TRACE_TIME_BYTES of records (labels
     * always): the others repeat the previous record's time */
    buf = file_load(paths[0], &plen);
    CHECK(buf != NULL);
    if (buf != NULL)
        CHECK(check_times(buf, plen, &t) > 0);
    free(buf);
    CHECK(t.recs[0].op == ONIC_TRACE_OP_LABEL && t.recs[1].op == ONIC_TRACE_OP_LABEL);
    CHECK_EQ(t.recs[1].key.bits, 7);
    CHECK_EQ(t.recs[1].kind, ONIC_MATCH_QUEUE_POSTED);
    model = calloc(t.nrecs, sizeof(*model));
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;   /* every engine must find the live run's entry */
    CHECK(replay_trace(&t, &opts, res, model) == 0);
    if (res->inconsistent)
        fprintf(stderr, "%s\n", res->error);
    CHECK(!res->inconsistent);
    for (size_t i = 0; i < t.nrecs; i++) {
        unsigned op = t.recs[i].op;
        if (op != ONIC_TRACE_OP_MATCH && op != ONIC_TRACE_OP_PEEK) {
            REQUIRE(model[i] == UINT64_MAX);
            continue;
        }
        /* The list model equals what a live list inspected, and the trace
         * carries what the traced engine itself inspected. */
        REQUIRE(k < lookups);
        if (k < lookups) {
            REQUIRE(model[i] == live[k]);
            REQUIRE(t.recs[i].aux == traced[k]);
            REQUIRE(op == want[k].op && t.recs[i].flags == want[k].flags);
            if (strcmp(engine, "list") == 0)
                REQUIRE(t.recs[i].aux == live[k]);
            checked++;
        }
        k++;
    }
    CHECK_EQ(k, lookups);
    CHECK_EQ(checked, lookups);
    CHECK(lookups > ops / 4);
    for (int e = 0; e < REPLAY_ENGINES; e++)
        CHECK_EQ(res->engine[e].lookups, lookups);
    free(model);
    free(live);
    free(traced);
    free(want);
    onic_trace_free(&t);
    replay_result_free(res);
}

/* --- the clock read every ONIC_TRACE_TIME_BYTES of records --- */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The time rule (format version 4 on), walked chunk by chunk from the file's
 * bytes (buf, plen) and its reading t: a record carries a time (bit 7 of
 * its first byte) exactly when it is its chunk's first, a label, or ends
 * (before its time) at least ONIC_TRACE_TIME_BYTES past the end of the
 * last record of its chunk that carries one; a record without one has the
 * time of the record before it. Returns the records seen with a time. */
static size_t check_times(const unsigned char *buf, size_t plen, const onic_trace_t *t)
{
    size_t off = ONIC_TRACE_HDR_SIZE, rec = 0, timed_n = 0;

    while (off + ONIC_TRACE_CHUNK_HDR <= plen && rec < t->nrecs) {
        onic_trace_chunk_t ch;
        size_t time_at, in_chunk;
        uint64_t prev_time = 0;

        memcpy(&ch, buf + off, sizeof(ch));
        REQUIRE(ch.nrecs > 0 && ch.bytes > ONIC_TRACE_CHUNK_HDR);
        if (ch.nrecs == 0 || ch.bytes <= ONIC_TRACE_CHUNK_HDR)
            break;
        time_at = off + ONIC_TRACE_CHUNK_HDR;
        for (in_chunk = 0; in_chunk < ch.nrecs && rec < t->nrecs; in_chunk++, rec++) {
            const onic_trace_rec_t *x = &t->recs[rec];
            size_t start = (size_t)t->offsets[rec];
            size_t end = in_chunk + 1 < ch.nrecs && rec + 1 < t->nrecs ?
                         (size_t)t->offsets[rec + 1] : off + ch.bytes;
            int timed = (buf[start] & ONIC_TRACE_B_TIME) != 0;
            size_t bare = timed ? end - varint_len(x->time - prev_time) : end;

            REQUIRE(start >= off && end <= off + ch.bytes);
            REQUIRE(timed == (x->op == ONIC_TRACE_OP_LABEL || bare >= time_at));
            if (timed) {
                time_at = end + ONIC_TRACE_TIME_BYTES;
                prev_time = x->time;
                timed_n++;
            } else {
                REQUIRE(rec > 0 && x->time == t->recs[rec - 1].time);
            }
        }
        off += ch.bytes;
    }
    REQUIRE(rec == t->nrecs);
    return timed_n;
}

/* Waits until the clock has moved a microsecond, so that two clock reads
 * with a wait between them differ. */
static void clock_step(void)
{
    uint64_t t0 = onic_time_ns();

    while (onic_time_ns() - t0 < 1000)
        ;
}

/* Operations a microsecond apart on a traced list, over several chunks
 * (random keys: records of about a dozen bytes), beside an untraced list.
 * Records carry a time by the rule of check_times (a chunk's first, labels,
 * and then one every ONIC_TRACE_TIME_BYTES of records), each later than the
 * record before: the clock was read again; every other record carries none
 * and repeats the time before; the times never go back, across chunks too;
 * and the replay of the trace finds what the live run found, with the same
 * entries inspected. */
static void test_clock_every(void)
{
    enum { OPS = 12000, DEPTH = 16 };
    onic_config_t cfg = traced_cfg(0), plain;
    onic_matcher_t *m[2];
    onic_mkey_t keys[DEPTH], none = {0, 0};
    uint64_t *live = calloc(OPS, sizeof(*live)), *model;
    size_t n = 0, lookups = 0, k = 0, rec = 0, labels = 0, timed;
    char paths[4][512], err[256];
    unsigned char *buf;
    size_t plen, off;
    onic_trace_t t;
    replay_opts_t opts;
    replay_result_t *res = replay_result_new();
    onic_rand_t r;

    clean_dir();
    onic_config_defaults(&plain);
    onic_rand_seed(&r, 32);
    CHECK(onic_matcher_create_cfg("list", &cfg, &m[0]) == ONIC_OK);
    CHECK(onic_matcher_create_cfg("list", &plain, &m[1]) == ONIC_OK);
    for (size_t op = 0; op < OPS; op++) {
        clock_step();
        if (op % 1000 == 500) {   /* a label in mid-chunk: timed, off the spacing */
            onic_matcher_label(m[0], ONIC_MATCH_QUEUE_POSTED, (uint32_t)op);
            labels++;
            clock_step();
        }
        if (n < DEPTH && (n == 0 || onic_rand_below(&r, 2) == 0)) {
            onic_mkey_t key = {onic_rand_next(&r), onic_rand_next(&r)};
            for (int i = 0; i < 2; i++)
                REQUIRE(onic_matcher_append(m[i], key, none, (void *)(uintptr_t)(op + 1),
                                            NULL) == ONIC_OK);
            keys[n++] = key;
        } else {
            size_t at = onic_rand_below(&r, n);
            onic_mkey_t key = keys[at];
            void *c[2];
            for (int i = 0; i < 2; i++) {
                onic_match_stats_t before, after;
                onic_matcher_stats(m[i], &before);
                c[i] = onic_matcher_match(m[i], key, none);
                onic_matcher_stats(m[i], &after);
                if (i == 1)
                    live[lookups] = after.inspected - before.inspected;
            }
            REQUIRE(c[0] != NULL && c[0] == c[1]);
            lookups++;
            keys[at] = keys[--n];
        }
    }
    onic_matcher_destroy(m[0]);
    onic_matcher_destroy(m[1]);

    CHECK(trace_files(paths, 4) == 1);
    buf = file_load(paths[0], &plen);
    CHECK(buf != NULL);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    if (buf == NULL)
        return;
    CHECK(!t.damaged);
    CHECK_EQ(t.nrecs, 1 + labels + OPS);
    CHECK(t.nchunks >= 2);
    /* The header's tick rate is the clock's, as measured by the writer
     * against CLOCK_MONOTONIC when it wrote (the run took some 15 ms): the
     * TSC's rate measured here over 20 ms, or a nanosecond clock's. */
    if (strcmp(t.hdr.clock, "tsc") == 0) {
        uint64_t ns0 = onic_time_ns(), tk0 = onic_trace_ticks(), ns, tk;
        double hz;
        while (onic_time_ns() - ns0 < 20000000)
            ;
        ns = onic_time_ns() - ns0;
        tk = onic_trace_ticks() - tk0;
        hz = (double)tk * 1e9 / (double)ns;
        CHECK(t.hdr.tick_hz > 0.95 * hz && t.hdr.tick_hz < 1.05 * hz);
    } else {
        CHECK(t.hdr.tick_hz > 950000000u && t.hdr.tick_hz < 1050000000u);
    }
    timed = check_times(buf, plen, &t);
    /* some 12 bytes a record: about one in ten timed, each after a wait */
    CHECK(timed > t.nrecs / 40 && timed < t.nrecs / 4);
    for (rec = 1; rec < t.nrecs; rec++)
        if ((buf[t.offsets[rec]] & ONIC_TRACE_B_TIME) != 0)
            REQUIRE(t.recs[rec].time > t.recs[rec - 1].time);
    /* the chunks tile the file */
    for (off = ONIC_TRACE_HDR_SIZE; off + ONIC_TRACE_CHUNK_HDR <= plen;) {
        onic_trace_chunk_t ch;
        memcpy(&ch, buf + off, sizeof(ch));
        if (ch.bytes == 0)
            break;
        off += ch.bytes;
    }
    CHECK_EQ(off, plen);

    model = calloc(t.nrecs, sizeof(*model));
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;
    CHECK(replay_trace(&t, &opts, res, model) == 0);
    CHECK(!res->inconsistent);
    for (size_t i = 0; i < t.nrecs; i++) {
        if (t.recs[i].op != ONIC_TRACE_OP_MATCH)
            continue;
        REQUIRE(k < lookups && model[i] == live[k] && t.recs[i].aux == live[k]);
        REQUIRE(t.recs[i].flags & ONIC_TRACE_HIT);
        k++;
    }
    CHECK_EQ(k, lookups);
    for (int e = 0; e < REPLAY_ENGINES; e++)
        CHECK_EQ(res->engine[e].lookups, lookups);
    free(model);
    free(live);
    free(buf);
    onic_trace_free(&t);
    replay_result_free(res);
}

/* --- several ranks --- */

static void rank_child(unsigned rank, size_t appends, int kill_self)
{
    onic_config_t cfg = traced_cfg(rank);
    onic_matcher_t *m;
    onic_mkey_t k = {0, rank}, none = {0, 0};

    if (onic_matcher_create_cfg("hash", &cfg, &m) != ONIC_OK)
        _exit(3);
    onic_matcher_label(m, ONIC_MATCH_QUEUE_UNEXPECTED, rank);
    for (size_t i = 0; i < appends; i++) {
        k.bits = i;
        if (onic_matcher_append(m, k, none, NULL, NULL) != ONIC_OK)
            _exit(4);
    }
    for (size_t i = 0; i < appends / 2; i++) {
        k.bits = i;
        if (onic_matcher_match(m, k, none) != NULL) /* cookies are NULL: a hit returns NULL */
            _exit(5);
    }
    if (kill_self == 1)
        raise(SIGKILL);   /* no destroy, no exit handlers: what is on file stays */
    if (kill_self == 2)
        exit(0);          /* no destroy, but exit handlers */
    onic_matcher_destroy(m);
    _exit(0);
}

static int run_child(unsigned rank, size_t appends, int kill_self)
{
    int st;
    pid_t pid = fork();

    if (pid == 0)
        rank_child(rank, appends, kill_self);
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}

static void test_ranks_merge(void)
{
    char paths[4][512], err[256];
    replay_opts_t opts;
    replay_result_t *res = replay_result_new();
    uint64_t lookups = 0;

    clean_dir();
    CHECK(run_child(0, 300, 0) == 0);
    CHECK(run_child(1, 500, 0) == 0);
    CHECK(trace_files(paths, 4) == 2);
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    for (int f = 0; f < 2; f++) {
        onic_trace_t t;
        CHECK(onic_trace_read(paths[f], &t, err, sizeof(err)) == ONIC_OK);
        CHECK(!t.damaged);
        CHECK(t.hdr.rank == 0 || t.hdr.rank == 1);
        CHECK(strcmp(t.hdr.engine, "hash") == 0);
        /* two labels, the appends, the matches */
        CHECK_EQ(t.nrecs, 2 + (t.hdr.rank == 0 ? 450 : 750));
        CHECK(replay_trace(&t, &opts, res, NULL) == 0);
        lookups += t.hdr.rank == 0 ? 150 : 250;
        onic_trace_free(&t);
    }
    CHECK_EQ(res->files, 2);
    CHECK_EQ(res->queues, 2);
    CHECK_EQ(res->model[REPLAY_MODEL_LIST].lookups, lookups);
    CHECK_EQ(res->model[REPLAY_MODEL_LIST].hits, lookups);
    /* Each match finds the oldest entry: one entry inspected each. */
    CHECK_EQ(res->model[REPLAY_MODEL_LIST].inspected, lookups);
    /* Lookups by depth: rank 0's first at 300, rank 1's first at 500 and
     * its 201st at 300; rank 0's last at 151. */
    CHECK_EQ(res->depth[ONIC_MATCH_QUEUE_UNEXPECTED][300], 2);
    CHECK_EQ(res->depth[ONIC_MATCH_QUEUE_UNEXPECTED][500], 1);
    CHECK_EQ(res->depth[ONIC_MATCH_QUEUE_UNEXPECTED][151], 1);
    CHECK_EQ(res->depth[ONIC_MATCH_QUEUE_UNEXPECTED][150], 0);
    CHECK(!res->inconsistent);
    replay_result_free(res);
}

/* The child's records: two labels, `appends` appends of keys 0.., then
 * matches of keys 0.. (rank_child). */
static void check_child_records(const onic_trace_t *t, size_t appends)
{
    for (size_t i = 0; i < t->nrecs; i++) {
        const onic_trace_rec_t *r = &t->recs[i];
        if (i < 2) {
            REQUIRE(r->op == ONIC_TRACE_OP_LABEL);
        } else if (i < 2 + appends) {
            REQUIRE(r->op == ONIC_TRACE_OP_APPEND && r->key.bits == i - 2 && r->entry != 0);
        } else {
            REQUIRE(r->op == ONIC_TRACE_OP_MATCH && r->key.bits == i - 2 - appends);
            REQUIRE(r->flags == ONIC_TRACE_HIT && r->aux == 1 && r->entry != 0);
        }
        REQUIRE(r->kind == (i == 0 ? ONIC_MATCH_QUEUE_OTHER : ONIC_MATCH_QUEUE_UNEXPECTED));
    }
}

/* A process killed without closing anything leaves a readable file with
 * every chunk it wrote -- each a full buffer, its queue's last partial
 * buffer lost (the buffers are anonymous memory) -- and one that exits
 * without destroying its queues leaves every record. */
static void test_killed_writer(void)
{
    char paths[4][512], err[256];
    const size_t appends = 20000, total = 2 + appends + appends / 2;
    replay_opts_t opts;
    onic_trace_t t;
    int st;

    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;
    clean_dir();
    st = run_child(2, appends, 1);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CHECK(trace_files(paths, 4) == 1);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged);
    /* A prefix of the operations, ending with a full chunk: less than a
     * chunk's worth is lost. */
    CHECK(t.nchunks >= 1 && t.nrecs > 0 && t.nrecs < total);
    CHECK(t.file_size > ONIC_TRACE_HDR_SIZE +
          t.nchunks * (size_t)(ONIC_TRACE_CHUNK_BYTES - ONIC_TRACE_REC_MAX));
    CHECK(t.file_size <= ONIC_TRACE_HDR_SIZE + t.nchunks * (size_t)ONIC_TRACE_CHUNK_BYTES);
    CHECK(total - t.nrecs < ONIC_TRACE_CHUNK_BYTES);
    check_child_records(&t, appends);
    replay_result_t *res = replay_result_new();
    CHECK(replay_trace(&t, &opts, res, NULL) == 0 && !res->inconsistent);
    replay_result_free(res);
    onic_trace_free(&t);

    clean_dir();
    st = run_child(2, appends, 2);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(trace_files(paths, 4) == 1);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged);
    CHECK_EQ(t.nrecs, total);
    CHECK_EQ(t.recs[t.nrecs - 1].op, ONIC_TRACE_OP_MATCH);
    check_child_records(&t, appends);
    /* Delta-coded: consecutive keys and neighbouring entries take a few
     * bytes a record (64 in format version 1). */
    CHECK((t.file_size - ONIC_TRACE_HDR_SIZE) / t.nrecs <= 12);
    onic_trace_free(&t);
}

/* A queue destroyed right after a full buffer was written has no record
 * left to write: it adds no empty chunk (a chunk holds at least one
 * record; the reader would call the file damaged there). */
static void test_destroy_after_flush(void)
{
    onic_config_t cfg = traced_cfg(0);
    onic_matcher_t *m;
    onic_mkey_t k = {0, 0}, none = {0, 0};
    char paths[4][512], err[256];
    struct stat st;
    off_t written = 0;
    onic_trace_t t;

    clean_dir();
    CHECK(onic_matcher_create_cfg("list", &cfg, &m) == ONIC_OK);
    CHECK(trace_files(paths, 4) == 1);
    for (k.bits = 1; k.bits < 100000 && written <= ONIC_TRACE_HDR_SIZE; k.bits++) {
        k.id = k.bits * 0x9e3779b97f4a7c15ull;   /* records of a dozen bytes */
        REQUIRE(onic_matcher_append(m, k, none, NULL, NULL) == ONIC_OK);
        REQUIRE(stat(paths[0], &st) == 0);
        written = st.st_size;
    }
    onic_matcher_destroy(m);   /* the buffer is empty now */
    CHECK(written > ONIC_TRACE_HDR_SIZE);
    CHECK(stat(paths[0], &st) == 0);
    CHECK_EQ(st.st_size, written);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged && t.nchunks == 1);
    CHECK_EQ(t.nrecs, k.bits);   /* the label and every append */
    onic_trace_free(&t);
}

/* A child forked while a traced queue holds unwritten records, exiting
 * after the parent wrote them and more, writes nothing: the parent's file
 * has each record once (the child, writing its stale copy where the
 * parent's chunk begins, would cut that chunk short). */
static void test_fork_child_exit(void)
{
    onic_config_t cfg = traced_cfg(0);
    onic_matcher_t *m;
    onic_mkey_t k = {0, 0}, none = {0, 0};
    char paths[4][512], err[256], c = 'x';
    onic_trace_t t;
    int fds[2], st;
    pid_t pid;

    clean_dir();
    REQUIRE(pipe(fds) == 0);
    CHECK(onic_matcher_create_cfg("list", &cfg, &m) == ONIC_OK);
    for (k.bits = 0; k.bits < 100; k.bits++)
        CHECK(onic_matcher_append(m, k, none, NULL, NULL) == ONIC_OK);
    pid = fork();
    if (pid == 0) {
        close(fds[1]);
        (void)!read(fds[0], &c, 1);
        exit(0);   /* exit handlers run, with the inherited queue */
    }
    close(fds[0]);
    for (; k.bits < 150; k.bits++)
        CHECK(onic_matcher_append(m, k, none, NULL, NULL) == ONIC_OK);
    onic_matcher_destroy(m);
    (void)!write(fds[1], &c, 1);
    close(fds[1]);
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    CHECK(trace_files(paths, 4) == 1);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged && t.nchunks == 1);
    CHECK_EQ(t.nrecs, 1 + 150);
    onic_trace_free(&t);
}

/* A write that fails (here the file-size limit, cut short and then
 * refused) is said once, stops that queue's records and never its
 * operations: the file keeps the chunks written whole and reports the cut
 * one, by its offset. */
static void test_write_fails(void)
{
    const rlim_t limit = ONIC_TRACE_HDR_SIZE + 100000;
    char paths[4][512], err[256], errpath[600], log[8192];
    size_t loglen, said = 0;
    FILE *f;
    onic_trace_t t;
    pid_t pid;
    int st;

    clean_dir();
    snprintf(errpath, sizeof(errpath), "%s/stderr.txt", tmpdir);
    pid = fork();
    if (pid == 0) {
        struct rlimit rl = {limit, limit};
        onic_config_t cfg = traced_cfg(0);
        onic_matcher_t *m;
        onic_mkey_t k = {0, 0}, none = {0, 0};
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), bad = 0;

        if (fd < 0 || dup2(fd, 2) < 0 || signal(SIGXFSZ, SIG_IGN) == SIG_ERR ||
            setrlimit(RLIMIT_FSIZE, &rl) != 0 ||
            onic_matcher_create_cfg("list", &cfg, &m) != ONIC_OK)
            _exit(2);
        for (k.bits = 1; k.bits <= 20000; k.bits++) {   /* records of a dozen bytes */
            k.id = k.bits * 0x9e3779b97f4a7c15ull;
            bad |= onic_matcher_append(m, k, none, (void *)(uintptr_t)k.bits, NULL) != ONIC_OK;
            bad |= onic_matcher_match(m, k, none) != (void *)(uintptr_t)k.bits;
        }
        onic_matcher_destroy(m);
        _exit(bad);
    }
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    f = fopen(errpath, "r");
    CHECK(f != NULL);
    loglen = f != NULL ? fread(log, 1, sizeof(log) - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    log[loglen] = '\0';
    for (const char *p = log; (p = strstr(p, "cannot write")) != NULL; p++)
        said++;
    CHECK_EQ(said, 1);   /* said once, for the write cut short */
    unlink(errpath);
    CHECK(trace_files(paths, 4) == 1);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK_EQ(t.file_size, limit);
    CHECK(t.damaged && t.nchunks >= 1);
    /* At the limit itself when the cut fell between two records of the
     * chunk (record sizes follow the clock, so either happens). */
    CHECK(t.error_offset > ONIC_TRACE_HDR_SIZE && t.error_offset <= limit);
    CHECK(t.nrecs > 1000 && t.nrecs < 40001);
    CHECK(t.recs[0].op == ONIC_TRACE_OP_LABEL);
    onic_trace_free(&t);
}

/* --- damaged traces --- */

static unsigned char *file_load(const char *path, size_t *len_p)
{
    struct stat st;
    unsigned char *buf;
    int fd = open(path, O_RDONLY);

    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    buf = malloc((size_t)st.st_size);
    if (buf != NULL && read(fd, buf, (size_t)st.st_size) != st.st_size) {
        free(buf);
        buf = NULL;
    }
    close(fd);
    *len_p = (size_t)st.st_size;
    return buf;
}

/* A trace (buf, plen) cut at every byte: a short header fails at offset
 * 0; otherwise the complete records of t0 (buf read whole) are kept and
 * the first incomplete one (or the cut chunk header) is named by its
 * offset. One chunk. */
static void check_every_cut(const unsigned char *buf, size_t plen, const onic_trace_t *t0,
                            const replay_opts_t *opts)
{
    char err[256];
    size_t n = t0->nrecs;

    for (size_t cut = 0; cut <= plen; cut++) {
        onic_trace_t t;
        onic_status_t s = onic_trace_parse(buf, cut, &t, err, sizeof(err));
        size_t whole = 0, want_off;
        char want[64];

        if (cut < ONIC_TRACE_HDR_SIZE) {
            REQUIRE(s == ONIC_ERR_TRUNCATED && strstr(err, "offset 0") != NULL);
            continue;
        }
        REQUIRE(s == ONIC_OK);
        if (s != ONIC_OK)
            continue;
        while (whole < n && (whole + 1 < n ? t0->offsets[whole + 1] : plen) <= cut)
            whole++;
        REQUIRE(t.nrecs == whole);
        for (size_t i = 0; i < t.nrecs && i < n; i++)
            REQUIRE(memcmp(&t.recs[i], &t0->recs[i], sizeof(t.recs[i])) == 0 &&
                    t.offsets[i] == t0->offsets[i]);
        REQUIRE(t.damaged == (cut > ONIC_TRACE_HDR_SIZE && cut < plen));
        if (t.damaged) {
            want_off = cut < ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR ? ONIC_TRACE_HDR_SIZE :
                       t0->offsets[whole];
            snprintf(want, sizeof(want), "offset %zu", want_off);
            REQUIRE(strstr(t.error, want) != NULL && strstr(t.error, "truncated") != NULL);
            REQUIRE(t.error_offset == want_off);
        }
        replay_result_t *res = replay_result_new();
        REQUIRE(replay_trace(&t, opts, res, NULL) == 0 && !res->inconsistent);
        replay_result_free(res);
        onic_trace_free(&t);
    }
}

static void test_damaged(void)
{
    char paths[4][512], err[256];
    unsigned char *buf, *mut;
    size_t plen, n;
    replay_opts_t opts;
    onic_trace_t t0;
    onic_rand_t r;

    clean_dir();
    CHECK(run_child(3, 40, 0) == 0);
    CHECK(trace_files(paths, 4) == 1);
    buf = file_load(paths[0], &plen);
    CHECK(buf != NULL);
    if (buf == NULL)
        return;
    mut = malloc(plen);
    /* One chunk: two labels, 40 appends, 20 matches. */
    CHECK(onic_trace_parse(buf, plen, &t0, err, sizeof(err)) == ONIC_OK);
    CHECK(!t0.damaged && t0.nchunks == 1);
    n = t0.nrecs;
    CHECK_EQ(n, 62);
    CHECK_EQ(t0.offsets[0], ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR);
    /* A time only by the rule of check_times (the first byte's bit 7),
     * the others repeating the time before. */
    CHECK(check_times(buf, plen, &t0) >= 2);
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;

    check_every_cut(buf, plen, &t0, &opts);
    /* The bad fields of a record, or a chunk header, stop the reading
     * there, named; the header's version and magic are checked. */
    {
        onic_trace_t t;
        onic_trace_chunk_t ch;

        memcpy(mut, buf, plen);
        mut[t0.offsets[20]] |= ONIC_TRACE_B_OP;   /* operation 7 */
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.nrecs == 20 && strstr(t.error, "unknown operation") != NULL);
        CHECK_EQ(t.error_offset, t0.offsets[20]);
        onic_trace_free(&t);
        memcpy(mut, buf, plen);
        mut[t0.offsets[25]] &= (unsigned char)~ONIC_TRACE_B_OP;   /* operation 0 */
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.nrecs == 25 && strstr(t.error, "unknown operation") != NULL);
        CHECK_EQ(t.error_offset, t0.offsets[25]);
        onic_trace_free(&t);
        memcpy(mut, buf, plen);
        mut[t0.offsets[30]] |= ONIC_TRACE_HIT << ONIC_TRACE_B_FLAGS_SHIFT;   /* a "hit" append */
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.nrecs == 30 && t.error_offset == t0.offsets[30]);
        CHECK(strstr(t.error, "lookup flags") != NULL);
        onic_trace_free(&t);
        /* a chunk header claiming one record more than it holds */
        memcpy(mut, buf, plen);
        memcpy(&ch, mut + ONIC_TRACE_HDR_SIZE, sizeof(ch));
        ch.nrecs++;
        memcpy(mut + ONIC_TRACE_HDR_SIZE, &ch, sizeof(ch));
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.error_offset == ONIC_TRACE_HDR_SIZE &&
              strstr(t.error, "62 records, its header says 63") != NULL);
        onic_trace_free(&t);
        /* ... one record less: the last one is beyond its count */
        ch.nrecs -= 2;
        memcpy(mut + ONIC_TRACE_HDR_SIZE, &ch, sizeof(ch));
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.nrecs == 61 && t.error_offset == t0.offsets[61]);
        onic_trace_free(&t);
        /* ... queue 0 */
        ch.nrecs++;
        ch.queue = 0;
        memcpy(mut + ONIC_TRACE_HDR_SIZE, &ch, sizeof(ch));
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_OK);
        CHECK(t.damaged && t.nrecs == 0 && t.error_offset == ONIC_TRACE_HDR_SIZE &&
              strstr(t.error, "bad chunk header at offset 128") != NULL);
        onic_trace_free(&t);
        memcpy(mut, buf, plen);
        mut[8] = 9;   /* version */
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
        CHECK(strstr(err, "version 9 at offset 8") != NULL);
        mut[8] = 1;
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
        CHECK(strstr(err, "version 1 at offset 8") != NULL);
        mut[0] = 'X';
        CHECK(onic_trace_parse(mut, plen, &t, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
        CHECK(strstr(err, "bad magic at offset 0") != NULL);
    }
    /* Chunks of one record built by hand after the file's header: a lookup
     * (a miss, key and ignore 0) is read with 2^32 - 1 entries inspected
     * and refused with 2^32; an append's entry is read up to 2^61 - 1
     * (its address over 8) and refused past it, where the address would
     * lose its top bits. */
    for (int k = 0; k < 4; k++) {
        uint64_t v = k == 0 ? UINT32_MAX : k == 1 ? UINT64_C(1) << 32 :
                     k == 2 ? (UINT64_C(1) << 61) - 1 : UINT64_C(1) << 61;
        unsigned char hand[ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR + 16];
        onic_trace_chunk_t ch = {0, 1, 1, ONIC_MATCH_QUEUE_POSTED, {0, 0, 0}};
        size_t len = ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR;
        onic_trace_t t;

        memcpy(hand, buf, ONIC_TRACE_HDR_SIZE);
        hand[len++] = (unsigned char)((k < 2 ? ONIC_TRACE_OP_MATCH : ONIC_TRACE_OP_APPEND) |
                                      ONIC_TRACE_B_KEY_SAME | ONIC_TRACE_B_IGN_SAME);
        for (uint64_t x = k < 2 ? v : v << 1; ; x >>= 7) {   /* a varint; zigzag(v) = 2v */
            hand[len++] = (unsigned char)((x & 0x7f) | (x >= 0x80 ? 0x80 : 0));
            if (x < 0x80)
                break;
        }
        ch.bytes = (uint32_t)(len - ONIC_TRACE_HDR_SIZE);
        memcpy(hand + ONIC_TRACE_HDR_SIZE, &ch, sizeof(ch));
        CHECK(onic_trace_parse(hand, len, &t, err, sizeof(err)) == ONIC_OK);
        if (k == 0)
            CHECK(!t.damaged && t.nrecs == 1 && t.recs[0].aux == v && t.recs[0].entry == 0);
        else if (k == 2)
            CHECK(!t.damaged && t.nrecs == 1 && t.recs[0].entry == v << ONIC_TRACE_ENTRY_SHIFT);
        else
            CHECK(t.damaged && t.nrecs == 0 &&
                  t.error_offset == ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR &&
                  strstr(t.error, k == 1 ? "2^32 entries or more" :
                                           "entry beyond the address space") != NULL);
        onic_trace_free(&t);
    }
    /* An insert before entry 5 (over 8) whose anchor is named 0: read with
     * anchor 8, refused with none, which only an insert at the head has. */
    for (int bad = 0; bad < 2; bad++) {
        unsigned char hand[ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR + 8];
        onic_trace_chunk_t ch = {0, 1, 1, ONIC_MATCH_QUEUE_POSTED, {0, 0, 0}};
        size_t len = ONIC_TRACE_HDR_SIZE + ONIC_TRACE_CHUNK_HDR;
        onic_trace_t t;

        memcpy(hand, buf, ONIC_TRACE_HDR_SIZE);
        hand[len++] = ONIC_TRACE_OP_INSERT | ONIC_TRACE_B_KEY_SAME | ONIC_TRACE_B_IGN_SAME;
        hand[len++] = 10;                /* entry 5: zigzag 10 */
        hand[len++] = ONIC_MATCH_BEFORE;
        hand[len++] = bad ? 9 : 7;       /* anchor 0 (-5: 9) or 1 (-4: 7) */
        ch.bytes = (uint32_t)(len - ONIC_TRACE_HDR_SIZE);
        memcpy(hand + ONIC_TRACE_HDR_SIZE, &ch, sizeof(ch));
        CHECK(onic_trace_parse(hand, len, &t, err, sizeof(err)) == ONIC_OK);
        if (!bad)
            CHECK(!t.damaged && t.nrecs == 1 && t.recs[0].entry == 40 && t.recs[0].aux == 8 &&
                  t.recs[0].pos == ONIC_MATCH_BEFORE);
        else
            CHECK(t.damaged && t.nrecs == 0 &&
                  strstr(t.error, "insert whose anchor does not fit its position") != NULL);
        onic_trace_free(&t);
    }
    /* A file that holds fewer bytes than its size says (a sysfs attribute:
     * 4096 by fstat, a few bytes read): what came is parsed, a truncated
     * header, and the reading ends. */
    {
        const char *short_file = "/sys/kernel/uevent_seqnum";
        struct stat sst;
        onic_trace_t t;

        if (stat(short_file, &sst) == 0 && S_ISREG(sst.st_mode) && sst.st_size > 128) {
            CHECK(onic_trace_read(short_file, &t, err, sizeof(err)) == ONIC_ERR_TRUNCATED);
            CHECK(strstr(err, "truncated header at offset 0") != NULL);
        } else {
            fprintf(stderr, "trace: %s not here: the short read is not tested\n", short_file);
        }
    }
    /* A match of an entry never appended: the replay says where. */
    {
        onic_trace_t t;
        CHECK(onic_trace_parse(buf, plen, &t, err, sizeof(err)) == ONIC_OK && !t.damaged);
        CHECK(t.recs[n - 1].op == ONIC_TRACE_OP_MATCH);
        t.recs[n - 1].entry ^= 0x40;
        replay_result_t *res = replay_result_new();
        CHECK(replay_trace(&t, &opts, res, NULL) != 0 && res->inconsistent);
        CHECK(strstr(res->error, "offset") != NULL);
        replay_result_free(res);
        onic_trace_free(&t);
    }
    /* Random damage: a few bytes changed anywhere, never a crash (ASan and
     * UBSan builds run this too); whatever the reader accepts, replays. */
    onic_rand_seed(&r, 20);
    for (int it = 0; it < 20000; it++) {
        onic_trace_t t;
        size_t nb = 1 + onic_rand_below(&r, 8), cut = plen - onic_rand_below(&r, 3) * 7;
        memcpy(mut, buf, plen);
        for (size_t j = 0; j < nb; j++)
            mut[onic_rand_below(&r, plen)] = (unsigned char)onic_rand_below(&r, 256);
        if (onic_trace_parse(mut, cut, &t, err, sizeof(err)) != ONIC_OK) {
            REQUIRE(strstr(err, "offset") != NULL);
            continue;
        }
        if (t.damaged)
            REQUIRE(strstr(t.error, "offset") != NULL);
        replay_result_t *res = replay_result_new();
        (void)replay_trace(&t, &opts, res, NULL);
        if (res->inconsistent)
            REQUIRE(strstr(res->error, "offset") != NULL);
        replay_result_free(res);
        onic_trace_free(&t);
    }
    onic_trace_free(&t0);
    free(buf);
    free(mut);
}

/* Inserts (head, before, after an anchor) and removals: their records
 * read back as written, and every cut of the trace -- inside an insert's
 * position or anchor too -- keeps exactly the complete records. */
static void test_inserts_cut(void)
{
    onic_config_t cfg = traced_cfg(0);
    onic_matcher_t *m;
    onic_mkey_t k = {1, 0}, none = {0, 0};
    onic_mentry_t *e[4];
    char paths[4][512], err[256];
    unsigned char *buf;
    size_t plen;
    replay_opts_t opts;
    onic_trace_t t;

    clean_dir();
    CHECK(onic_matcher_create_cfg("list", &cfg, &m) == ONIC_OK);
    CHECK(onic_matcher_append(m, k, none, NULL, &e[0]) == ONIC_OK);
    k.bits = 2;
    CHECK(onic_matcher_insert(m, k, none, NULL, ONIC_MATCH_HEAD, NULL, &e[1]) == ONIC_OK);
    k.bits = 3;
    CHECK(onic_matcher_insert(m, k, none, NULL, ONIC_MATCH_BEFORE, e[0], &e[2]) == ONIC_OK);
    k.bits = 4;
    CHECK(onic_matcher_insert(m, k, none, NULL, ONIC_MATCH_AFTER, e[1], &e[3]) == ONIC_OK);
    onic_matcher_remove(m, e[2]);
    onic_matcher_destroy(m);
    CHECK(trace_files(paths, 4) == 1);
    buf = file_load(paths[0], &plen);
    CHECK(buf != NULL);
    if (buf == NULL)
        return;
    CHECK(onic_trace_parse(buf, plen, &t, err, sizeof(err)) == ONIC_OK && !t.damaged);
    CHECK_EQ(t.nrecs, 6);   /* a label, an append, three inserts, a removal */
    if (t.nrecs == 6) {
        CHECK(t.recs[2].op == ONIC_TRACE_OP_INSERT && t.recs[2].pos == ONIC_MATCH_HEAD &&
              t.recs[2].aux == 0 && t.recs[2].key.bits == 2);
        CHECK(t.recs[3].op == ONIC_TRACE_OP_INSERT && t.recs[3].pos == ONIC_MATCH_BEFORE &&
              t.recs[3].aux == t.recs[1].entry && t.recs[3].key.bits == 3);
        CHECK(t.recs[4].op == ONIC_TRACE_OP_INSERT && t.recs[4].pos == ONIC_MATCH_AFTER &&
              t.recs[4].aux == t.recs[2].entry && t.recs[4].key.bits == 4);
        CHECK(t.recs[5].op == ONIC_TRACE_OP_REMOVE && t.recs[5].entry == t.recs[3].entry);
    }
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;
    check_every_cut(buf, plen, &t, &opts);
    onic_trace_free(&t);
    free(buf);
}

/* --- the models on cases computed by hand --- */

static replay_cost_t cost(replay_model_id_t mo, const replay_params_t *p, replay_mstate_t *st,
                          unsigned op, unsigned flags, size_t len, size_t pos)
{
    replay_op_t o = {op, flags, len, pos};
    return replay_model_cost(mo, p, st, &o);
}

#define NEAR(_a, _b) (((_a) - (_b)) < 1e-9 && ((_b) - (_a)) < 1e-9)

static void test_models(void)
{
    replay_params_t p;
    replay_mstate_t st = {0};
    replay_cost_t c;
    const unsigned HIT = ONIC_TRACE_HIT, M = ONIC_TRACE_OP_MATCH, A = ONIC_TRACE_OP_APPEND;

    replay_params_defaults(&p);
    p.alpu_cells = 4;
    p.alpu_threshold = 2;
    /* The NIC processor: 20 ns bus + 10 entries x 7.5 cycles at 500 MHz. */
    c = cost(REPLAY_MODEL_NIC, &p, &st, M, HIT, 10, 9);
    CHECK(NEAR(c.ns, 170.0) && c.inspected == 10);
    /* 512 entries of 128 bytes in 32 KB: half out of cache, so 7.5 + 0.5 x
     * 24.5 cycles = 39.5 ns an entry; a miss walks all of them. */
    c = cost(REPLAY_MODEL_NIC, &p, &st, M, 0, 512, 512);
    CHECK(NEAR(c.ns, 20.0 + 512 * 39.5) && c.inspected == 512);
    /* The list model: entries inspected only. */
    c = cost(REPLAY_MODEL_LIST, &p, &st, ONIC_TRACE_OP_PEEK, HIT, 10, 3);
    CHECK(c.ns == 0 && c.inspected == 4);

    /* ALPU, at or below the threshold: the processor alone. */
    c = cost(REPLAY_MODEL_ALPU, &p, &st, M, HIT, 2, 1);
    CHECK(NEAR(c.ns, 20.0 + 2 * 15.0) && c.side_ns == 0 && st.loaded == 0);
    /* An insert burst: 6 entries queued, the next lookup's loop first loads
     * the 4 cells: START INSERT + START ACKNOWLEDGE + STOP INSERT over the
     * bus, and 4 INSERTs, each a bus write (20 ns > 2 cycles at 500 MHz). */
    c = cost(REPLAY_MODEL_ALPU, &p, &st, A, 0, 5, 5);
    CHECK(NEAR(c.ns, 20.0 + 40.0) && st.loaded == 0);
    c = cost(REPLAY_MODEL_ALPU, &p, &st, M, HIT, 6, 3);
    CHECK(NEAR(c.side_ns, 3 * 20.0 + 4 * 20.0));
    /* ...a match on the full unit: the result read over the bus, 7 cycles
     * of the unit at 500 MHz, 23 of the processor's: 80 ns, nothing walked;
     * the cell is deleted. */
    CHECK(NEAR(c.ns, 20.0 + 14.0 + 46.0) && c.inspected == 0);
    CHECK_EQ(st.loaded, 3);
    /* Overflow to the list: 5 queued, 3 in the unit, a match at position 4
     * fails in the unit (its 3 cells and the refill of one more first: the
     * loop loads entry 3, so 4 in cells) and walks the 1 entry behind. */
    c = cost(REPLAY_MODEL_ALPU, &p, &st, M, HIT, 5, 4);
    CHECK(NEAR(c.side_ns, 3 * 20.0 + 20.0) && st.loaded == 4);
    CHECK(NEAR(c.ns, 80.0 + 15.0) && c.inspected == 1);
    /* A miss with 6 queued, 4 in cells: 2 walked in software. */
    c = cost(REPLAY_MODEL_ALPU, &p, &st, M, 0, 6, 6);
    CHECK(NEAR(c.ns, 80.0 + 30.0) && c.inspected == 2 && c.side_ns == 0);
    /* An insert at the head cuts the unit's prefix: it only adds behind. */
    c = cost(REPLAY_MODEL_ALPU, &p, &st, ONIC_TRACE_OP_INSERT, 0, 6, 0);
    CHECK_EQ(st.loaded, 0);
    /* A cancel of a loaded entry frees its cell. */
    st.loaded = 3;
    c = cost(REPLAY_MODEL_ALPU, &p, &st, ONIC_TRACE_OP_REMOVE, 0, 7, 1);
    CHECK_EQ(st.loaded, 2);

    /* PIM: blocks of 16, 3 wide loads of 31 cycles + 6 cycles each, 2 ns a
     * cycle, after the 20 ns bus: 1 block for the first entry, 2 for the
     * 17th. */
    c = cost(REPLAY_MODEL_PIM, &p, &st, M, HIT, 40, 0);
    CHECK(NEAR(c.ns, 20.0 + 99 * 2.0));
    c = cost(REPLAY_MODEL_PIM, &p, &st, M, HIT, 40, 16);
    CHECK(NEAR(c.ns, 20.0 + 2 * 99 * 2.0) && c.inspected == 17);
}

static void test_params_file(void)
{
    char path[600], err[256];
    replay_params_t p;
    FILE *f;

    snprintf(path, sizeof(path), "%s/nic.conf", tmpdir);
    replay_params_defaults(&p);
    f = fopen(path, "w");
    fprintf(f, "# a comment\n\nalpu_cells = 128   # the small unit\n  bus_ns=25\n");
    fclose(f);
    CHECK(replay_params_load(path, &p, err, sizeof(err)) == 0);
    CHECK(p.alpu_cells == 128 && p.bus_ns == 25 && p.nic_mhz == 500);
    f = fopen(path, "w");
    fprintf(f, "bus_ns = 10\nbogus = 1\n");
    fclose(f);
    CHECK(replay_params_load(path, &p, err, sizeof(err)) != 0);
    CHECK(strstr(err, ":2:") != NULL && strstr(err, "bogus") != NULL && p.bus_ns == 25);
    f = fopen(path, "w");
    fprintf(f, "nic_mhz = -5\n");
    fclose(f);
    CHECK(replay_params_load(path, &p, err, sizeof(err)) != 0);
    CHECK(strstr(err, ":1:") != NULL && strstr(err, "nic_mhz") != NULL);
    f = fopen(path, "w");
    fprintf(f, "alpu_block = 512\n");
    fclose(f);
    CHECK(replay_params_load(path, &p, err, sizeof(err)) != 0);
    CHECK(strstr(err, "alpu_block") != NULL);
    unlink(path);
    /* The documented file is the built-in defaults, value for value. */
    replay_params_t dflt, file;
    replay_params_defaults(&dflt);
    replay_params_defaults(&file);
    memset(&file, 0xff, sizeof(file));
    CHECK(replay_params_load(ONIC_NIC_CONF, &file, err, sizeof(err)) == 0);
    CHECK(memcmp(&dflt, &file, sizeof(file)) == 0);
}

/* Two queues of one process traced into one directory share one file (the
 * second reuses the open file and is numbered next, each queue's records in
 * its own chunks); a third queue asking for another directory while that
 * file is open is not traced, and works. */
static void test_two_queues_one_file(void)
{
    onic_config_t cfg = traced_cfg(1), other = traced_cfg(1);
    onic_matcher_t *m[3];
    onic_mkey_t k = {0, 0}, none = {0, 0};
    char paths[4][512], err[256], otherdir[256];
    size_t count[3] = {0, 0, 0};
    onic_trace_t t;
    DIR *d;
    int others = 0;
    uint32_t first;

    clean_dir();
    snprintf(otherdir, sizeof(otherdir), "%s/other", tmpdir);
    REQUIRE(mkdir(otherdir, 0700) == 0);
    snprintf(other.trace, sizeof(other.trace), "%.200s", otherdir);
    CHECK(onic_matcher_create_cfg("list", &cfg, &m[0]) == ONIC_OK);
    CHECK(onic_matcher_create_cfg("hash", &cfg, &m[1]) == ONIC_OK);
    CHECK(onic_matcher_create_cfg("list", &other, &m[2]) == ONIC_OK);
    onic_matcher_label(m[0], ONIC_MATCH_QUEUE_POSTED, 0);
    onic_matcher_label(m[1], ONIC_MATCH_QUEUE_UNEXPECTED, 0);
    for (k.bits = 0; k.bits < 30; k.bits++) {
        k.id = 1;
        CHECK(onic_matcher_append(m[0], k, none, NULL, NULL) == ONIC_OK);
        k.id = 2;
        CHECK(onic_matcher_append(m[1], k, none, NULL, NULL) == ONIC_OK);
        CHECK(onic_matcher_append(m[2], k, none, NULL, NULL) == ONIC_OK);
    }
    k.bits = 5;
    k.id = 2;
    CHECK(onic_matcher_match(m[1], k, none) == NULL);   /* a hit: its cookie, NULL */
    CHECK_EQ(onic_matcher_length(m[1]), 29);
    CHECK_EQ(onic_matcher_length(m[2]), 30);   /* the untraced queue works */
    for (int i = 0; i < 3; i++)
        onic_matcher_destroy(m[i]);
    CHECK(trace_files(paths, 4) == 1);
    d = opendir(otherdir);
    for (struct dirent *de; d != NULL && (de = readdir(d)) != NULL;)
        others += de->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    CHECK_EQ(others, 0);
    rmdir(otherdir);
    CHECK(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged);
    CHECK_EQ(t.hdr.rank, 1);
    CHECK(t.nchunks == 2);
    /* queues are numbered in the process's order of tracing: m[0]'s first */
    first = t.nrecs > 0 ? t.recs[0].queue : 0;
    for (size_t i = 0; i < t.nrecs; i++) {
        const onic_trace_rec_t *r = &t.recs[i];
        unsigned q = r->queue - first + 1;
        REQUIRE(q == 1 || q == 2);
        if (q != 1 && q != 2)
            continue;
        count[q]++;
        if (r->op == ONIC_TRACE_OP_APPEND)
            REQUIRE(r->key.id == q);
    }
    /* each: two labels and 30 appends; queue 2 one match more */
    CHECK_EQ(count[1], 32);
    CHECK_EQ(count[2], 33);
    onic_trace_free(&t);
}

/* A posted receive's pattern, for each engine: an append (the entry's key
 * and ignore bits) then the lookup that takes it (the message's key, no
 * ignore bits), again and again. Each class of record repeats its own
 * previous key and ignore words (format version 5): past the first of each
 * class, every record says KEY_SAME and IGN_SAME and carries no key bytes,
 * and each reads back with its own words. */
static void test_classes_repeat(const char *engine)
{
    onic_config_t cfg = traced_cfg(0);
    onic_matcher_t *m;
    onic_mkey_t key = {0x123456789aull, 7}, ign = {UINT64_C(3) << 62, 0}, none = {0, 0};
    char paths[4][512], err[256];
    unsigned char *buf;
    size_t plen, seen[2] = {0, 0};
    onic_trace_t t;

    clean_dir();
    REQUIRE(onic_matcher_create_cfg(engine, &cfg, &m) == ONIC_OK);
    onic_matcher_label(m, ONIC_MATCH_QUEUE_POSTED, 3);
    for (uintptr_t i = 1; i <= 200; i++) {
        REQUIRE(onic_matcher_append(m, key, ign, (void *)i, NULL) == ONIC_OK);
        REQUIRE(onic_matcher_match(m, key, none) == (void *)i);
    }
    onic_matcher_destroy(m);
    REQUIRE(trace_files(paths, 4) == 1);
    REQUIRE(onic_trace_read(paths[0], &t, err, sizeof(err)) == ONIC_OK);
    CHECK(!t.damaged);
    buf = file_load(paths[0], &plen);
    REQUIRE(buf != NULL);
    CHECK_EQ(t.nrecs, 402);   /* two labels, then the pairs */
    for (size_t i = 0; i < t.nrecs && buf != NULL; i++) {
        const onic_trace_rec_t *r = &t.recs[i];
        unsigned head = buf[t.offsets[i]];
        int lookup = r->op == ONIC_TRACE_OP_MATCH;

        if (r->op == ONIC_TRACE_OP_LABEL)
            continue;
        REQUIRE(r->op == (i % 2 == 0 ? ONIC_TRACE_OP_APPEND : ONIC_TRACE_OP_MATCH));
        REQUIRE(r->key.bits == key.bits && r->key.id == key.id);
        REQUIRE(r->ignore.bits == (lookup ? 0 : ign.bits) && r->ignore.id == 0);
        if (seen[lookup]++ > 0) {
            REQUIRE((head & (ONIC_TRACE_B_KEY_SAME | ONIC_TRACE_B_IGN_SAME)) ==
                    (ONIC_TRACE_B_KEY_SAME | ONIC_TRACE_B_IGN_SAME));
            /* the head byte, the entry's difference, a lookup's entries
             * inspected, and a time now and then: no key bytes */
            REQUIRE(i + 1 >= t.nrecs || t.offsets[i + 1] - t.offsets[i] <= 4 +
                    ((head & ONIC_TRACE_B_TIME) ? 9u : 0u));
        }
    }
    CHECK_EQ(seen[0], 200);
    CHECK_EQ(seen[1], 200);
    free(buf);
    onic_trace_free(&t);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 2026;

    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    printf("trace: seed %llu (test_trace %llu replays it)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    test_file_names();
    test_round_trip("list", seed, 20000, RT_MIXED);
    test_round_trip("hash", seed + 1, 20000, RT_MIXED);
    test_round_trip("hash", seed + 4, 20000, RT_LONG);    /* lookups in its index */
    test_round_trip("hash", seed + 6, 20000, RT_SHORT);   /* and in its ring */
    test_round_trip("alpu", seed + 2, 10000, RT_MIXED);
    test_round_trip("wide", seed + 3, 10000, RT_MIXED);
    test_round_trip("list", seed + 5, 10000, RT_LONG);
    test_clock_every();
    test_ranks_merge();
    test_killed_writer();
    test_fork_child_exit();
    test_destroy_after_flush();
    test_write_fails();
    test_two_queues_one_file();
    test_classes_repeat("hash");
    test_classes_repeat("list");
    test_damaged();
    test_inserts_cut();
    test_models();
    test_params_file();
    clean_dir();
    rmdir(tmpdir);
    return check_summary("trace");
}
