/* Processes and their onload engine, through onicrun --onload.
 *
 *   onload_job ping COUNT   every rank sends COUNT pings of varying sizes,
 *                           as many in flight as its command ring holds,
 *                           taking pongs whenever the ring is full, and
 *                           checks every pong, in order; then the engine's
 *                           command counter covers them
 *   onload_job latency COUNT  one 8-byte ping at a time, COUNT times: prints
 *                           the median round trip through the engine
 *   onload_job pull SIZE    odd ranks pull SIZE bytes that the even rank
 *                           below registered, then compute without calling
 *                           onic, watching their buffer (with a memory
 *                           barrier) until the engine has filled it; the
 *                           owner learns its range was read. Also pulls
 *                           that must fail (unknown range, out of bounds).
 *   onload_job pull SIZE nocma|nocma-owner|nocma-puller
 *                           the same where the engine may not reach every
 *                           process (or the owners, or the pullers) by CMA
 *                           (ONIC_ONLOAD_RMA=copy for them): the data goes
 *                           through bounce areas, copied by those processes
 *                           in their own waits, so the puller waits for
 *                           PULLED before it looks; an owner that copies
 *                           keeps its command ring full of pings meanwhile
 *   onload_job vanish       rank 1 exits without saying BYE; the engine
 *                           stops serving it within a second, and rank 0
 *                           is still served
 *   onload_job reopen       every rank closes and reopens its connection to
 *                           the engine three times, pinging each time
 *   onload_job misuse       (one rank) registrations that must fail, pulls
 *                           the engine must refuse or fail, a pull from
 *                           oneself, then a command that makes no sense:
 *                           the engine stops serving this process (its
 *                           next ping goes unanswered) but keeps running
 *   onload_job badseg       (two ranks) rank 1 publishes a segment whose
 *                           rings overlap: the engine refuses it and still
 *                           serves rank 0, whose pulls from itself, going
 *                           on meanwhile, must all succeed

 *   onload_job killed       rank 0 kills the engine with SIGKILL; every
 *                           rank blocked waiting for an event must get an
 *                           error within 5 s, not hang (SIGTERM from
 *                           onicrun is ignored so the error can be seen)
 *   onload_job killed zombie  (one rank) the same with onicrun stopped
 *                           first, so the dead engine stays a zombie, which
 *                           kill(pid, 0) still finds: the engine must be
 *                           seen as gone all the same; then onicrun goes on
 *   onload_job vanish zombie  as vanish, but rank 1 exits while onicrun is
 *                           stopped (rank 0 stops it): the engine must stop
 *                           serving the zombie it leaves */
#include "base/clock.h"
#include "base/config.h"
#include "base/shmfd.h"
#include "onload/onload.h"
#include "onload/ring.h"
#include "../proc_state.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t ping_len(uint64_t seq)
{
    return 8 + (size_t)(seq * 2654435761u % (ONIC_ONLOAD_REC - 16 + 1));
}

static void ping_fill(uint8_t *buf, uint64_t seq, size_t len)
{
    memcpy(buf, &seq, sizeof(seq));
    for (size_t i = sizeof(seq); i < len; i++)
        buf[i] = (uint8_t)(seq * 13 + i);
}

static int ping_check(const uint8_t *buf, size_t len, uint64_t seq)
{
    uint8_t want[ONIC_ONLOAD_REC];

    if (len != ping_len(seq))
        return 0;
    ping_fill(want, seq, len);
    return memcmp(buf, want, len) == 0;
}

static int run_ping(const onic_config_t *cfg, onic_onload_client_t *c, uint64_t count)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    uint64_t sent = 0, got = 0, full = 0;
    onic_onload_status_t st;

    while (got < count) {
        uint32_t kind;
        size_t len;
        onic_status_t s;

        if (sent < count) {
            size_t l = ping_len(sent);
            ping_fill(buf, sent, l);
            s = onic_onload_client_push(c, ONIC_ONLOAD_CMD_PING, buf, l);
            if (s == ONIC_OK) {
                sent++;
                continue;
            }
            if (s != ONIC_ERR_NO_RESOURCE) {
                fprintf(stderr, "rank %u: push %llu: %s\n", cfg->rank, (unsigned long long)sent,
                        onic_status_str(s));
                return 1;
            }
            full++;
            s = onic_onload_client_poll(c, &kind, buf, sizeof(buf), &len);
            if (s == ONIC_ERR_NO_ELEM)
                continue; /* the engine has not answered yet: retry the push */
        } else {
            s = onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, 10000000000ull);
        }
        if (s != ONIC_OK || kind != ONIC_ONLOAD_EVT_PONG || !ping_check(buf, len, got)) {
            fprintf(stderr, "rank %u: pong %llu: %s, kind %u, len %zu\n", cfg->rank,
                    (unsigned long long)got, onic_status_str(s), kind, len);
            return 1;
        }
        got++;
    }
    if (onic_onload_status_read((int)cfg->onload_fd, &st) != ONIC_OK || st.commands < count) {
        fprintf(stderr, "rank %u: the engine's command count is below %llu\n", cfg->rank,
                (unsigned long long)count);
        return 1;
    }
    printf("rank %u: %llu pings answered in order (command ring full %llu times)\n", cfg->rank,
           (unsigned long long)count, (unsigned long long)full);
    return 0;
}

static _Atomic uint64_t barrier_word;

static uint8_t pull_byte(uint64_t i)
{
    return (uint8_t)(i * 7 + (i >> 12));
}

/* Wait for one event of kind; 0 and the done record on success. */
static int wait_done(onic_onload_client_t *c, uint32_t want, onic_onload_done_t *d)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    uint32_t kind;
    size_t len;
    onic_status_t s = onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, 30000000000ull);

    if (s != ONIC_OK || kind != want || len != sizeof(*d)) {
        fprintf(stderr, "waiting for event %u: %s, kind %u, len %zu\n", want, onic_status_str(s),
                kind, len);
        return 1;
    }
    memcpy(d, buf, sizeof(*d));
    return 0;
}

static int push_retry(onic_onload_client_t *c, uint32_t kind, const void *data, size_t len)
{
    onic_status_t s;

    while ((s = onic_onload_client_push(c, kind, data, len)) == ONIC_ERR_NO_RESOURCE)
        ;
    return s == ONIC_OK ? 0 : 1;
}

static int pull_once(onic_onload_client_t *c, onic_onload_pull_t *pl, onic_onload_done_t *d)
{
    return push_retry(c, ONIC_ONLOAD_CMD_PULL, pl, sizeof(*pl)) ||
           wait_done(c, ONIC_ONLOAD_EVT_PULLED, d) || d->cookie != pl->cookie;
}

/* Where buf first differs from want (size if nowhere), reading buf through
 * volatile loads: the engine writes it from another process while we look,
 * so the compiler must not assume it stays as it was. */
static size_t first_diff(const volatile uint8_t *buf, const uint8_t *want, size_t size)
{
    size_t i = 0;

    for (; i + 8 <= size; i += 8) {
        uint64_t a, b;
        a = (uint64_t)buf[i] | (uint64_t)buf[i + 1] << 8 | (uint64_t)buf[i + 2] << 16 |
            (uint64_t)buf[i + 3] << 24 | (uint64_t)buf[i + 4] << 32 | (uint64_t)buf[i + 5] << 40 |
            (uint64_t)buf[i + 6] << 48 | (uint64_t)buf[i + 7] << 56;
        memcpy(&b, want + i, sizeof(b));
        if (a != b)
            break;
    }
    for (; i < size; i++)
        if (buf[i] != want[i])
            return i;
    return size;
}

static int run_pull(const onic_config_t *cfg, onic_onload_client_t *c, size_t size, int wait_first,
                    int wait_first_owner)
{
    uint8_t *buf = malloc(size ? size : 1), *want = malloc(size ? size : 1);
    onic_onload_done_t d;
    int rc = 1;

    if (buf == NULL || want == NULL)
        goto out;
    for (size_t i = 0; i < size; i++)
        want[i] = pull_byte(i);
    if (cfg->rank % 2 == 0) {
        /* The owner: expose the data, then wait until it has been read. */
        onic_onload_reg_t r = {1, (uint64_t)(uintptr_t)want, size};
        if (cfg->rank + 1 >= cfg->size) {
            rc = 0;
            goto out;
        }
        uint64_t pings = 0, pongs = 0;
        if (push_retry(c, ONIC_ONLOAD_CMD_REG, &r, sizeof(r)))
            goto out;
        /* The puller's one-byte probes first, then the whole range. While
         * waiting, an owner that must copy for the engine keeps its command
         * ring full of pings: the copies must get through regardless. */
        do {
            uint8_t ev[ONIC_ONLOAD_REC];
            uint32_t kind;
            size_t len;
            onic_status_t st;
            while (wait_first_owner && pings - pongs < 1000 &&
                   onic_onload_client_push(c, ONIC_ONLOAD_CMD_PING, &pings, 8) == ONIC_OK)
                pings++;
            st = onic_onload_client_wait(c, &kind, ev, sizeof(ev), &len, 30000000000ull);
            if (st == ONIC_OK && kind == ONIC_ONLOAD_EVT_PONG) {
                pongs++;
                d.len = 1;
                d.status = ONIC_OK;
                continue;
            }
            if (st != ONIC_OK || kind != ONIC_ONLOAD_EVT_READ || len != sizeof(d)) {
                fprintf(stderr, "rank %u: waiting for READ: %s, kind %u\n", cfg->rank,
                        onic_status_str(st), kind);
                goto out;
            }
            memcpy(&d, ev, sizeof(d));
        } while (d.len == 1 && size != 1 && d.status == ONIC_OK);
        if (d.cookie != 1 || d.len != size || d.status != ONIC_OK || d.peer != cfg->rank + 1) {
            fprintf(stderr, "rank %u: READ says id %llu, %llu bytes, %s, by %u\n", cfg->rank,
                    (unsigned long long)d.cookie, (unsigned long long)d.len,
                    onic_status_str(d.status), d.peer);
            goto out;
        }
        printf("rank %u: the engine read my %zu bytes\n", cfg->rank, size);
        rc = 0;
    } else {
        onic_onload_pull_t pl = {cfg->rank - 1, 0, 1, 0, 1, (uint64_t)(uintptr_t)buf, 100};
        uint64_t t0, t_in, spins = 0;

        /* The owner's range exists once a one-byte pull works. */
        do {
            pl.cookie++;
            if (pull_once(c, &pl, &d))
                goto out;
        } while (d.status == ONIC_ERR_NO_ELEM);
        if (d.status != ONIC_OK || d.len != 1 || buf[0] != want[0]) {
            fprintf(stderr, "rank %u: first pull: %s\n", cfg->rank, onic_status_str(d.status));
            goto out;
        }
        /* Past the range's end, and a range that does not exist. */
        pl = (onic_onload_pull_t){cfg->rank - 1, 0, 1, size, 1, (uint64_t)(uintptr_t)buf, 200};
        if (pull_once(c, &pl, &d) || d.status != ONIC_ERR_INVALID_PARAM || d.len != 0)
            goto out;
        pl = (onic_onload_pull_t){cfg->rank - 1, 0, 2, 0, 1, (uint64_t)(uintptr_t)buf, 201};
        if (pull_once(c, &pl, &d) || d.status != ONIC_ERR_NO_ELEM)
            goto out;

        memset(buf, 0, size);
        pl = (onic_onload_pull_t){cfg->rank - 1, 0, 1, 0, size, (uint64_t)(uintptr_t)buf, 300};
        if (push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl)))
            goto out;
        t0 = onic_time_ns();
        if (wait_first) { /* we copy our part ourselves, in this wait */
            if (wait_done(c, ONIC_ONLOAD_EVT_PULLED, &d) || d.cookie != 300 ||
                d.status != ONIC_OK || d.len != size || first_diff(buf, want, size) != size) {
                fprintf(stderr, "rank %u: the pull through bounce areas failed\n", cfg->rank);
                goto out;
            }
            printf("rank %u: %zu bytes arrived through bounce areas in %.3f ms\n", cfg->rank,
                   size, (onic_time_ns() - t0) / 1e6);
            rc = 0;
            goto out;
        }
        /* Compute, calling nothing of onic: the engine moves the data. */
        for (;;) {
            /* A full barrier (a locked read-modify-write; ThreadSanitizer
             * builds refuse atomic_thread_fence) before each look. */
            atomic_fetch_add_explicit(&barrier_word, 0, memory_order_seq_cst);
            spins++;
            if (first_diff(buf, want, size) == size)
                break;
            if (spins % 64 == 0 && onic_time_ns() - t0 > 20000000000ull) {
                fprintf(stderr, "rank %u: the data did not arrive while computing\n", cfg->rank);
                goto out;
            }
        }
        t_in = onic_time_ns();
        if (wait_done(c, ONIC_ONLOAD_EVT_PULLED, &d) || d.cookie != 300 || d.status != ONIC_OK ||
            d.len != size)
            goto out;
        printf("rank %u: %zu bytes arrived %.3f ms after the pull, while computing without "
               "calling onic (%llu checks)\n", cfg->rank, size, (t_in - t0) / 1e6,
               (unsigned long long)spins);
        rc = 0;
    }
out:
    free(buf);
    free(want);
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_latency(const onic_config_t *cfg, onic_onload_client_t *c, uint64_t count)
{
    uint64_t *t = malloc((count ? count : 1) * sizeof(*t));
    uint8_t buf[ONIC_ONLOAD_REC];
    int rc = 1;

    if (t == NULL || count == 0)
        goto out;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t t0 = onic_time_ns();
        uint32_t kind;
        size_t len;
        if (push_retry(c, ONIC_ONLOAD_CMD_PING, &i, sizeof(i)) ||
            onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, 10000000000ull) != ONIC_OK ||
            kind != ONIC_ONLOAD_EVT_PONG || len != sizeof(i) || memcmp(buf, &i, sizeof(i)) != 0)
            goto out;
        t[i] = onic_time_ns() - t0;
    }
    qsort(t, count, sizeof(*t), cmp_u64);
    printf("rank %u: 8-byte ping through the engine: median round trip %.0f ns, "
           "one way %.0f ns (%llu round trips)\n", cfg->rank, (double)t[count / 2],
           t[count / 2] / 2.0, (unsigned long long)count);
    rc = 0;
out:
    free(t);
    return rc;
}

/* Wait up to 5 s for pid to reach state want. */
static int await_state(pid_t pid, char want)
{
    for (int i = 0; i < 500; i++) {
        if (test_proc_state(pid) == want)
            return 1;
        usleep(10000);
    }
    fprintf(stderr, "pid %d never reached state %c (now %c)\n", (int)pid, want,
            test_proc_state(pid));
    return 0;
}

static int run_vanish(const onic_config_t *cfg, onic_onload_client_t *c, int zombie)
{
    onic_onload_status_t st;
    uint64_t t0 = onic_time_ns();
    int rc;

    if (cfg->rank == 1) {
        /* Exit while onicrun cannot reap us: we stay a zombie. */
        if (zombie && !await_state(getppid(), 'T'))
            _exit(1);
        _exit(0); /* no BYE, no unmapping */
    }
    if (cfg->rank != 0)
        return 0;
    if (zombie)
        kill(getppid(), SIGSTOP);
    /* Both attached (rank 1 before it could exit), one still served. */
    do {
        int read = onic_onload_status_read((int)cfg->onload_fd, &st) == ONIC_OK;
        if (!read || onic_time_ns() - t0 > 5000000000ull) {
            if (read)
                fprintf(stderr, "rank 0: the engine still serves %llu processes\n",
                        (unsigned long long)st.procs);
            if (zombie)
                kill(getppid(), SIGCONT);
            return 1;
        }
        usleep(10000);
    } while (st.procs_seen != 2 || st.procs != 1);
    rc = zombie && (test_proc_state(getppid()) != 'T' || kill(getppid(), SIGCONT) != 0);
    printf("rank 0: the engine stopped serving the vanished process after %.0f ms\n",
           (onic_time_ns() - t0) / 1e6);
    return rc || run_ping(cfg, c, 1000);
}

/* The next event must be kind with cookie and status. */
static int expect_done(onic_onload_client_t *c, uint32_t kind, uint64_t cookie,
                       onic_status_t status)
{
    onic_onload_done_t d;

    if (wait_done(c, kind, &d))
        return 1;
    if (d.cookie != cookie || d.status != status) {
        fprintf(stderr, "event %u: cookie %llu status %s; expected %llu, %s\n", kind,
                (unsigned long long)d.cookie, onic_status_str(d.status),
                (unsigned long long)cookie, onic_status_str(status));
        return 1;
    }
    return 0;
}

static int run_misuse(const onic_config_t *cfg, onic_onload_client_t *c)
{
    static uint8_t src[4096], dst[4096];
    onic_onload_reg_t r = {1, (uint64_t)(uintptr_t)src, sizeof(src)};
    onic_onload_pull_t pl;
    uint8_t buf[ONIC_ONLOAD_REC];
    uint32_t kind;
    size_t len;
    int bad = 0;

    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = pull_byte(i);
    /* Registrations: twice the same id, an unknown id, one too many. */
    bad |= push_retry(c, ONIC_ONLOAD_CMD_REG, &r, sizeof(r));
    bad |= push_retry(c, ONIC_ONLOAD_CMD_REG, &r, sizeof(r));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_ERROR, 1, ONIC_ERR_INVALID_PARAM);
    r.id = 77;
    bad |= push_retry(c, ONIC_ONLOAD_CMD_DEREG, &r, sizeof(r));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_ERROR, 77, ONIC_ERR_NO_ELEM);
    for (uint64_t id = 100; id < 100 + ONIC_ONLOAD_REGS; id++) {
        r.id = id;
        bad |= push_retry(c, ONIC_ONLOAD_CMD_REG, &r, sizeof(r));
    }
    bad |= expect_done(c, ONIC_ONLOAD_EVT_ERROR, 100 + ONIC_ONLOAD_REGS - 1, ONIC_ERR_NO_RESOURCE);
    r.id = 100;
    bad |= push_retry(c, ONIC_ONLOAD_CMD_DEREG, &r, sizeof(r));

    /* Pulls: an unknown rank, sizes that wrap around, memory that is not
     * there, then one that works (from oneself). */
    pl = (onic_onload_pull_t){99, 0, 1, 0, 8, (uint64_t)(uintptr_t)dst, 1};
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_PULLED, 1, ONIC_ERR_NO_ELEM);
    pl = (onic_onload_pull_t){cfg->rank, 0, 1, 1, UINT64_MAX, (uint64_t)(uintptr_t)dst, 2};
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_PULLED, 2, ONIC_ERR_INVALID_PARAM);
    pl = (onic_onload_pull_t){cfg->rank, 0, 1, 0, 8, UINT64_MAX - 3, 3};
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_PULLED, 3, ONIC_ERR_INVALID_PARAM);
    pl = (onic_onload_pull_t){cfg->rank, 0, 1, 0, 8, 8, 4}; /* address 8: nothing mapped */
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_PULLED, 4, ONIC_ERR_INVALID_PARAM);
    bad |= expect_done(c, ONIC_ONLOAD_EVT_READ, 1, ONIC_ERR_INVALID_PARAM);
    pl = (onic_onload_pull_t){cfg->rank, 0, 1, 100, 3000, (uint64_t)(uintptr_t)dst, 5};
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PULL, &pl, sizeof(pl));
    bad |= expect_done(c, ONIC_ONLOAD_EVT_PULLED, 5, ONIC_OK);
    bad |= expect_done(c, ONIC_ONLOAD_EVT_READ, 1, ONIC_OK);
    bad |= memcmp(dst, src + 100, 3000) != 0;
    if (bad) {
        fprintf(stderr, "rank %u: misuse: something was not refused as it should be\n",
                cfg->rank);
        return 1;
    }

    /* A command that makes no sense: no longer served, the engine lives on. */
    bad |= push_retry(c, 99, NULL, 0);
    bad |= push_retry(c, ONIC_ONLOAD_CMD_PING, &r, 8);
    bad |= onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, 500000000ull) != ONIC_ERR_NO_ELEM;
    bad |= onic_onload_client_check(c) != ONIC_OK;
    if (bad) {
        fprintf(stderr, "rank %u: the engine answered after a senseless command\n", cfg->rank);
        return 1;
    }
    printf("rank %u: every misuse refused\n", cfg->rank);
    return 0;
}

/* Rank 1 makes its segment by hand, with the event ring overlapping the
 * command ring, instead of calling onic_onload_client_open. */
static int run_badseg(const onic_config_t *cfg)
{
    size_t ring = onic_onload_ring_bytes(4, ONIC_ONLOAD_REC);
    size_t bytes = sizeof(onic_onload_proc_hdr_t) + 2 * ring;
    onic_onload_proc_hdr_t *h;
    onic_onload_status_t st, st2;
    uint64_t t0 = onic_time_ns();
    int fd;

    /* Once rank 0's pulls are under way (a few MiB moved). */
    do {
        usleep(1000);
        if (onic_onload_status_read((int)cfg->onload_fd, &st) != ONIC_OK ||
            onic_time_ns() - t0 > 10000000000ull)
            return 1;
    } while (st.bytes < (4u << 20));
    fd = onic_shmfd_create("onic-onload-bad", bytes);
    if (fd < 0)
        return 1;
    h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        return 1;
    *h = (onic_onload_proc_hdr_t){0, ONIC_ONLOAD_STATUS_VERSION, cfg->rank, (int32_t)getpid(),
                                  sizeof(*h), ring, sizeof(*h) + ring / 2, ring,
                                  (uint64_t)(uintptr_t)h, 0};
    __atomic_store_n(&h->magic, ONIC_ONLOAD_PROC_MAGIC, __ATOMIC_RELEASE);
    if (onic_onload_client_hand(cfg, fd, cfg->rank) != ONIC_OK)
        return 1;
    close(fd);
    /* The engine looks for new segments at least every 100 ms. */
    do {
        usleep(10000);
        if (onic_onload_status_read((int)cfg->onload_fd, &st2) != ONIC_OK ||
            onic_time_ns() - t0 > 5000000000ull) {
            fprintf(stderr, "rank %u: the engine never looked at the bad segment\n", cfg->rank);
            return 1;
        }
    } while (st2.refused == st.refused);
    printf("rank %u: the engine looked at the bad segment and did not serve it\n", cfg->rank);
    return 0;
}

/* Rank 0 of badseg: pull from itself until the engine has refused rank 1,
 * and a little longer; every pull must succeed. */
static int run_selfpulls(const onic_config_t *cfg, onic_onload_client_t *c)
{
    enum { SIZE = 1 << 20 };
    uint8_t *a = malloc(SIZE), *b = malloc(SIZE);
    onic_onload_reg_t r = {5, (uint64_t)(uintptr_t)a, SIZE};
    onic_onload_status_t st;
    onic_onload_done_t d;
    uint64_t t0 = onic_time_ns(), after = 0, n = 0;
    int rc = 1;

    if (a == NULL || b == NULL || push_retry(c, ONIC_ONLOAD_CMD_REG, &r, sizeof(r)))
        goto out;
    for (size_t i = 0; i < SIZE; i++)
        a[i] = pull_byte(i);
    while (after < 20) {
        onic_onload_pull_t pl = {cfg->rank, 0, 5, 0, SIZE, (uint64_t)(uintptr_t)b, n};
        memset(b, 0, SIZE);
        if (pull_once(c, &pl, &d) || d.status != ONIC_OK || d.len != SIZE ||
            first_diff(b, a, SIZE) != SIZE || wait_done(c, ONIC_ONLOAD_EVT_READ, &d)) {
            fprintf(stderr, "rank 0: pull %llu from itself failed: %s\n", (unsigned long long)n,
                    onic_status_str(d.status));
            goto out;
        }
        n++;
        if (onic_onload_status_read((int)cfg->onload_fd, &st) != ONIC_OK ||
            onic_time_ns() - t0 > 10000000000ull)
            goto out;
        after += st.refused > 0;
    }
    printf("rank 0: %llu pulls from itself while the engine refused a segment\n",
           (unsigned long long)n);
    rc = 0;
out:
    free(a);
    free(b);
    return rc;
}

static int run_killed(const onic_config_t *cfg, onic_onload_client_t *c, int zombie)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    onic_onload_status_t st;
    uint64_t t0;
    uint32_t kind;
    size_t len;
    onic_status_t s;

    int rc = 0;

    if (cfg->rank == 0) {
        if (onic_onload_status_read((int)cfg->onload_fd, &st) != ONIC_OK)
            return 1;
        if (zombie)
            kill(getppid(), SIGSTOP); /* nobody reaps the engine now */
        kill((pid_t)st.pid, SIGKILL);
        if (zombie) {
            /* What the old liveness check saw: a pid that kill(pid, 0) finds. */
            rc = !await_state((pid_t)st.pid, 'Z') || kill((pid_t)st.pid, 0) != 0;
            rc |= onic_onload_status_alive(&st);
            printf("rank 0: the engine is a zombie; its status says %s\n",
                   onic_onload_status_alive(&st) ? "running" : "not running");
        }
    }
    t0 = onic_time_ns();
    /* Nothing will come: only the engine's death ends this wait. */
    s = onic_onload_client_wait(c, &kind, buf, sizeof(buf), &len, 5000000000ull);
    printf("rank %u: waiting for an event: %s after %llu ms\n", cfg->rank, onic_status_str(s),
           (unsigned long long)((onic_time_ns() - t0) / 1000000));
    fflush(stdout);
    if (zombie)
        kill(getppid(), SIGCONT);
    return s == ONIC_ERR_IO && rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_onload_client_t *c;
    onic_status_t s;
    int rc, nocma, zombie;

    if (argc < 2 || onic_config_read(&cfg) != ONIC_OK)
        return 2;
    if (strcmp(argv[1], "killed") == 0)
        signal(SIGTERM, SIG_IGN);
    zombie = argc == 3 && strcmp(argv[2], "zombie") == 0;
    if (strcmp(argv[1], "badseg") == 0 && cfg.rank == 1)
        return run_badseg(&cfg);
    /* Some ranks as if ONIC_ONLOAD_RMA=copy were set for them alone (as
     * where the kernel refuses the engine CMA on them, which a root
     * engine cannot be made to meet in a test). */
    nocma = strcmp(argv[1], "pull") == 0 && argc == 4;
    if (nocma && (strcmp(argv[3], "nocma") == 0 ||
                  (strcmp(argv[3], "nocma-owner") == 0 && cfg.rank % 2 == 0) ||
                  (strcmp(argv[3], "nocma-puller") == 0 && cfg.rank % 2 == 1)))
        cfg.onload_rma = ONIC_ONLOAD_RMA_COPY;
    s = onic_onload_client_open(&cfg, &c);
    if (s != ONIC_OK) {
        printf("rank %u: cannot reach the engine: %s\n", cfg.rank, onic_status_str(s));
        return 1;
    }
    if (strcmp(argv[1], "reopen") == 0) {
        for (int i = 0; i < 3; i++) {
            if (run_ping(&cfg, c, 100) != 0)
                return 1;
            onic_onload_client_close(c);
            s = onic_onload_client_open(&cfg, &c);
            if (s != ONIC_OK) {
                printf("rank %u: cannot reach the engine again: %s\n", cfg.rank,
                       onic_status_str(s));
                return 1;
            }
        }
    }
    if (strcmp(argv[1], "reopen") == 0)
        rc = run_ping(&cfg, c, 100);
    else if (strcmp(argv[1], "ping") == 0 && argc == 3)
        rc = run_ping(&cfg, c, strtoull(argv[2], NULL, 10));
    else if (strcmp(argv[1], "latency") == 0 && argc == 3)
        rc = run_latency(&cfg, c, strtoull(argv[2], NULL, 10));
    else if (strcmp(argv[1], "pull") == 0 && (argc == 3 || nocma))
        rc = run_pull(&cfg, c, (size_t)strtoull(argv[2], NULL, 10),
                      nocma && cfg.rank % 2 == 1 && strcmp(argv[3], "nocma-owner") != 0,
                      nocma && strcmp(argv[3], "nocma-puller") != 0);
    else if (strcmp(argv[1], "misuse") == 0)
        rc = run_misuse(&cfg, c);
    else if (strcmp(argv[1], "badseg") == 0)
        rc = run_selfpulls(&cfg, c) || run_ping(&cfg, c, 1000);
    else if (strcmp(argv[1], "vanish") == 0)
        rc = run_vanish(&cfg, c, zombie);
    else if (strcmp(argv[1], "killed") == 0)
        rc = run_killed(&cfg, c, zombie);
    else
        rc = 2;
    onic_onload_client_close(c);
    return rc;
}
