/* onic's one-sided MPI, tested through onicrun: `mpi_rma NAME...` runs the
 * named tests (or `all`) on every rank; each rank counts its failed checks
 * and the job fails if any rank's count is not zero. Every expectation is
 * computed. Works with 1 to 4 (or more) processes. */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_check.h"
#include "base/mem.h" /* onic_mem_fail_after */

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

/* A call that must return: one that waits for ever fails the job after
 * 20 s with what it means, rather than at the job's time limit. */
static const char *alarm_msg;
static size_t alarm_len;

static void alarm_fired(int sig)
{
    (void)sig;
    if (write(2, alarm_msg, alarm_len) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

static void alarm_in_20s(const char *msg)
{
    alarm_msg = msg;
    alarm_len = strlen(msg);
    signal(SIGALRM, alarm_fired);
    alarm(20);
}

/* MPI_Win_flush of one target, which must return. */
static int flush_one(int target, MPI_Win win)
{
    int rc;

    alarm_in_20s("mpi_rma: MPI_Win_flush of one target has not returned after 20 s (it waits "
                 "for more than it started?)\n");
    rc = MPI_Win_flush(target, win);
    alarm(0);
    return rc;
}

static int value(int owner, int i)
{
    return owner * 100000 + i * 7 + 1;
}

/* --- windows: creation, attributes, names, groups, keyvals -------------------------- */
static int deleted;

static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    CHECK(val == (void *)&deleted);
    CHECK(extra == (void *)&size);
    deleted++;
    return MPI_SUCCESS;
}

static void test_win(void)
{
    int buf[16], flag, *ip, key, len;
    MPI_Aint *sp;
    void *base, *mem;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Win win, w2, w0;
    MPI_Group g, wg;

    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(win != MPI_WIN_NULL);
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sp, &flag);
    CHECK(flag && *sp == (MPI_Aint)sizeof(buf));
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &ip, &flag);
    CHECK(flag && *ip == (int)sizeof(int));
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &ip, &flag);
    CHECK(flag && *ip == MPI_WIN_FLAVOR_CREATE);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &ip, &flag);
    CHECK(flag && (*ip == MPI_WIN_SEPARATE || *ip == MPI_WIN_UNIFIED));
    MPI_Win_get_name(win, name, &len);
    CHECK_EQ(len, 0);
    MPI_Win_set_name(win, "halo");
    MPI_Win_get_name(win, name, &len);
    CHECK(len == 4 && strcmp(name, "halo") == 0);
    MPI_Win_get_group(win, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Group_size(wg, &len);
    CHECK_EQ(len, size);
    MPI_Group_rank(wg, &len);
    CHECK_EQ(len, rank);
    MPI_Group_free(&wg);
    MPI_Group_free(&g);
    /* A keyval: set, get, replaced (the old value deleted), deleted at free. */
    deleted = 0;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &size);
    MPI_Win_get_attr(win, key, &base, &flag);
    CHECK_EQ(flag, 0);
    MPI_Win_set_attr(win, key, &deleted);
    MPI_Win_get_attr(win, key, &base, &flag);
    CHECK(flag && base == (void *)&deleted);
    MPI_Win_set_attr(win, key, &deleted);
    CHECK_EQ(deleted, 1);
    MPI_Win_free_keyval(&key);
    CHECK_EQ(key, MPI_KEYVAL_INVALID);
    /* Two windows at once, one allocated, one of no memory. */
    MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &w2);
    CHECK(mem != NULL);
    MPI_Win_get_attr(w2, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == mem);
    MPI_Win_get_attr(w2, MPI_WIN_CREATE_FLAVOR, &ip, &flag);
    CHECK(flag && *ip == MPI_WIN_FLAVOR_ALLOCATE);
    memset(mem, 0, 64 * sizeof(double));
    MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w0);
    MPI_Win_free(&w0);
    CHECK(w0 == MPI_WIN_NULL);
    MPI_Win_free(&w2);
    MPI_Win_free(&win);
    CHECK_EQ(deleted, 2);
    CHECK(win == MPI_WIN_NULL);
    /* Windows on a split communicator: ranks are its ranks. */
    {
        MPI_Comm half;
        int hr, hs, v = -1;

        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hs);
        MPI_Win_create(&v, sizeof(v), sizeof(v), MPI_INFO_NULL, half, &win);
        MPI_Win_fence(0, win);
        MPI_Put(&hr, 1, MPI_INT, (hr + 1) % hs, 0, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        CHECK_EQ(v, (hr + hs - 1) % hs);
        MPI_Win_free(&win);
        MPI_Comm_free(&half);
    }
}

/* --- fence: put and get, contiguous and derived, small and large -------------------- */
static void test_fence(void)
{
    enum { N = 64, BIG = 1 << 20 };
    int win_buf[2 * N], got[N], vec[2 * N];
    char *big, *bigget;
    MPI_Datatype vt;
    MPI_Win win, wb;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    for (int i = 0; i < 2 * N; i++)
        win_buf[i] = -1;
    MPI_Win_create(win_buf, sizeof(win_buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    /* Fences with nothing between them. */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        got[i] = value(rank, i);
    /* My values into the next rank's first half. */
    MPI_Put(got, N, MPI_INT, next, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(win_buf[i], value(prev, i));
    for (int i = N; i < 2 * N; i++)
        CHECK_EQ(win_buf[i], -1);
    /* Get the previous rank's first half back: what its predecessor put. */
    memset(got, 0, sizeof(got));
    MPI_Get(got, N, MPI_INT, prev, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(got[i], value((prev + size - 1) % size, i));
    /* Derived on both sides: every other int of vec to every other slot of
     * the target's second half (a vector there), then read back whole. */
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    for (int i = 0; i < 2 * N; i++)
        vec[i] = value(rank + 7, i);
    MPI_Put(vec, 1, vt, next, N, 1, vt, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(win_buf[N + i], i % 2 == 0 ? value(prev + 7, i) : -1);
    memset(vec, 0, sizeof(vec));
    MPI_Get(vec, N / 2, MPI_INT, next, N, 1, vt, win); /* contiguous here, strided there */
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        CHECK_EQ(vec[i], value(rank + 7, 2 * i));
    MPI_Type_free(&vt);
    /* Puts to oneself and MPI_PROC_NULL. */
    got[0] = 4242;
    MPI_Put(got, 1, MPI_INT, rank, 2 * N - 1, 1, MPI_INT, win);
    MPI_Put(got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK_EQ(win_buf[2 * N - 1], 4242);
    MPI_Win_free(&win);

    /* Over the inline limit: Portals moves it by the transport's RMA. */
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &big, &wb);
    bigget = malloc(BIG);
    for (int i = 0; i < BIG; i++) {
        big[i] = 0;
        bigget[i] = (char)(rank * 31 + i * 13);
    }
    MPI_Win_fence(0, wb);
    MPI_Put(bigget, BIG, MPI_CHAR, next, 0, BIG, MPI_CHAR, wb);
    MPI_Win_fence(0, wb);
    for (int i = 0; i < BIG; i += 997)
        CHECK_EQ(big[i], (char)(prev * 31 + i * 13));
    memset(bigget, 0, BIG);
    MPI_Get(bigget, BIG - 3, MPI_CHAR, next, 3, BIG - 3, MPI_CHAR, wb);
    MPI_Win_fence(0, wb);
    for (int i = 0; i < BIG - 3; i += 991)
        CHECK_EQ(bigget[i], (char)(rank * 31 + (i + 3) * 13));
    /* Between one message and the RMA path: several messages (gets too). */
    for (int i = 0; i < 10000; i++)
        bigget[i] = (char)(rank * 7 + i * 3 + 1);
    MPI_Put(bigget, 10000, MPI_CHAR, next, 100, 10000, MPI_CHAR, wb);
    MPI_Win_fence(0, wb);
    for (int i = 0; i < 10000; i++)
        if (big[100 + i] != (char)(prev * 7 + i * 3 + 1)) {
            CHECK_EQ(big[100 + i], (char)(prev * 7 + i * 3 + 1));
            break;
        }
    CHECK_EQ(big[99], (char)(prev * 31 + 99 * 13));
    CHECK_EQ(big[10100], (char)(prev * 31 + 10100 * 13));
    memset(bigget, 0, 10000);
    MPI_Get(bigget, 6000, MPI_CHAR, prev, 101, 6000, MPI_CHAR, wb);
    MPI_Win_fence(0, wb);
    for (int i = 0; i < 6000; i++)
        if (bigget[i] != (char)(((prev + size - 1) % size) * 7 + (i + 1) * 3 + 1)) {
            CHECK_EQ(bigget[i], (char)(((prev + size - 1) % size) * 7 + (i + 1) * 3 + 1));
            break;
        }
    MPI_Win_free(&wb);
    free(bigget);
}

/* --- accumulates: every operation against a computed result, atomicity ------------- */
static void test_acc(void)
{
    enum { N = 32, K = 300, M = 5000 };
    long long cell[N + 2], v[N], r[N], one = 1, res;
    double *d, dv[M], dr[M];
    int *ids, ic, cas_won = 0, flag_cell = 0;
    MPI_Datatype vt;
    MPI_Win win, wd, wf;

    for (int i = 0; i < N + 2; i++)
        cell[i] = 0;
    MPI_Win_create(cell, sizeof(cell), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    /* SUM from every rank into every rank's cells 0..N-1. */
    for (int i = 0; i < N; i++)
        v[i] = rank + i;
    for (int t = 0; t < size; t++)
        MPI_Accumulate(v, N, MPI_LONG_LONG, t, 0, N, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(cell[i], (long long)size * (size - 1) / 2 + (long long)size * i);
    /* Others may start the next epoch's updates once the fence is over:
     * look at the window before they do. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* MAX, then REPLACE through a derived target (every other cell). */
    for (int i = 0; i < N; i++)
        v[i] = 1000 * rank - i;
    MPI_Accumulate(v, N, MPI_LONG_LONG, (rank + 1) % size, 0, N, MPI_LONG_LONG, MPI_MAX, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        long long before = (long long)size * (size - 1) / 2 + (long long)size * i;
        long long mine = 1000LL * ((rank + size - 1) % size) - i;
        CHECK_EQ(cell[i], before > mine ? before : mine);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG_LONG, &vt);
    MPI_Type_commit(&vt);
    for (int i = 0; i < N / 2; i++)
        v[i] = -rank - 1 - i;
    MPI_Accumulate(v, N / 2, MPI_LONG_LONG, rank, 0, 1, vt, MPI_REPLACE, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i += 2)
        CHECK_EQ(cell[i], -rank - 1 - i / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Get_accumulate: SUM returns the old values; NO_OP only reads. */
    for (int i = 0; i < N; i++)
        v[i] = 1;
    if (rank == 0)
        MPI_Get_accumulate(v, N / 2, MPI_LONG_LONG, r, N / 2, MPI_LONG_LONG, size - 1, 0, 1, vt,
                           MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        for (int i = 0; i < N / 2; i++)
            CHECK_EQ(r[i], -(size - 1) - 1 - i);
    if (rank == size - 1)
        for (int i = 0; i < N; i += 2)
            CHECK_EQ(cell[i], -(size - 1) - 1 - i / 2 + 1);
    MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, r, N, MPI_LONG_LONG, rank, 0, N,
                       MPI_LONG_LONG, MPI_NO_OP, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(r[i], cell[i]);
    MPI_Type_free(&vt);
    MPI_Win_free(&win);

    /* Atomicity: every rank adds 1 to rank 0's one cell K times, under
     * shared locks; and fetch-and-add returns every count exactly once. */
    cell[0] = cell[1] = 0;
    MPI_Win_create(cell, 2 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    ids = malloc((size_t)K * sizeof(int) * (size_t)size);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < K; k++) {
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 0, 1, MPI_SUM, win);
        CHECK_EQ(flush_one(0, win), MPI_SUCCESS);
        ids[k] = (int)res;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)K * size, 1);
        MPI_Win_sync(win);
        CHECK_EQ(cell[0], (long long)K * size);
        CHECK_EQ(cell[1], (long long)K * size);
        for (int k = 0; k < K; k++)
            seen[ids[k]]++;
        for (int s = 1; s < size; s++) {
            MPI_Recv(ids, K, MPI_INT, s, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < K; k++)
                if (ids[k] >= 0 && ids[k] < K * size)
                    seen[ids[k]]++;
        }
        for (int i = 0; i < K * size; i++)
            if (seen[i] != 1) {
                CHECK_EQ(seen[i], 1);
                break;
            }
        free(seen);
    } else {
        MPI_Send(ids, K, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    free(ids);
    MPI_Win_free(&win);

    /* Compare and swap: exactly one rank turns 0 into its rank + 1. */
    MPI_Win_create(&flag_cell, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wf);
    MPI_Win_fence(0, wf);
    {
        int zero = 0, me = rank + 1, old = -5;
        MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, wf);
        MPI_Win_fence(0, wf);
        cas_won = old == 0;
        CHECK(old == 0 || (old >= 1 && old <= size));
    }
    MPI_Allreduce(&cas_won, &ic, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(ic, 1);
    if (rank == 0)
        CHECK(flag_cell >= 1 && flag_cell <= size);
    MPI_Win_free(&wf);

    /* MAXLOC on value-index pairs: the largest value wins, with its index. */
    {
        struct { double v; int i; } pair = {-1.0, -1}, mine = {rank * 1.5, rank};
        MPI_Win wp;

        MPI_Win_create(&pair, sizeof(pair), sizeof(pair), MPI_INFO_NULL, MPI_COMM_WORLD, &wp);
        MPI_Win_fence(0, wp);
        MPI_Accumulate(&mine, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, wp);
        MPI_Win_fence(0, wp);
        if (rank == 0) {
            CHECK(pair.v == (size - 1) * 1.5);
            CHECK_EQ(pair.i, size - 1);
        }
        MPI_Win_free(&wp);
    }

    /* MINLOC on pairs of ints, applied in place at the target: equal
     * values keep the smaller index (MPI 3.1, 5.9.4), and the pair after
     * the one targeted, the worst there is, stays as it was. */
    {
        int pairs[4] = {7, 1000, INT_MAX, INT_MAX}, mine[2] = {7, size - rank};
        MPI_Win wp;

        MPI_Win_create(pairs, sizeof(pairs), 2 * sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &wp);
        MPI_Win_fence(0, wp);
        MPI_Accumulate(mine, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MINLOC, wp);
        MPI_Win_fence(0, wp);
        if (rank == 0) {
            CHECK(pairs[0] == 7 && pairs[1] == 1);
            CHECK(pairs[2] == INT_MAX && pairs[3] == INT_MAX);
        }
        MPI_Win_free(&wp);
    }

    /* Many requests: M doubles (several slots' worth) summed from everyone. */
    MPI_Win_allocate(M * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &d, &wd);
    for (int i = 0; i < M; i++) {
        d[i] = 0.5;
        dv[i] = i + rank * 0.25;
    }
    MPI_Win_fence(0, wd);
    MPI_Get_accumulate(dv, M, MPI_DOUBLE, dr, M, MPI_DOUBLE, (rank + 1) % size, 0, M,
                       MPI_DOUBLE, MPI_SUM, wd);
    MPI_Win_fence(0, wd);
    for (int i = 0; i < M; i += 7) {
        int p = (rank + size - 1) % size;
        CHECK(d[i] == 0.5 + i + p * 0.25);
        CHECK(dr[i] == 0.5); /* one origin per target: it found the start value */
    }
    MPI_Win_free(&wd);
}

/* --- locks: exclusive contention, shared with flushes ------------------------------- */
static void test_lock(void)
{
    enum { K = 200 };
    long long counter = 0, c, arr[4] = {0, 0, 0, 0};
    MPI_Win win, wa;

    MPI_Win_create(&counter, sizeof(counter), sizeof(counter), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    /* Read, add, write back under an exclusive lock: a lost update would
     * show if two ranks ever held it at once. */
    for (int k = 0; k < K; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&c, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win);
        CHECK_EQ(flush_one(0, win), MPI_SUCCESS);
        c++;
        MPI_Put(&c, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK_EQ(counter, (long long)K * size);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);

    /* lock_all, puts to everyone flushed one by one, then gets. */
    MPI_Win_create(arr, sizeof(arr), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &wa);
    MPI_Win_lock_all(0, wa);
    for (int t = 0; t < size; t++) {
        long long x = 1000 + rank;
        MPI_Put(&x, 1, MPI_LONG_LONG, t, rank % 4 == 0 ? 0 : rank % 4, 1, MPI_LONG_LONG, wa);
        MPI_Win_flush_local(t, wa);
    }
    MPI_Win_flush_all(wa);
    MPI_Win_flush_local_all(wa);
    MPI_Win_unlock_all(wa);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(wa);
    if (size <= 4)
        for (int s = 0; s < size; s++)
            CHECK_EQ(arr[s % 4], 1000 + s);
    /* Request-based, in the same epoch: the data is there when the request
     * completes (after everyone has looked at arr). */
    MPI_Barrier(MPI_COMM_WORLD);
    {
        long long in = 5000 + rank, back = 0;
        MPI_Request q[2];
        int t = (rank + 1) % size;

        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, wa);
        MPI_Rput(&in, 1, MPI_LONG_LONG, t, 3, 1, MPI_LONG_LONG, wa, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        CHECK(q[0] == MPI_REQUEST_NULL);
        MPI_Rget(&back, 1, MPI_LONG_LONG, t, 3, 1, MPI_LONG_LONG, wa, &q[1]);
        MPI_Rput(&in, 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG_LONG, wa, &q[0]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        CHECK_EQ(back, 5000 + rank);
        MPI_Win_unlock(t, wa);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* MPI_MODE_NOCHECK: no lock message, the same data. */
    MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, MPI_MODE_NOCHECK, wa);
    MPI_Get(&c, 1, MPI_LONG_LONG, (rank + 1) % size, 0, 1, MPI_LONG_LONG, wa);
    MPI_Win_unlock((rank + 1) % size, wa);
    CHECK_EQ(c, 1000);
    MPI_Win_free(&wa);
}

/* --- post/start/complete/wait: a ring ---------------------------------------------- */
static void test_pscw(void)
{
    int cell[2] = {-1, -1}, flag = 0, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Group world, from, to;
    MPI_Win win;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &prev, &from);
    MPI_Group_incl(world, 1, &next, &to);
    MPI_Win_create(cell, sizeof(cell), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int round = 0; round < 3; round++) {
        int v = value(rank, round);
        MPI_Win_post(from, 0, win);
        MPI_Win_start(to, 0, win);
        MPI_Put(&v, 1, MPI_INT, next, round % 2, 1, MPI_INT, win);
        MPI_Win_complete(win);
        if (round == 2) {
            while (!flag)
                MPI_Win_test(win, &flag);
        } else {
            MPI_Win_wait(win);
        }
        CHECK_EQ(cell[round % 2], value(prev, round));
    }
    MPI_Win_free(&win);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
}

/* --- errors under MPI_ERRORS_RETURN: classes, and nothing written ------------------- */
static int err_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void test_errors(void)
{
    int mem[8 + 8], x = 77, r = 0, rc;
    MPI_Win win, bad;

    for (int i = 0; i < 16; i++)
        mem[i] = -3;
    /* The window is the first 8 ints; the 8 after it must never change. */
    MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    {
        MPI_Errhandler eh;
        MPI_Win_get_errhandler(win, &eh);
        CHECK(eh == MPI_ERRORS_RETURN);
    }
    /* No epoch yet. */
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_unlock(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_flush(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_unlock_all(win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_complete(win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_wait(win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_lock(99, 0, 0, win)), MPI_ERR_LOCKTYPE);
    CHECK_EQ(err_class(MPI_Win_fence(0x7, win)), MPI_ERR_ASSERT);
    /* MPI_Win_post takes MPI_MODE_NOCHECK, _NOSTORE and _NOPUT only. */
    CHECK_EQ(err_class(MPI_Win_post(MPI_GROUP_EMPTY, MPI_MODE_NOPRECEDE, win)), MPI_ERR_ASSERT);
    /* A fence followed by no operation starts no epoch: an exposure epoch
     * may follow (of no origins here, so its wait ends at once), and a
     * fence after it. */
    MPI_Win_fence(0, win);
    CHECK_EQ(err_class(MPI_Win_post(MPI_GROUP_EMPTY, 0, win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_wait(win)), MPI_SUCCESS);
    MPI_Win_fence(0, win);
    /* Out of the window: past its end, straddling it, a negative displacement. */
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 8, 1, MPI_INT, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(mem, 2, MPI_INT, 0, 7, 2, MPI_INT, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Get(&x, 1, MPI_INT, 0, -1, 1, MPI_INT, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Accumulate(&x, 1, MPI_INT, 0, 100, 1, MPI_INT, MPI_SUM, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Fetch_and_op(&x, &r, MPI_INT, 0, 8, MPI_SUM, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win)), MPI_ERR_RANK);
    /* Mismatched data, operations accumulates do not take. */
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 0, 2, MPI_INT, win)), MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win)),
             MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, win)),
             MPI_ERR_OP);
    CHECK_EQ(err_class(MPI_Accumulate(&x, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND, win)),
             MPI_ERR_OP);
    {
        struct { short v; int i; } si = {1, 2};
        CHECK_EQ(err_class(MPI_Accumulate(&si, 1, MPI_SHORT_INT, 0, 0, 1, MPI_SHORT_INT,
                                          MPI_MAXLOC, win)), MPI_ERR_TYPE);
    }
    /* A lock inside a fence epoch with operations is out of order. */
    MPI_Win_fence(0, win);
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)), MPI_ERR_RMA_SYNC);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win)), MPI_ERR_RMA_SYNC);
    /* Locking twice, unlocking what lock_all locked, freeing while locked. */
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(err_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_lock_all(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_fence(0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_free(&win)), MPI_ERR_RMA_SYNC);
    CHECK(win != MPI_WIN_NULL);
    MPI_Win_unlock(0, win);
    /* No memory for lock_all's requests: MPI_ERR_NO_MEM, nothing locked,
     * and the same call works once there is. */
    onic_mem_fail_after(0);
    rc = MPI_Win_lock_all(0, win);
    onic_mem_fail_after(-1);
    CHECK_EQ(err_class(rc), MPI_ERR_NO_MEM);
    CHECK_EQ(err_class(MPI_Win_lock_all(0, win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_unlock_all(win)), MPI_SUCCESS);
    MPI_Win_lock_all(0, win);
    if (size > 1)
        CHECK_EQ(err_class(MPI_Win_unlock(1, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Win_flush(size, win)), MPI_ERR_RANK);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Rank 0's first int got the good put (77) from someone; nothing else moved. */
    if (rank == 0)
        CHECK_EQ(mem[0], 77);
    for (int i = 1; i < 16; i++)
        CHECK_EQ(mem[i], -3);
    /* Rank 0 frees the window while rank 1 is still in a lock epoch on it:
     * rank 0 waits in MPI_Win_free and serves rank 1 meanwhile; rank 1's own
     * MPI_Win_free inside its epoch is an error, reported, and it ends the
     * epoch and frees after all. */
    if (size > 1) {
        int cell2[2] = {0, 0}, go = 0, two[2] = {5, 6};
        MPI_Win w2;

        MPI_Win_create(cell2, sizeof(cell2), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w2);
        MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN);
        if (rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w2);
            MPI_Send(&go, 1, MPI_INT, 0, 11, MPI_COMM_WORLD);
            MPI_Put(two, 1, MPI_INT, 0, 0, 1, MPI_INT, w2);
            CHECK_EQ(err_class(MPI_Win_free(&w2)), MPI_ERR_RMA_SYNC);
            CHECK(w2 != MPI_WIN_NULL);
            MPI_Accumulate(&two[1], 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, w2);
            MPI_Win_unlock(0, w2);
        } else if (rank == 0) {
            MPI_Recv(&go, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        CHECK_EQ(MPI_Win_free(&w2), MPI_SUCCESS);
        if (rank == 0) {
            CHECK_EQ(cell2[0], 5);
            CHECK_EQ(cell2[1], 6);
        }
    }
    /* A bad window handle: reported through MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bad = win + 1;
    CHECK_EQ(err_class(MPI_Win_fence(0, bad)), MPI_ERR_WIN);
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL)), MPI_ERR_WIN);
    bad = win;
    MPI_Win_free(&win);
    CHECK_EQ(err_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, bad)), MPI_ERR_WIN);
    CHECK_EQ(err_class(MPI_Win_free(&bad)), MPI_ERR_WIN);
    CHECK_EQ(err_class(MPI_Win_free(NULL)), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        CHECK_EQ(MPI_Error_string(MPI_ERR_RMA_RANGE, s, &len), MPI_SUCCESS);
        CHECK(strncmp(s, "MPI_ERR_RMA_RANGE", 17) == 0);
    }
}

/* --- request-based accumulates ------------------------------------------------------ */
static void test_racc(void)
{
    enum { K = 20 };
    long long cell[4] = {0, 0, 0, 0}, one = 1, got[2] = {-1, -1}, two[2] = {3, 4};
    int *seen = calloc((size_t)K * size, sizeof(int)), flag = 0, x = 1;
    MPI_Request q, qs[2];
    MPI_Win win;

    MPI_Win_create(cell, sizeof(cell), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    /* Every rank adds rank + 1 to cell 0 of every rank, K times; and takes
     * tickets from rank 0's cell 1 with a fetching SUM. */
    for (int k = 0; k < K; k++) {
        long long add = rank + 1, ticket = -1;

        for (int t = 0; t < size; t++) {
            CHECK_EQ(MPI_Raccumulate(&add, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, MPI_SUM,
                                     win, &q), MPI_SUCCESS);
            if (k % 2 == 0) {
                CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
            } else {
                CHECK_EQ(MPI_Test(&q, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                CHECK(flag);
            }
            CHECK(q == MPI_REQUEST_NULL);
        }
        CHECK_EQ(MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &ticket, 1, MPI_LONG_LONG, 0, 1, 1,
                                     MPI_LONG_LONG, MPI_SUM, win, &q), MPI_SUCCESS);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        /* Complete at its target: the ticket is here. */
        CHECK(ticket >= 0 && ticket < (long long)K * size);
        if (ticket >= 0 && ticket < (long long)K * size)
            seen[ticket]++;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(cell[0], (long long)K * size * (size + 1) / 2);
    if (rank == 0)
        CHECK_EQ(cell[1], (long long)K * size);
    {
        int *all = calloc((size_t)K * size, sizeof(int));
        MPI_Reduce(seen, all, K * size, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < K * size; i++)
                CHECK_EQ(all[i], 1); /* every ticket handed out exactly once */
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Two elements: REPLACE returns the old pair; NO_OP reads the new. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    CHECK_EQ(MPI_Rget_accumulate(two, 2, MPI_LONG_LONG, got, 2, MPI_LONG_LONG, rank, 2, 2,
                                 MPI_LONG_LONG, MPI_REPLACE, win, &qs[0]), MPI_SUCCESS);
    MPI_Wait(&qs[0], MPI_STATUS_IGNORE);
    CHECK_EQ(got[0], 0);
    CHECK_EQ(got[1], 0);
    CHECK_EQ(MPI_Rget_accumulate(NULL, 0, MPI_DATATYPE_NULL, got, 2, MPI_LONG_LONG, rank, 2, 2,
                                 MPI_LONG_LONG, MPI_NO_OP, win, &qs[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Raccumulate(&one, 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG_LONG,
                             MPI_SUM, win, &qs[1]), MPI_SUCCESS);
    MPI_Waitall(2, qs, MPI_STATUSES_IGNORE);
    CHECK_EQ(got[0], 3);
    CHECK_EQ(got[1], 4);
    /* No data: nothing to do, whatever the (empty) types. */
    {
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        CHECK_EQ(MPI_Raccumulate(&one, 1, empty, rank, 0, 1, empty, MPI_SUM, win, &q),
                 MPI_SUCCESS);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK_EQ(MPI_Accumulate(&one, 0, MPI_LONG_LONG, rank, 0, 0, MPI_LONG_LONG, MPI_SUM,
                                win), MPI_SUCCESS);
        MPI_Type_free(&empty);
    }
    /* Errors, with nothing written. */
    CHECK_EQ(err_class(MPI_Raccumulate(&one, 1, MPI_LONG_LONG, rank, 4, 1, MPI_LONG_LONG,
                                       MPI_SUM, win, &q)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Raccumulate(&one, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG,
                                       MPI_SUM, win, NULL)), MPI_ERR_ARG);
    CHECK_EQ(err_class(MPI_Raccumulate(&one, 1, MPI_LONG_LONG, rank, 0, 1, MPI_LONG_LONG,
                                       MPI_NO_OP, win, &q)), MPI_ERR_OP);
    CHECK_EQ(err_class(MPI_Raccumulate(&x, 1, MPI_INT, rank, 0, 1, MPI_LONG_LONG, MPI_SUM, win,
                                       &q)), MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, got, 1, MPI_LONG_LONG,
                                           size, 0, 1, MPI_LONG_LONG, MPI_SUM, win, &q)),
             MPI_ERR_RANK);
    MPI_Win_unlock(rank, win);
    CHECK_EQ(err_class(MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, got, 1, MPI_LONG_LONG, rank,
                                           0, 1, MPI_LONG_LONG, MPI_SUM, win, &q)),
             MPI_ERR_RMA_SYNC);
    CHECK_EQ(cell[2], 3);
    CHECK_EQ(cell[3], 4);
    MPI_Win_free(&win);
    free(seen);
}

/* --- shared memory windows ----------------------------------------------------------- */
static void test_shared(void)
{
    MPI_Comm node;
    MPI_Win win, w0, plain;
    MPI_Aint qsize, prev_end = 0;
    int *mine = NULL, qdu, flag, *ip, nrank, nsize, buf[2];
    void *qbase;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    /* Rank r has r + 1 ints. */
    CHECK_EQ(MPI_Win_allocate_shared((MPI_Aint)(nrank + 1) * sizeof(int), sizeof(int),
                                     MPI_INFO_NULL, node, &mine, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &ip, &flag);
    CHECK(flag && *ip == MPI_WIN_UNIFIED);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &ip, &flag);
    CHECK(flag && *ip == MPI_WIN_FLAVOR_SHARED);
    /* Contiguous, rank after rank; my base is the one allocate gave. */
    for (int r = 0; r < nsize; r++) {
        CHECK_EQ(MPI_Win_shared_query(win, r, &qsize, &qdu, &qbase), MPI_SUCCESS);
        CHECK_EQ(qsize, (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(int));
        CHECK_EQ(qdu, sizeof(int));
        if (r > 0)
            CHECK((MPI_Aint)(uintptr_t)qbase == prev_end);
        prev_end = (MPI_Aint)(uintptr_t)qbase + qsize;
        if (r == nrank)
            CHECK(qbase == (void *)mine);
    }
    /* Stores into my segment, loads from everyone's. */
    MPI_Win_fence(0, win);
    for (int i = 0; i <= nrank; i++)
        mine[i] = value(nrank, i);
    MPI_Win_fence(0, win);
    for (int r = 0; r < nsize; r++) {
        int *p;
        MPI_Win_shared_query(win, r, &qsize, &qdu, &p);
        for (int i = 0; i <= r; i++)
            CHECK_EQ(p[i], value(r, i));
    }
    /* A put lands in the same memory the loads see. */
    MPI_Win_fence(0, win);
    {
        int v = -nrank - 1, next = (nrank + 1) % nsize;
        MPI_Put(&v, 1, MPI_INT, next, next, 1, MPI_INT, win);
    }
    MPI_Win_fence(0, win);
    CHECK_EQ(mine[nrank], -((nrank + nsize - 1) % nsize) - 1);
    /* Errors. */
    CHECK_EQ(err_class(MPI_Win_shared_query(win, nsize, &qsize, &qdu, &qbase)), MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Win_shared_query(win, 0, NULL, &qdu, &qbase)), MPI_ERR_ARG);
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, node, &plain);
    MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Win_shared_query(plain, 0, &qsize, &qdu, &qbase)), MPI_ERR_RMA_FLAVOR);
    MPI_Win_free(&plain);
    MPI_Win_free(&win);
    /* Only the last rank has memory: MPI_PROC_NULL finds its segment. */
    CHECK_EQ(MPI_Win_allocate_shared(nrank == nsize - 1 ? 64 : 0, 1, MPI_INFO_NULL, node,
                                     &mine, &w0), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_shared_query(w0, MPI_PROC_NULL, &qsize, &qdu, &qbase), MPI_SUCCESS);
    CHECK_EQ(qsize, 64);
    CHECK_EQ(qdu, 1);
    if (nrank == nsize - 1)
        CHECK(qbase == (void *)mine);
    MPI_Win_free(&w0);
    MPI_Comm_free(&node);
}

/* --- dynamic windows ------------------------------------------------------------------ */
static void test_dynamic(void)
{
    enum { N = 16, GUARD = 8 };
    long long mem[N + GUARD], got[N], x, old = -1, *more = malloc(4 * sizeof(long long));
    MPI_Aint *addr = malloc((size_t)size * sizeof(MPI_Aint)), me;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, flag, *ip, buf[2];
    MPI_Datatype every_other;
    MPI_Win win, plain;

    for (int i = 0; i < N + GUARD; i++)
        mem[i] = value(rank, i);
    CHECK_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &ip, &flag);
    CHECK(flag && *ip == MPI_WIN_FLAVOR_DYNAMIC);
    /* The first N are the window; the GUARD after them must never change. */
    CHECK_EQ(MPI_Win_attach(win, mem, N * sizeof(long long)), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_attach(win, more, 4 * sizeof(long long)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_attach(win, mem + 2, sizeof(long long))), MPI_ERR_RMA_ATTACH);
    CHECK_EQ(err_class(MPI_Win_attach(win, mem, -1)), MPI_ERR_SIZE);
    CHECK_EQ(err_class(MPI_Win_detach(win, mem + 1)), MPI_ERR_RMA_ATTACH);
    CHECK_EQ(MPI_Win_detach(win, more), MPI_SUCCESS);
    /* Memory that starts where attached memory ends overlaps nothing. */
    CHECK_EQ(MPI_Win_attach(win, more, 2 * sizeof(long long)), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_attach(win, more + 2, 2 * sizeof(long long)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_attach(win, more + 1, 2 * sizeof(long long))),
             MPI_ERR_RMA_ATTACH);
    CHECK_EQ(MPI_Win_detach(win, more), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_detach(win, more + 2), MPI_SUCCESS);
    MPI_Get_address(mem, &me);
    MPI_Allgather(&me, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    /* Get the neighbour's window, then put into its second half through a
     * strided origin type (every other element of got). */
    CHECK_EQ(MPI_Get(got, N, MPI_LONG_LONG, next, addr[next], N, MPI_LONG_LONG, win),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Win_flush(next, win), MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK_EQ(got[i], value(next, i));
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has read before anyone writes */
    for (int i = 0; i < N; i++)
        got[i] = -1000 * rank - i;
    MPI_Type_vector(N / 4, 1, 2, MPI_LONG_LONG, &every_other);
    MPI_Type_commit(&every_other);
    CHECK_EQ(MPI_Put(got, 1, every_other, next, addr[next] + N / 2 * sizeof(long long), N / 4,
                     MPI_LONG_LONG, win), MPI_SUCCESS);
    /* Accumulate and fetch-and-op into element 0 from everyone; compare
     * and swap on element 1 where exactly one rank wins. */
    x = 1;
    for (int t = 0; t < size; t++)
        MPI_Accumulate(&x, 1, MPI_LONG_LONG, t, addr[t], 1, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Fetch_and_op(&x, &old, MPI_LONG_LONG, 0, addr[0], MPI_SUM, win);
    {
        long long cmp = value(0, 1), mine = -7 - rank, res = 0;
        MPI_Compare_and_swap(&mine, &cmp, &res, MPI_LONG_LONG, 0, addr[0] + sizeof(long long),
                             win);
        CHECK_EQ(MPI_Win_flush_all(win), MPI_SUCCESS);
        CHECK(res == cmp || (res <= -7 && res > -7 - size));
    }
    CHECK(old >= value(0, 0) && old < value(0, 0) + 2 * size);
    /* Outside every attached region: a range error at completion, and the
     * guard unchanged. */
    x = 99;
    CHECK_EQ(MPI_Put(&x, 1, MPI_LONG_LONG, next, addr[next] + N * sizeof(long long), 1,
                     MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_flush(next, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(MPI_Get(got, 2, MPI_LONG_LONG, next, addr[next] + (N - 1) * sizeof(long long), 2,
                     MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_flush(next, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(MPI_Win_flush(next, win), MPI_SUCCESS); /* the error was said once */
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mem[0], value(rank, 0) + size + (rank == 0 ? size : 0));
    if (rank == 0) {
        int won = 0;
        for (int s = 0; s < size; s++)
            won += mem[1] == -7 - s;
        CHECK_EQ(won, 1);
    }
    for (int i = 0; i < N / 4; i++)
        CHECK_EQ(mem[N / 2 + i], -1000 * prev - 2 * i);
    for (int i = N / 2 + N / 4; i < N + GUARD; i++)
        CHECK_EQ(mem[i], value(rank, i));
    /* Detached memory is out of the window for everyone. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_Win_detach(win, mem), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    MPI_Get(got, 1, MPI_LONG_LONG, next, addr[next], 1, MPI_LONG_LONG, win);
    CHECK_EQ(err_class(MPI_Win_unlock(next, win)), MPI_ERR_RMA_RANGE);
    MPI_Win_unlock(next, win);
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &plain);
    MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Win_attach(plain, mem, 8)), MPI_ERR_RMA_FLAVOR);
    CHECK_EQ(err_class(MPI_Win_detach(plain, mem)), MPI_ERR_RMA_FLAVOR);
    MPI_Win_free(&plain);
    MPI_Win_free(&win);
    MPI_Type_free(&every_other);
    free(addr);
    free(more);

    /* Regions attached side by side are one stretch of attached memory: an
     * operation may span them (MPI 3.1, 11.2.4), not the gap after them,
     * nor a region detached since. */
    {
        enum { M = 8 };
        static long long two[3 * M];
        long long in[2 * M], back[2 * M];
        MPI_Aint base;

        for (int i = 0; i < 3 * M; i++)
            two[i] = value(rank, i);
        CHECK_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        /* [0, M) and [M, 2M) adjacent, attached in the other order; [2M + 1, 3M)
         * after a gap of one element. */
        CHECK_EQ(MPI_Win_attach(win, two + M, M * sizeof(long long)), MPI_SUCCESS);
        CHECK_EQ(MPI_Win_attach(win, two + 2 * M + 1, (M - 1) * sizeof(long long)),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Win_attach(win, two, M * sizeof(long long)), MPI_SUCCESS);
        MPI_Get_address(two, &me);
        MPI_Allgather(&me, 1, MPI_AINT, addr = malloc((size_t)size * sizeof(MPI_Aint)), 1,
                      MPI_AINT, MPI_COMM_WORLD);
        base = addr[next];
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
        for (int i = 0; i < 2 * M; i++)
            in[i] = -100 * rank - i;
        CHECK_EQ(MPI_Put(in, 2 * M, MPI_LONG_LONG, next, base, 2 * M, MPI_LONG_LONG, win),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Win_flush(next, win), MPI_SUCCESS);
        CHECK_EQ(MPI_Accumulate(in, 4, MPI_LONG_LONG, next, base + (M - 2) * sizeof(long long),
                                4, MPI_LONG_LONG, MPI_SUM, win), MPI_SUCCESS);
        CHECK_EQ(MPI_Get(back, 2 * M, MPI_LONG_LONG, next, base, 2 * M, MPI_LONG_LONG, win),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Win_flush(next, win), MPI_SUCCESS);
        for (int i = 0; i < 2 * M; i++)
            CHECK_EQ(back[i], in[i] + (i >= M - 2 && i < M + 2 ? in[i - (M - 2)] : 0));
        /* Into the gap: refused, nothing written. */
        CHECK_EQ(MPI_Put(in, 2, MPI_LONG_LONG, next, base + (2 * M - 1) * sizeof(long long), 2,
                         MPI_LONG_LONG, win), MPI_SUCCESS);
        CHECK_EQ(err_class(MPI_Win_flush(next, win)), MPI_ERR_RMA_RANGE);
        MPI_Win_unlock(next, win);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(two[2 * M - 1], -100 * prev - (2 * M - 1));
        CHECK_EQ(two[2 * M], value(rank, 2 * M));
        /* The second region detached: the span is no longer attached. */
        CHECK_EQ(MPI_Win_detach(win, two + M), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
        MPI_Get(back, M + 1, MPI_LONG_LONG, next, base, M + 1, MPI_LONG_LONG, win);
        CHECK_EQ(err_class(MPI_Win_unlock(next, win)), MPI_ERR_RMA_RANGE);
        MPI_Win_unlock(next, win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_free(&win);
        free(addr);
    }
}

/* --- bypass (only with onicrun --onload): puts and gets while the target
 * computes without MPI calls ------------------------------------------------------------ */
static unsigned char bpattern(size_t i, int salt)
{
    return (unsigned char)((i * 131u + 7u + (unsigned)salt) | 1u); /* never 0 */
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_bypass(void)
{
    enum { BIG = 1 << 20 };
    static uint64_t fence_word;
    unsigned char *mem, *buf = malloc(BIG);
    MPI_Win win;

    if (size < 2) {
        free(buf);
        return;
    }
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (size_t i = 0; i < BIG; i++)
        mem[i] = bpattern(i, 0);
    if (rank == 0)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* Rank 1 computes from here on: the engine alone serves these. */
        MPI_Get(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
        MPI_Win_flush(1, win);
        for (size_t i = 0; i < BIG; i += 4093)
            CHECK_EQ(buf[i], bpattern(i, 0));
        for (size_t i = 0; i < BIG; i++)
            buf[i] = bpattern(i, 1);
        MPI_Put(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
        MPI_Win_flush(1, win);
    } else if (rank == 1) {
        volatile unsigned char *v = mem;
        size_t good = 0;
        double t0 = now_s();

        /* No MPI call until all of rank 0's put is seen (the engine writes
         * in order, so a byte that is right stays right). */
        while (good < BIG && now_s() - t0 < 20.0) {
            __atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
            while (good < BIG && v[good] == bpattern(good, 1))
                good++;
        }
        if (good < BIG)
            fprintf(stderr, "rank 1: only %zu of %d bytes of the put arrived in 20 s without "
                    "MPI calls\n", good, BIG);
        CHECK_EQ(good, BIG);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Win_unlock(1, win);
    MPI_Win_free(&win);
    free(buf);
}

/* --- windows in shared memory (MPI_Win_allocate on one node) --------------------- */
/* --mixed-shm: rank 1 alone runs with ONIC_MPI_WIN_SHM=0; the members agree
 * on message windows for all. */
static int mixed_shm;

/* Locks are granted in the order asked: while rank 0 holds rank 0's lock,
 * rank 1 asks for it exclusively and rank 2 shared, each saying so first;
 * rank 0 lets them wait well past that, unlocks and at once locks again,
 * and by then each must have had the lock and left its mark (a lock that
 * goes to whoever grabs it first goes back to rank 0, and a process that
 * loops so can shut the others out for good). cells: [1] rank 1's mark,
 * [2] rank 2's. */
static void shm_fair(MPI_Win win)
{
    long long c[3] = {0, 0, 0}, mark = 1;
    int asking = size > 2 ? 2 : 1;

    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < asking; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usleep(150000);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(c, 3, MPI_LONG_LONG, 0, 0, 3, MPI_LONG_LONG, win);
        MPI_Win_unlock(0, win);
        CHECK_EQ(c[1], 1);
        if (size > 2)
            CHECK_EQ(c[2], 1);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank <= 2) {
            MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
            MPI_Win_lock(rank == 1 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
            MPI_Accumulate(&mark, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, MPI_REPLACE,
                           win);
            MPI_Win_unlock(0, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A holder keeps the others out: rank 1 takes rank 0's lock (shared, then
 * exclusive), tells rank 2, waits well past that and only then leaves its
 * mark and unlocks; rank 2's exclusive (then shared) lock must come after,
 * so it finds the mark. cells: [3] the mark. */
static void shm_exclusion(MPI_Win win)
{
    static const int held[2] = {MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE};
    long long mark, seen;

    for (int k = 0; k < 2; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            mark = k + 1;
            MPI_Win_lock(held[k], 0, 0, win);
            MPI_Send(NULL, 0, MPI_BYTE, 2, 10, MPI_COMM_WORLD);
            usleep(150000);
            MPI_Put(&mark, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, win);
            MPI_Win_unlock(0, win);
        } else if (rank == 2) {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_lock(held[1 - k], 0, 0, win);
            MPI_Get(&seen, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, win);
            MPI_Win_unlock(0, win);
            CHECK_EQ(seen, k + 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Shared holders hold it together: rank 2's shared lock is granted while
 * rank 1 still holds its own, which it gives back only once rank 2 says it
 * has it (a shared lock held alone would wait for ever: the alarm). */
static void shm_shared_together(MPI_Win win)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Send(NULL, 0, MPI_BYTE, 2, 11, MPI_COMM_WORLD);
        alarm_in_20s("mpi_rma: a shared lock was not granted while another process held the "
                     "lock shared (after 20 s)\n");
        MPI_Recv(NULL, 0, MPI_BYTE, 2, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        alarm(0);
        MPI_Win_unlock(0, win);
    } else if (rank == 2) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 12, MPI_COMM_WORLD);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Accumulates of more shapes, through fences: MINLOC on MPI_2INT pairs
 * (the smaller index on a tie), a get-accumulate whose origin and result
 * types start 8 bytes into their buffers, and a strided get-accumulate of
 * 300 elements, more than one request's worth, whose fetched values must
 * come back in order. */
static void shm_acc_more(void)
{
    enum { M = 300, AT = 10 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long *mem, ob[3] = {-1, 10 + rank, 20 + rank}, rb[3] = {-9, -9, -9}, *in, *out;
    struct { int v, i; } lo = {rank == size - 1 ? 3 : 5, rank}, tie = {7, rank},
                         init = {INT_MAX, -1};
    MPI_Datatype at8, strided;
    MPI_Aint disp8 = 8;
    int one = 1;
    MPI_Win win;

    CHECK_EQ(MPI_Win_allocate((AT + 2 * M) * sizeof(long long), sizeof(long long),
                              MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    memcpy(&mem[0], &init, sizeof(init));
    memcpy(&mem[1], &init, sizeof(init));
    for (int i = AT; i < AT + 2 * M; i++)
        mem[i] = value(rank, i);
    MPI_Type_create_hindexed(1, &one, &disp8, MPI_LONG_LONG, &at8);
    MPI_Type_commit(&at8);
    MPI_Type_vector(M, 1, 2, MPI_LONG_LONG, &strided);
    MPI_Type_commit(&strided);
    in = malloc(M * sizeof(long long));
    out = malloc(M * sizeof(long long));
    for (int i = 0; i < M; i++)
        in[i] = (rank + 1) * 1000LL + i;
    MPI_Win_fence(0, win);
    MPI_Accumulate(&lo, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MINLOC, win);
    MPI_Accumulate(&tie, 1, MPI_2INT, 0, 1, 1, MPI_2INT, MPI_MINLOC, win);
    MPI_Get_accumulate(ob, 2, at8, rb, 2, at8, right, 2, 2, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Get_accumulate(in, M, MPI_LONG_LONG, out, M, MPI_LONG_LONG, right, AT, 1, strided,
                       MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        memcpy(&lo, &mem[0], sizeof(lo));
        memcpy(&tie, &mem[1], sizeof(tie));
        CHECK_EQ(lo.v, 3);
        CHECK_EQ(lo.i, size - 1);
        CHECK_EQ(tie.v, 7);
        CHECK_EQ(tie.i, 0);
    }
    CHECK_EQ(rb[0], -9);
    CHECK_EQ(rb[1], 0);
    CHECK_EQ(rb[2], 0);
    CHECK_EQ(mem[2], 10 + left);
    CHECK_EQ(mem[3], 20 + left);
    for (int i = 0; i < M; i++) {
        CHECK_EQ(out[i], value(right, AT + 2 * i));
        CHECK_EQ(mem[AT + 2 * i], value(rank, AT + 2 * i) + (left + 1) * 1000LL + i);
        CHECK_EQ(mem[AT + 2 * i + 1], value(rank, AT + 2 * i + 1));
    }
    MPI_Type_free(&at8);
    MPI_Type_free(&strided);
    free(in);
    free(out);
    MPI_Win_free(&win);
}

/* Post/start between neighbours: this rank's window exposed to its left
 * neighbour, an access epoch open to its right one (the groups go at once:
 * the window keeps their ranks). */
static void pscw_neighbours(MPI_Win win)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, g;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &g);
    MPI_Win_post(g, 0, win);
    MPI_Group_free(&g);
    MPI_Group_incl(world, 1, &right, &g);
    MPI_Win_start(g, 0, win);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
}

/* The synchronisations and request-based calls on a window of `cells`
 * long longs at mem, all zero: post/start/complete/wait around a put to
 * the right neighbour, MPI_MODE_NOCHECK, MPI_Rput / MPI_Raccumulate /
 * MPI_Rget_accumulate, and an operation outside any epoch. */
static void shm_sync(MPI_Win win, long long *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long x = 70 + rank, back = -1, one = 1;
    MPI_Request q[3];

    pscw_neighbours(win);
    MPI_Put(&x, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    CHECK_EQ(mem[0], 70 + left);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, win);
    MPI_Rput(&x, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, win, &q[0]);
    MPI_Raccumulate(&one, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, MPI_SUM, win, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &back, 1, MPI_LONG_LONG, right, 2, 1,
                        MPI_LONG_LONG, MPI_SUM, win, &q[2]);
    MPI_Wait(&q[2], MPI_STATUS_IGNORE);
    CHECK_EQ(back, 1);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mem[1], 70 + left);
    CHECK_EQ(mem[2], 2);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Put(&x, 1, MPI_LONG_LONG, right, 3, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_SYNC);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mem[3], 0);
}

/* Descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* Segments of different sizes, rank 1's empty: each from a cache line,
 * its last byte reachable and the next one refused; and the window's
 * making and freeing leave no descriptor open (the memory's, rank 0's
 * socket). */
static void shm_layout(void)
{
    int fds = open_fds();
    MPI_Aint mine = rank == 1 ? 0 : 8 + 24 * rank;
    unsigned char *mem = NULL, b = 0xa5, got = 0;
    MPI_Win win;
    int right = (rank + 1) % size;
    MPI_Aint rsize = right == 1 ? 0 : 8 + 24 * right;

    CHECK_EQ(MPI_Win_allocate(mine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    if (mine > 0)
        CHECK_EQ((uintptr_t)mem % 64, 0);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    if (rsize > 0) {
        CHECK_EQ(MPI_Put(&b, 1, MPI_BYTE, right, rsize - 1, 1, MPI_BYTE, win), MPI_SUCCESS);
        MPI_Win_flush(right, win);
        CHECK_EQ(MPI_Get(&got, 1, MPI_BYTE, right, rsize - 1, 1, MPI_BYTE, win), MPI_SUCCESS);
        MPI_Win_flush(right, win);
        CHECK_EQ(got, 0xa5);
    }
    CHECK_EQ(err_class(MPI_Put(&b, 1, MPI_BYTE, right, rsize, 1, MPI_BYTE, win)),
             MPI_ERR_RMA_RANGE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mine > 0)
        CHECK_EQ(mem[mine - 1], 0xa5);
    MPI_Win_free(&win);
    CHECK_EQ(open_fds(), fds);
}

/* A put or get on a window in shared memory makes every check in one test
 * before its copy (rma.c): each one that fails must fail as the general
 * path's does and write nothing -- past the end, straddling it, a negative
 * displacement and one whose byte offset overflows, a rank outside the
 * group, no epoch (none open, a lock on another rank, a PSCW epoch ended),
 * sizes that differ, a negative count, an uncommitted datatype, a freed
 * window -- while what passes is exact: the segment's last element, zero
 * bytes, MPI_PROC_NULL, types whose data starts past their address on
 * either side, a strided type. Each rank works on its right neighbour,
 * whose segment lies between two others in the shared mapping: a check
 * that let a byte through would land in one of them. Run with the window
 * in shared memory and as messages (ONIC_MPI_WIN_SHM=0): the same answers. */
static void shm_checks(void)
{
    enum { N = 8 };
    long long *mem, v[N + 2], got[N + 2];
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int far = (rank + 2) % size, *model, flag_set = 0;
    MPI_Datatype late, strided, loose;
    MPI_Win win, freed;

    CHECK_EQ(MPI_Win_allocate(N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < N; i++)
        mem[i] = -9;
    for (int i = 0; i < N + 2; i++)
        v[i] = 100 * (rank + 1) + i;
    /* Two elements that start one element past the type's address. */
    {
        int two = 2;
        MPI_Aint at = sizeof(long long);
        MPI_Type_create_hindexed(1, &two, &at, MPI_LONG_LONG, &late);
        MPI_Type_commit(&late);
    }
    MPI_Type_vector(2, 1, 2, MPI_LONG_LONG, &strided);
    MPI_Type_commit(&strided);
    MPI_Type_contiguous(2, MPI_LONG_LONG, &loose); /* never committed */
    MPI_Barrier(MPI_COMM_WORLD);

    /* No epoch. */
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_SYNC);
    /* A lock on one rank opens no epoch to another. */
    if (size > 2) {
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
        CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, far, 0, 1, MPI_LONG_LONG, win)),
                 MPI_ERR_RMA_SYNC);
        MPI_Win_unlock(right, win);
    }
    /* A PSCW epoch to the right neighbour: open, then ended. */
    pscw_neighbours(win);
    CHECK_EQ(err_class(MPI_Put(&v[5], 1, MPI_LONG_LONG, right, 5, 1, MPI_LONG_LONG, win)),
             MPI_SUCCESS);
    if (size > 2)
        CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, far, 0, 1, MPI_LONG_LONG, win)),
                 MPI_ERR_RMA_SYNC);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    CHECK_EQ(mem[5], 100 * (left + 1) + 5);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_SYNC);

    MPI_Win_lock_all(0, win);
    /* Range. */
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, N, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_LONG_LONG, right, N - 1, 2, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_LONG_LONG, right, -1, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, N + 1, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_RANGE);
    /* Byte offsets that wrap: to a negative one, and to 8 (cell 1). */
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, ((MPI_Aint)1 << 60) + 1, 1,
                               MPI_LONG_LONG, win)), MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, ((MPI_Aint)1 << 61) + 1, 1,
                               MPI_LONG_LONG, win)), MPI_ERR_RMA_RANGE);
    /* A negative displacement is out even where the type's data start
     * brings the bytes back inside. */
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_LONG_LONG, right, -1, 1, late, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_LONG_LONG, right, N - 2, 1, late, win)),
             MPI_ERR_RMA_RANGE); /* its data starts one element later: past the end */
    /* Rank, sizes, counts, types. */
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_LONG_LONG, -7, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 2, MPI_LONG_LONG, win)),
             MPI_ERR_TYPE);
    /* One element each side, of types of other sizes (the same count does
     * not make the same type). */
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 1, MPI_INT, win)), MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_INT, right, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Put(v, -1, MPI_LONG_LONG, right, 0, -1, MPI_LONG_LONG, win)),
             MPI_ERR_COUNT);
    CHECK_EQ(err_class(MPI_Put(v, 1, loose, right, 0, 1, loose, win)), MPI_ERR_TYPE);
    CHECK_EQ(err_class(MPI_Get(got, 2, MPI_LONG_LONG, right, 0, 1, loose, win)), MPI_ERR_TYPE);
    /* Nothing written by any of them, here or in a neighbouring segment:
     * every cell as it was but the PSCW epoch's. */
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK_EQ(mem[i], i == 5 ? 100 * (left + 1) + 5 : -9);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Accepted: two ints for a long long, late data on either side (the
     * first's cell 7 then written again, after a flush: puts to one cell
     * in one epoch are not ordered), the last element, nothing, nobody. */
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_INT, right, 0, 1, MPI_LONG_LONG, win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Put(v, 1, late, right, N - 2, 2, MPI_LONG_LONG, win)),
             MPI_SUCCESS);
    MPI_Win_flush(right, win);
    CHECK_EQ(err_class(MPI_Put(v, 0, MPI_LONG_LONG, right, N, 0, MPI_LONG_LONG, win)),
             MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, MPI_PROC_NULL, N + 5, 1, MPI_LONG_LONG,
                               win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Put(&v[7], 1, MPI_LONG_LONG, right, N - 1, 1, MPI_LONG_LONG, win)),
             MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_LONG_LONG, right, 1, 1, late, win)), MPI_SUCCESS);
    MPI_Win_flush(right, win);
    for (int i = 0; i < N + 2; i++)
        got[i] = -1;
    CHECK_EQ(err_class(MPI_Get(got, 1, late, right, 1, 2, MPI_LONG_LONG, win)), MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Get(&got[4], 2, MPI_LONG_LONG, right, 2, 1, late, win)),
             MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Get(&got[6], 1, strided, right, 4, 1, strided, win)), MPI_SUCCESS);
    MPI_Win_flush(right, win);
    {
        /* The right neighbour's cells (written by this rank above): 1 -9,
         * 2 and 3 v[0] and v[1], 4 -9, 6 v[1]. */
        long long base = 100 * (rank + 1);
        CHECK_EQ(got[0], -1);
        CHECK_EQ(got[1], -9);
        CHECK_EQ(got[2], base + 0);
        CHECK_EQ(got[3], -1);
        CHECK_EQ(got[4], base + 1);
        CHECK_EQ(got[5], -9);
        CHECK_EQ(got[6], -9);
        CHECK_EQ(got[7], -1); /* the stride's gap */
        CHECK_EQ(got[8], base + 1);
        CHECK_EQ(got[9], -1);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    {
        long long base = 100 * (left + 1);
        /* 0: two ints' 8 bytes; 2, 3: the late target; 5: PSCW; 6: the
         * late origin (then 7, overwritten: the last element). */
        CHECK_EQ(mem[0], base + 0);
        CHECK_EQ(mem[1], -9);
        CHECK_EQ(mem[2], base + 0);
        CHECK_EQ(mem[3], base + 1);
        CHECK_EQ(mem[4], -9);
        CHECK_EQ(mem[5], base + 5);
        CHECK_EQ(mem[6], base + 1);
        CHECK_EQ(mem[7], base + 7);
    }
    /* A fence epoch: a rank just past the group; a lock once an operation
     * has started in it; a contiguous origin into a strided target
     * (cells 4 and 6, not 5), and the other way round. */
    MPI_Win_fence(0, win);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, win)),
             MPI_ERR_RANK);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win)),
             MPI_SUCCESS);
    CHECK_EQ(err_class(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win)), MPI_ERR_RMA_SYNC);
    CHECK_EQ(err_class(MPI_Put(&v[2], 2, MPI_LONG_LONG, right, 4, 1, strided, win)),
             MPI_SUCCESS);
    /* and a strided origin into a contiguous target: v[0] and v[2] */
    CHECK_EQ(err_class(MPI_Put(v, 1, strided, right, 2, 2, MPI_LONG_LONG, win)), MPI_SUCCESS);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK_EQ(mem[2], 100 * (left + 1) + 0);
    CHECK_EQ(mem[3], 100 * (left + 1) + 2);
    CHECK_EQ(mem[4], 100 * (left + 1) + 2);
    CHECK_EQ(mem[5], 100 * (left + 1) + 5);
    CHECK_EQ(mem[6], 100 * (left + 1) + 3);
    /* MPI_Isends wait in a bundle that the process's next MPI call sends
     * (over ofi, the second to a peer and those after it): a put or get
     * too. Rank 0 makes no other call until rank 1 has received both and
     * said so in rank 0's window (in shared memory, where a get is
     * complete when it returns). */
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag_set);
    if (size > 1 && flag_set && *model == MPI_WIN_UNIFIED) {
        long long flag = 0;
        int x[2] = {42, 43}, y[2] = {0, 0};
        MPI_Request sr[2];

        MPI_Win_lock_all(0, win);
        if (rank == 0) {
            double t0 = now_s();
            MPI_Isend(&x[0], 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &sr[0]);
            MPI_Isend(&x[1], 1, MPI_INT, 1, 78, MPI_COMM_WORLD, &sr[1]);
            while (flag != 1 && now_s() - t0 < 5.0)
                MPI_Get(&flag, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win);
            CHECK_EQ(flag, 1);
            MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
        } else if (rank == 1) {
            flag = 1;
            MPI_Recv(&y[0], 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&y[1], 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_EQ(y[0], 42);
            CHECK_EQ(y[1], 43);
            MPI_Put(&flag, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, win);
            MPI_Win_flush(0, win);
        }
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* A freed window: reported through MPI_COMM_WORLD's handler. */
    freed = win;
    MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(err_class(MPI_Put(v, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, freed)),
             MPI_ERR_WIN);
    CHECK_EQ(err_class(MPI_Get(got, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, freed)),
             MPI_ERR_WIN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&late);
    MPI_Type_free(&strided);
    MPI_Type_free(&loose);
}

/* With ONIC_MPI_WIN_SHM at its default, an MPI_Win_allocate window of
 * processes on one node is in shared memory and its operations are loads
 * and stores by the origin; with 0 they are messages. Both must give the
 * same answers: this test runs either way and checks the model each gives. */
static void test_shm(void)
{
    enum { N = 16, K = 200 };
    const char *env = getenv("ONIC_MPI_WIN_SHM");
    int direct = mixed_shm ? 0 : env == NULL || strcmp(env, "0") != 0;
    long long *mem, one = 1, res, c, v[N], got[N];
    int *ids, *model, flag, cas_won = 0, right = (rank + 1) % size;
    MPI_Datatype every_other;
    MPI_Win win;

    /* cells: 0..N-1 puts and gets, N..2N-1 accumulates, 2N counter, 2N+1
     * fetch-and-add, 2N+2 compare-and-swap, 2N+3 the target's watch cell,
     * 2N+4..2N+5 a guard the range errors must not touch */
    CHECK_EQ(MPI_Win_allocate((2 * N + 6) * sizeof(long long), sizeof(long long),
                              MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == (direct ? MPI_WIN_UNIFIED : MPI_WIN_SEPARATE));
    for (int i = 0; i < 2 * N + 6; i++)
        CHECK_EQ(mem[i], 0); /* MPI_Win_allocate's memory starts zeroed here */
    mem[2 * N + 4] = mem[2 * N + 5] = -9;

    /* Fence: a put to the right neighbour, a strided get back from it, and
     * a put to myself whose origin lies in the window (overlapping). */
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        v[i] = value(rank, i);
    MPI_Put(v, N, MPI_LONG_LONG, right, 0, N, MPI_LONG_LONG, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(mem[i], value((rank + size - 1) % size, i));
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG_LONG, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Get(got, N / 2, MPI_LONG_LONG, right, 1, 1, every_other, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        CHECK_EQ(got[i], value(rank, 1 + 2 * i));
    MPI_Put(&mem[0], N - 1, MPI_LONG_LONG, rank, 1, N - 1, MPI_LONG_LONG, win);
    MPI_Win_fence(0, win);
    for (int i = 1; i < N; i++)
        CHECK_EQ(mem[i], value((rank + size - 1) % size, i - 1));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Accumulates from everyone into everyone: SUM, then MAX through a
     * strided target, then a NO_OP read. */
    for (int i = 0; i < N; i++)
        v[i] = rank + i;
    for (int t = 0; t < size; t++)
        MPI_Accumulate(v, N, MPI_LONG_LONG, t, N, N, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(mem[N + i], (long long)size * (size - 1) / 2 + (long long)size * i);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N / 2; i++)
        v[i] = 1000000LL * (rank + 1) + i;
    MPI_Accumulate(v, N / 2, MPI_LONG_LONG, right, N, 1, every_other, MPI_MAX, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(mem[N + i], i % 2 ? (long long)size * (size - 1) / 2 + (long long)size * i
                                   : 1000000LL * ((rank + size - 1) % size + 1) + i / 2);
    MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, got, N, MPI_LONG_LONG, right, N, N,
                       MPI_LONG_LONG, MPI_NO_OP, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK_EQ(got[i], i % 2 ? (long long)size * (size - 1) / 2 + (long long)size * i
                               : 1000000LL * (rank + 1) + i / 2);
    MPI_Type_free(&every_other);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* Passive target, contended: an exclusive read-add-write counter (a
     * lost update would show), accumulates and fetch-and-adds under shared
     * locks (every fetched count exactly once), one compare-and-swap winner. */
    ids = malloc((size_t)K * sizeof(int) * (size_t)size);
    for (int k = 0; k < K; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&c, 1, MPI_LONG_LONG, 0, 2 * N, 1, MPI_LONG_LONG, win);
        CHECK_EQ(flush_one(0, win), MPI_SUCCESS);
        c++;
        MPI_Put(&c, 1, MPI_LONG_LONG, 0, 2 * N, 1, MPI_LONG_LONG, win);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 0, 2 * N + 1, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        ids[k] = (int)res;
    }
    MPI_Win_lock_all(0, win);
    {
        long long mine = rank + 1, zero = 0, old = -1;
        MPI_Compare_and_swap(&mine, &zero, &old, MPI_LONG_LONG, 0, 2 * N + 2, win);
        MPI_Win_flush_all(win);
        cas_won = old == 0;
        CHECK(old == 0 || (old >= 1 && old <= size));
    }
    MPI_Win_unlock_all(win);
    MPI_Allreduce(MPI_IN_PLACE, &cas_won, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(cas_won, 1);
    if (rank == 0) {
        char *seen = calloc((size_t)K * size, 1);

        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK_EQ(mem[2 * N], (long long)K * size);
        CHECK_EQ(mem[2 * N + 1], (long long)K * size);
        MPI_Win_unlock(0, win);
        for (int s = 0; s < size; s++) {
            if (s > 0)
                MPI_Recv(ids, K, MPI_INT, s, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < K; k++)
                if (ids[k] >= 0 && ids[k] < K * size)
                    seen[ids[k]]++;
        }
        for (int i = 0; i < K * size; i++)
            CHECK_EQ(seen[i], 1);
        free(seen);
    } else {
        MPI_Send(ids, K, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
    free(ids);

    /* Out of the window: MPI_ERR_RMA_RANGE, and the guard after it intact. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    CHECK_EQ(err_class(MPI_Put(v, 2, MPI_LONG_LONG, right, 2 * N + 5, 2, MPI_LONG_LONG, win)),
             MPI_ERR_RMA_RANGE);
    CHECK_EQ(err_class(MPI_Accumulate(v, 1, MPI_LONG_LONG, right, 2 * N + 6, 1, MPI_LONG_LONG,
                                      MPI_SUM, win)), MPI_ERR_RMA_RANGE);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mem[2 * N + 4], -9);
    CHECK_EQ(mem[2 * N + 5], -9);

    /* With the window in shared memory, a passive-target epoch needs
     * nothing of its target: rank 0 computes, making no MPI call, until
     * every other rank's lock, accumulate and unlock have landed. */
    if (direct && size > 1) {
        if (rank == 0) {
            volatile long long *watch = &mem[2 * N + 3];
            double t0 = now_s();

            MPI_Barrier(MPI_COMM_WORLD);
            while (*watch != (long long)(size - 1) * K && now_s() - t0 < 20.0)
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
            if (*watch != (long long)(size - 1) * K)
                fprintf(stderr, "rank 0: the others' accumulates reached %lld of %lld in 20 s "
                        "without MPI calls here\n", *watch, (long long)(size - 1) * K);
            CHECK_EQ(*watch, (long long)(size - 1) * K);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < K; k++) {
                MPI_Win_lock(k % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win);
                MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 2 * N + 3, 1, MPI_LONG_LONG, MPI_SUM,
                               win);
                MPI_Win_unlock(0, win);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);

    CHECK_EQ(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    if (size > 1)
        shm_fair(win);
    if (size > 2) {
        shm_exclusion(win);
        shm_shared_together(win);
    }
    MPI_Win_free(&win);
    CHECK_EQ(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    shm_sync(win, mem);
    MPI_Win_free(&win);
    shm_acc_more();
    shm_layout();
    shm_checks();
}

/* Accumulates on MPI_SHORT_INT, whose elements have a gap between the
 * short and the int: MPI_REPLACE writes each element whole and leaves the
 * gap alone, MPI_NO_OP reads them (MPI_Get_accumulate, MPI_Fetch_and_op),
 * 300 elements at once (more than one request carries: an element never
 * split between two), and operations on values are refused. Every rank
 * replaces its right neighbour's elements with its own. */
typedef struct {
    short v;
    int i;
} short_int_t;

static void test_acc_gapped(void)
{
    enum { P = 300 };
    short_int_t *mem, *mine = malloc(P * sizeof(*mine)), *back = malloc(P * sizeof(*back));
    int right = (rank + 1) % size, left = (rank + size - 1) % size, bad = 0;
    MPI_Datatype run;
    MPI_Win win;

    CHECK(mine != NULL && back != NULL);
    CHECK_EQ(MPI_Win_allocate(P * sizeof(short_int_t), sizeof(short_int_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem, &win), MPI_SUCCESS);
    memset(mem, 0x5a, P * sizeof(short_int_t)); /* the gaps' bytes too */
    for (int k = 0; k < P; k++)
        mine[k] = (short_int_t){(short)(100 * rank + k), -1000 * rank - k};
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    CHECK_EQ(MPI_Accumulate(mine, P, MPI_SHORT_INT, right, 0, P, MPI_SHORT_INT, MPI_REPLACE,
                            win), MPI_SUCCESS);
    MPI_Win_flush(right, win);
    CHECK_EQ(MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, back, P, MPI_SHORT_INT, right, 0, P,
                                MPI_SHORT_INT, MPI_NO_OP, win), MPI_SUCCESS);
    MPI_Win_flush(right, win);
    for (int k = 0; k < P; k++)
        bad += back[k].v != mine[k].v || back[k].i != mine[k].i;
    CHECK_EQ(bad, 0);
    CHECK_EQ(MPI_Fetch_and_op(NULL, back, MPI_SHORT_INT, right, P - 1, MPI_NO_OP, win),
             MPI_SUCCESS);
    MPI_Win_flush(right, win);
    CHECK(back[0].v == mine[P - 1].v && back[0].i == mine[P - 1].i);
    CHECK_EQ(err_class(MPI_Accumulate(mine, 1, MPI_SHORT_INT, right, 0, 1, MPI_SHORT_INT,
                                      MPI_MAXLOC, win)), MPI_ERR_TYPE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < P; k++) {
        unsigned char *gap = (unsigned char *)&mem[k] + sizeof(short);
        bad += mem[k].v != (short)(100 * left + k) || mem[k].i != -1000 * left - k;
        for (size_t g = 0; g < offsetof(short_int_t, i) - sizeof(short); g++)
            bad += gap[g] != 0x5a;
    }
    CHECK_EQ(bad, 0);
    /* Whole elements under concurrent access: rank 2 replaces rank 0's
     * elements round after round with pairs (c, c), rank 1 reads them
     * meanwhile; every element it reads is one pair, never half of two. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_contiguous(P, MPI_SHORT_INT, &run);
    MPI_Type_commit(&run);
    if (size >= 3 && rank <= 2) {
        MPI_Win_lock_all(0, win);
        for (int c = 1; c <= 200; c++) {
            if (rank == 2) {
                for (int k = 0; k < P; k++)
                    mine[k] = (short_int_t){(short)c, c};
                /* As one type of P elements every other round: its pieces
                 * are the elements' ints each run into the next short. */
                if (c % 2)
                    MPI_Accumulate(mine, P, MPI_SHORT_INT, 0, 0, P, MPI_SHORT_INT, MPI_REPLACE,
                                   win);
                else
                    MPI_Accumulate(mine, 1, run, 0, 0, 1, run, MPI_REPLACE, win);
                MPI_Win_flush(0, win);
            } else if (rank == 1) {
                /* All of them, then one at a time each element of the
                 * first few requests' ends. */
                MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, back, P, MPI_SHORT_INT, 0, 0, P,
                                   MPI_SHORT_INT, MPI_NO_OP, win);
                MPI_Win_flush(0, win);
                for (int k = 0; k < 40; k++)
                    MPI_Fetch_and_op(NULL, &back[k], MPI_SHORT_INT, 0, k, MPI_NO_OP, win);
                MPI_Win_flush(0, win);
                for (int k = 0; k < P; k++)
                    bad += back[k].v != (short)back[k].i &&
                           !(back[k].v == (short)(100 * (size - 1) + k) &&
                             back[k].i == -1000 * (size - 1) - k);
            }
        }
        MPI_Win_unlock_all(win);
        CHECK_EQ(bad, 0);
    }
    MPI_Type_free(&run);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(mine);
    free(back);
}

/* A window's own error handler: what it was given. */
static MPI_Win handled_win = MPI_WIN_NULL;
static int handled_code, handled_calls;

static void win_handler(MPI_Win *win, int *code, ...)
{
    handled_win = *win;
    handled_code = *code;
    handled_calls++;
}

/* Whether MPI_Win_get_info says key = want (want NULL: no such key). */
static int hint_is(MPI_Win win, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info used;
    int flag = 0, ok;

    if (MPI_Win_get_info(win, &used) != MPI_SUCCESS)
        return 0;
    MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag);
    ok = want == NULL ? !flag : flag && strcmp(v, want) == 0;
    MPI_Info_free(&used);
    return ok;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

/* Window error handlers and info hints. A handler from
 * MPI_Win_create_errhandler is given the window (not a communicator) and
 * the error, for a failed call and for MPI_Win_call_errhandler; a
 * communicator's handler is refused by a window and a window's by a
 * communicator; a freed one is refused. The hints: MPI 4.0's values when
 * none is given, those given at creation and by MPI_Win_set_info, a value
 * that is not the key's and an unknown key ignored, and a bad info
 * object refused. */
static void test_handlers(void)
{
    MPI_Errhandler weh, ceh, got;
    MPI_Info in, used;
    MPI_Win win;
    long long *mem, x = 1;
    int nkeys;

    CHECK_EQ(MPI_Win_create_errhandler(win_handler, &weh), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_create_errhandler(comm_handler, &ceh), MPI_SUCCESS);
    MPI_Info_create(&in);
    MPI_Info_set(in, "no_locks", "true");
    MPI_Info_set(in, "accumulate_ops", "same_op");
    MPI_Info_set(in, "onic_unknown_key", "1");
    CHECK_EQ(MPI_Win_allocate(2 * sizeof(long long), sizeof(long long), in, MPI_COMM_WORLD,
                              &mem, &win), MPI_SUCCESS);
    MPI_Info_free(&in);

    CHECK_EQ(MPI_Win_set_errhandler(win, weh), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_get_errhandler(win, &got), MPI_SUCCESS);
    CHECK(got == weh);
    handled_calls = 0;
    /* No epoch: the handler has the window and MPI_ERR_RMA_SYNC. */
    CHECK_EQ(MPI_Put(&x, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC);
    CHECK_EQ(handled_calls, 1);
    CHECK(handled_win == win);
    CHECK_EQ(handled_code, MPI_ERR_RMA_SYNC);
    CHECK_EQ(MPI_Win_call_errhandler(win, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK_EQ(handled_calls, 2);
    CHECK(handled_win == win);
    CHECK_EQ(handled_code, MPI_ERR_OTHER);
    /* Each kind to its own objects (the refusal goes to the window's
     * handler, or MPI_COMM_WORLD's: returned there). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh), MPI_ERR_ARG);
    CHECK_EQ(MPI_Win_create_errhandler(NULL, &got), MPI_ERR_ARG);
    CHECK_EQ(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER), MPI_ERR_WIN);
    got = weh;
    CHECK_EQ(MPI_Errhandler_free(&weh), MPI_SUCCESS);
    CHECK(weh == MPI_ERRHANDLER_NULL);
    CHECK_EQ(MPI_Win_set_errhandler(win, got), MPI_ERR_ARG); /* freed */
    CHECK_EQ(MPI_Errhandler_free(&ceh), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_get_errhandler(win, &got), MPI_SUCCESS);
    CHECK(got == MPI_ERRORS_RETURN);

    /* Hints: given at creation, the rest as MPI says when none is given. */
    CHECK_EQ(MPI_Win_get_info(win, &used), MPI_SUCCESS);
    MPI_Info_get_nkeys(used, &nkeys);
    CHECK_EQ(nkeys, 6);
    MPI_Info_free(&used);
    CHECK(hint_is(win, "no_locks", "true"));
    CHECK(hint_is(win, "accumulate_ops", "same_op"));
    CHECK(hint_is(win, "accumulate_ordering", "rar,raw,war,waw"));
    CHECK(hint_is(win, "same_size", "false"));
    CHECK(hint_is(win, "onic_unknown_key", NULL));
    /* Set later: good values taken, bad ones (not the key's) ignored. */
    MPI_Info_create(&in);
    MPI_Info_set(in, "accumulate_ordering", "rar,waw");
    MPI_Info_set(in, "no_locks", "maybe");
    MPI_Info_set(in, "same_disp_unit", "true");
    CHECK_EQ(MPI_Win_set_info(win, in), MPI_SUCCESS);
    MPI_Info_set(in, "accumulate_ordering", "rar,xyz");
    MPI_Info_set(in, "accumulate_ops", "any_op");
    CHECK_EQ(MPI_Win_set_info(win, in), MPI_SUCCESS);
    MPI_Info_free(&in);
    CHECK(hint_is(win, "accumulate_ordering", "rar,waw"));
    CHECK(hint_is(win, "no_locks", "true"));
    CHECK(hint_is(win, "same_disp_unit", "true"));
    CHECK(hint_is(win, "accumulate_ops", "same_op"));
    CHECK_EQ(MPI_Win_set_info(win, MPI_INFO_NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Win_get_info(win, NULL), MPI_ERR_ARG);
    MPI_Win_free(&win);
    /* A creation with an info object that is none fails at every process
     * alike, before anything collective. */
    {
        MPI_Win bad = MPI_WIN_NULL;
        CHECK_EQ(MPI_Win_create(NULL, 0, 1, (MPI_Info)0x7777, MPI_COMM_WORLD, &bad),
                 MPI_ERR_ARG);
        CHECK(bad == MPI_WIN_NULL);
    }
    /* A window made with no hints has MPI's when none is given. */
    CHECK_EQ(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    CHECK(hint_is(win, "no_locks", "false"));
    MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

typedef struct {
    const char *name;
    void (*fn)(void);
} test_t;

static const test_t tests[] = {
    {"win", test_win},     {"fence", test_fence}, {"acc", test_acc},
    {"lock", test_lock},   {"pscw", test_pscw},   {"errors", test_errors},
    {"racc", test_racc},   {"shared", test_shared}, {"dynamic", test_dynamic},
    {"shm", test_shm},     {"handlers", test_handlers}, {"gapped", test_acc_gapped},
};
/* Not in `all`: needs the onload engine. */
static const test_t named_only[] = {{"bypass", test_bypass}};

int main(int argc, char **argv)
{
    int total = 0, known;
    const char *me = getenv("ONIC_RANK");

    if (argc > 1 && strcmp(argv[1], "--mixed-shm") == 0) {
        mixed_shm = 1;
        if (me != NULL && strcmp(me, "1") == 0)
            setenv("ONIC_MPI_WIN_SHM", "0", 1);
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        known = strcmp(argv[a], "all") == 0 || strcmp(argv[a], named_only[0].name) == 0;
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
            known |= strcmp(argv[a], tests[t].name) == 0;
        if (!known) {
            if (rank == 0)
                fprintf(stderr, "mpi_rma: unknown test \"%s\"; the tests are: all win fence "
                        "acc lock pscw errors racc shared dynamic shm handlers gapped bypass (onload)\n", argv[a]);
            MPI_Finalize();
            return 2;
        }
    }
    for (int a = 1; a < argc; a++) {
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
            if (strcmp(argv[a], "all") == 0 || strcmp(argv[a], tests[t].name) == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                tests[t].fn();
            }
        if (strcmp(argv[a], named_only[0].name) == 0)
            named_only[0].fn();
    }
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    return total != 0;
}
