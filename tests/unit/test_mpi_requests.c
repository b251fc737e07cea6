/* MPI requests in one process (a job of one, no onicrun): the wait and test
 * forms over more requests than fit on their stack (generalized and
 * MPI_Isendrecv's too), and the arguments a
 * send or a receive, started now or persistent, must refuse. Expected
 * values are MPI's (MPI 4.0, 3.7 and 3.9). Deterministic. */
#include "check.h"

#include "base/log.h"
#include "base/mem.h"
#include "base/shmfd.h"
#include "mpi/mpi_impl.h"
#include "mpi/rma.h"

#include <mpi.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 100 }; /* more requests than the wait forms keep on their stack */

static void post_pairs(int *in, int *out, MPI_Request *q, int tag0)
{
    for (int i = 0; i < N; i++) {
        out[i] = 1000 + i;
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, 0, tag0 + i, MPI_COMM_SELF, &q[i]);
        MPI_Isend(&out[i], 1, MPI_INT, 0, tag0 + i, MPI_COMM_SELF, &q[N + i]);
    }
}

static void test_many(void)
{
    static int in[N], out[N], idx[2 * N], seen[2 * N];
    static MPI_Request q[2 * N];
    static MPI_Status st[2 * N];
    int done, n, flag;

    /* Waitall: every request done and null, each receive's status its own. */
    post_pairs(in, out, q, 0);
    CHECK_EQ(MPI_Waitall(2 * N, q, st), MPI_SUCCESS);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(in[i], 1000 + i);
        CHECK_EQ(st[i].MPI_TAG, i);
        CHECK(q[i] == MPI_REQUEST_NULL && q[N + i] == MPI_REQUEST_NULL);
    }
    /* Waitsome: every index once. */
    post_pairs(in, out, q, 200);
    memset(seen, 0, sizeof(seen));
    for (done = 0; done < 2 * N; done += n) {
        CHECK_EQ(MPI_Waitsome(2 * N, q, &n, idx, st), MPI_SUCCESS);
        CHECK(n >= 1 && done + n <= 2 * N);
        if (n < 1 || done + n > 2 * N)
            break;
        for (int k = 0; k < n; k++) {
            CHECK(idx[k] >= 0 && idx[k] < 2 * N && !seen[idx[k]]);
            if (idx[k] >= 0 && idx[k] < 2 * N)
                seen[idx[k]] = 1;
            if (idx[k] >= 0 && idx[k] < N)
                CHECK_EQ(st[k].MPI_TAG, 200 + idx[k]);
        }
    }
    CHECK_EQ(MPI_Waitsome(2 * N, q, &n, idx, st), MPI_SUCCESS);
    CHECK_EQ(n, MPI_UNDEFINED);
    /* Testall until done, then Waitany over nothing active. */
    post_pairs(in, out, q, 400);
    for (flag = 0; !flag;)
        CHECK_EQ(MPI_Testall(2 * N, q, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK_EQ(in[i], 1000 + i);
    CHECK_EQ(MPI_Waitany(2 * N, q, &n, &st[0]), MPI_SUCCESS);
    CHECK_EQ(n, MPI_UNDEFINED);
    /* Waitany and Testany: each completion once, a receive's status its
     * own (source and tag; MPI_ERROR is not theirs to set, MPI 4.0 3.2.5). */
    for (int any = 0; any < 2; any++) {
        int tag0 = 600 + 200 * any, bad = 0;
        post_pairs(in, out, q, tag0);
        memset(seen, 0, sizeof(seen));
        for (done = 0; done < 2 * N;) {
            MPI_Status one;
            memset(&one, 0x5a, sizeof(one));
            flag = 1;
            if (any == 0)
                CHECK_EQ(MPI_Waitany(2 * N, q, &n, &one), MPI_SUCCESS);
            else
                CHECK_EQ(MPI_Testany(2 * N, q, &n, &flag, &one), MPI_SUCCESS);
            if (!flag)
                continue;
            if (n < 0 || n >= 2 * N || seen[n]) {
                bad++;
                break;
            }
            seen[n] = 1;
            done++;
            if (n < N)
                bad += one.MPI_TAG != tag0 + n || one.MPI_SOURCE != 0 || in[n] != 1000 + n;
        }
        CHECK_EQ(bad, 0);
    }
}

/* A send names a rank (MPI_ANY_SOURCE is no destination); a receive may
 * name MPI_ANY_SOURCE and MPI_ANY_TAG. Persistent requests check the same
 * at init. A negative count is MPI_ERR_COUNT, also for a type of size 0. */
static void test_args(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Datatype empty;
    int v = 0;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Send_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &r), MPI_ERR_RANK);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Send_init(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_SELF, &r), MPI_ERR_TAG);
    CHECK_EQ(MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &r),
             MPI_SUCCESS);
    CHECK(r != MPI_REQUEST_NULL);
    if (r != MPI_REQUEST_NULL)
        MPI_Request_free(&r);
    CHECK_EQ(MPI_Recv_init(&v, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &r), MPI_ERR_RANK);
    CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &r), MPI_ERR_RANK);
    CHECK_EQ(MPI_Isend(&v, -1, MPI_INT, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    CHECK_EQ(MPI_Isend(&v, -1, empty, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Irecv(&v, -1, empty, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Send_init(&v, -1, empty, 0, 0, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    CHECK(r == MPI_REQUEST_NULL);
    MPI_Type_free(&empty);
    /* A root outside the communicator is MPI_ERR_ROOT (MPI 6.1). */
    {
        int w[2] = {0, 0};
        CHECK_EQ(MPI_Gather(&v, 1, MPI_INT, w, 1, MPI_INT, 1, MPI_COMM_SELF), MPI_ERR_ROOT);
        CHECK_EQ(MPI_Gather(&v, 1, MPI_INT, w, 1, MPI_INT, -1, MPI_COMM_SELF), MPI_ERR_ROOT);
        CHECK_EQ(MPI_Gather(&v, 1, MPI_INT, w, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_SUCCESS);
    }
    /* Where to put a new communicator or info object: NULL is MPI_ERR_ARG,
     * and a given place gets one. */
    {
        MPI_Group g;
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Info info = MPI_INFO_NULL;
        MPI_Comm_group(MPI_COMM_SELF, &g);
        CHECK_EQ(MPI_Comm_create(MPI_COMM_SELF, g, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Comm_create(MPI_COMM_SELF, g, &c), MPI_SUCCESS);
        CHECK(c != MPI_COMM_NULL);
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        MPI_Group_free(&g);
        CHECK_EQ(MPI_Comm_get_info(MPI_COMM_SELF, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Comm_get_info(MPI_COMM_SELF, &info), MPI_SUCCESS);
        CHECK(info != MPI_INFO_NULL);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    /* Calls of no communicator report through MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Initialized(NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Finalized(NULL), MPI_ERR_ARG);
    /* Every code from MPI_SUCCESS to MPI_ERR_LASTCODE has a string; one
     * past it is no code (MPI 8.4). */
    {
        char str[MPI_MAX_ERROR_STRING];
        int len = -1;
        CHECK_EQ(MPI_Error_string(MPI_ERR_LASTCODE, str, &len), MPI_SUCCESS);
        CHECK(len > 0 && (size_t)len == strlen(str));
        CHECK_EQ(MPI_Error_string(MPI_SUCCESS, str, &len), MPI_SUCCESS);
        CHECK(len > 0);
        CHECK_EQ(MPI_Error_string(MPI_ERR_LASTCODE + 1, str, &len), MPI_ERR_ARG);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* What the library logs at debug level (where MPI_ERRORS_RETURN puts an
 * error's text) from here ... */
static void said_catch(FILE **tmp_p, int *saved_p, int *level_p)
{
    *level_p = ONIC_LOG_ERROR;
    while (*level_p < ONIC_LOG_TRACE && onic_log_enabled((onic_log_level_t)(*level_p + 1)))
        (*level_p)++;
    onic_log_set_level(ONIC_LOG_DEBUG);
    check_stderr_catch(tmp_p, saved_p);
}

/* ... to here, into out. */
static void said_caught(FILE *tmp, int saved, int level, char *out, size_t outlen)
{
    check_stderr_caught(tmp, saved, out, outlen);
    onic_log_set_level((onic_log_level_t)level);
}

/* Keyvals: the first 16 made fill the table of keyvals exactly; the
 * keyval past the last is none (MPI_ERR_KEYVAL), looked up nowhere (under
 * AddressSanitizer a lookup one past the table is an error). */
static void test_keyvals(void)
{
    int kv[16], top = 0, flag = -1;
    void *val = NULL;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 16; i++) {
        CHECK_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv[i],
                                        NULL), MPI_SUCCESS);
        top = kv[i] > top ? kv[i] : top;
    }
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_SELF, top + 1, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_SELF, top + 1, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_SELF, kv[15], &flag), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_SELF, kv[15], &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == &flag);
    CHECK_EQ(MPI_Comm_delete_attr(MPI_COMM_SELF, kv[15]), MPI_SUCCESS);
    /* No memory for the attribute: MPI_ERR_NO_MEM, and nothing is set. */
    onic_mem_fail_after(0);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_SELF, kv[14], &flag), MPI_ERR_NO_MEM);
    onic_mem_fail_after(-1);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_SELF, kv[14], &val, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    /* A predefined attribute's keyval is refused with a word on why; a
     * keyval past the last, without it. */
    {
        char said[2048];
        FILE *tmp;
        int saved, level;

        said_catch(&tmp, &saved, &level);
        CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_SELF, MPI_TAG_UB, &flag), MPI_ERR_KEYVAL);
        said_caught(tmp, saved, level, said, sizeof(said));
        CHECK(strstr(said, "the predefined attributes cannot be set or deleted") != NULL);
        said_catch(&tmp, &saved, &level);
        CHECK_EQ(MPI_Comm_delete_attr(MPI_COMM_SELF, top + 1), MPI_ERR_KEYVAL);
        said_caught(tmp, saved, level, said, sizeof(said));
        CHECK(strstr(said, "is not one from MPI_Comm_create_keyval") != NULL);
        CHECK(strstr(said, "predefined") == NULL);
    }
    for (int i = 0; i < 16; i++)
        CHECK_EQ(MPI_Comm_free_keyval(&kv[i]), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* Info objects: an empty key is refused by every call that takes one, and
 * the n-th key exists for n from 0 to nkeys - 1 only (MPI 4.0, 10.1). */
static void test_info(void)
{
    MPI_Info info;
    char key[MPI_MAX_INFO_KEY + 1] = "untouched";
    int len = -1, flag = -1, n = -1;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_set(info, "a", "1"), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_set(info, "b", "22"), MPI_SUCCESS);
    CHECK(MPI_Info_get_valuelen(info, "", &len, &flag) != MPI_SUCCESS);
    CHECK(len == -1 && flag == -1);
    CHECK_EQ(MPI_Info_get_valuelen(info, "b", &len, &flag), MPI_SUCCESS);
    CHECK(len == 2 && flag == 1);
    CHECK_EQ(MPI_Info_get_nkeys(info, &n), MPI_SUCCESS);
    CHECK_EQ(n, 2);
    CHECK_EQ(MPI_Info_get_nthkey(info, 1, key), MPI_SUCCESS);
    CHECK(strcmp(key, "b") == 0);
    strcpy(key, "untouched");
    CHECK(MPI_Info_get_nthkey(info, 2, key) != MPI_SUCCESS);
    CHECK(MPI_Info_get_nthkey(info, -1, key) != MPI_SUCCESS);
    CHECK(strcmp(key, "untouched") == 0);
    CHECK_EQ(MPI_Info_free(&info), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A put that Portals cannot start (no memory to queue the message to
 * oneself) is an error of the call, and is not counted as started: the
 * flush that follows returns, and a later put goes. ("nomem": errors are
 * logged.) */
static int test_rma_nomem(void)
{
    static long long cell[2048], v[2048];
    MPI_Win win;
    int rc;

    MPI_Win_create(cell, sizeof(cell), sizeof(cell[0]), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    onic_mem_fail_after(0);
    rc = MPI_Put(v, 2048, MPI_LONG_LONG, 0, 0, 2048, MPI_LONG_LONG, win);
    onic_mem_fail_after(-1);
    CHECK(rc != MPI_SUCCESS);
    if (rc == MPI_SUCCESS)
        return 1; /* counted as started: the flush would wait for ever */
    CHECK_EQ(MPI_Win_flush(0, win), MPI_SUCCESS);
    CHECK_EQ(MPI_Put(v, 2048, MPI_LONG_LONG, 0, 0, 2048, MPI_LONG_LONG, win), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_unlock(0, win), MPI_SUCCESS);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    return 0;
}

/* A root outside the communicator is refused naming the root and the
 * ranks there are. */
static void test_root_named(void)
{
    char said[2048];
    FILE *tmp;
    int saved, level, v = 0;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_SELF), MPI_ERR_ROOT);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "root 1 is not a rank of the communicator (0 to 0)") != NULL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* The datatype calls' errors say what was wrong: the datarep given (or
 * that there was none), the type refused for external32 by its name (or
 * as "this type" if it has none), and the type class MPI_Type_match_size
 * found no type of. */
static void test_type_errors_named(void)
{
    static const struct {
        int         typeclass;
        const char *word;
    } classes[] = {{MPI_TYPECLASS_REAL, "no real type of 3 bytes"},
                   {MPI_TYPECLASS_INTEGER, "no integer type of 3 bytes"},
                   {MPI_TYPECLASS_COMPLEX, "no complex type of 3 bytes"}};
    char said[2048], buf[64];
    FILE *tmp;
    MPI_Aint pos = 0;
    MPI_Datatype two_longs, t;
    long l[2] = {1, 2};
    int saved, level;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Pack_external("native", l, 1, MPI_INT, buf, sizeof(buf), &pos), MPI_ERR_ARG);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "datarep \"native\"") != NULL);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Pack_external(NULL, l, 1, MPI_INT, buf, sizeof(buf), &pos), MPI_ERR_ARG);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "datarep \"(NULL)\"") != NULL);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Pack_external("external32", l, 1, MPI_LONG, buf, sizeof(buf), &pos),
             MPI_ERR_TYPE);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "external32 of MPI_LONG:") != NULL);
    MPI_Type_contiguous(2, MPI_LONG, &two_longs);
    MPI_Type_commit(&two_longs);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Pack_external("external32", l, 1, two_longs, buf, sizeof(buf), &pos),
             MPI_ERR_TYPE);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "external32 of this type:") != NULL);
    MPI_Type_free(&two_longs);
    CHECK_EQ(pos, 0);
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        said_catch(&tmp, &saved, &level);
        CHECK_EQ(MPI_Type_match_size(classes[i].typeclass, 3, &t), MPI_ERR_ARG);
        said_caught(tmp, saved, level, said, sizeof(said));
        CHECK(strstr(said, classes[i].word) != NULL);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Dims_create with no memory for its search: MPI_ERR_NO_MEM, dims
 * unchanged; with memory back, the answer. */
static void test_dims_no_memory(void)
{
    int dims[2] = {0, 0};

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    onic_mem_fail_after(0);
    CHECK_EQ(MPI_Dims_create(6, 2, dims), MPI_ERR_NO_MEM);
    onic_mem_fail_after(-1);
    CHECK(dims[0] == 0 && dims[1] == 0);
    CHECK_EQ(MPI_Dims_create(6, 2, dims), MPI_SUCCESS);
    CHECK(dims[0] == 3 && dims[1] == 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Sendrecv to itself with its k-th allocation failing, for k = 0, 1,
 * ... until it succeeds, its receive's message sent before and the
 * request pool left one free request (receives posted that nothing
 * matches), so the send's request needs a new chunk: each failure leaves
 * no request behind (the receive, done or cancelled, is freed: the pool
 * holds what it held before) and the message either received or still
 * there to receive; the success receives it, or its message was dropped
 * at arrival for want of memory, counted. ("nomem": errors are logged.) */
static void test_sendrecv_nomem(void)
{
    enum { FILL = 256 };
    static MPI_Request fill[FILL];
    static int fillbuf[FILL];
    int rc = MPI_ERR_NO_MEM, failures = 0, received = 0;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 1000 && rc != MPI_SUCCESS; k++) {
        int one = 100 + k, got = -1, v = 7, flag = 0, nfill = 0;
        onic_pool_t *pool = &onic_mpi_g.req_pool;
        ptl_sr_value_t drops_before = 0, drops_after = 0;
        size_t before;
        MPI_Request r;

        CHECK_EQ(MPI_Isend(&one, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        while (nfill < FILL && !(pool->free_list != NULL && *(void **)pool->free_list == NULL)) {
            CHECK_EQ(MPI_Irecv(&fillbuf[nfill], 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &fill[nfill]),
                     MPI_SUCCESS);
            nfill++;
        }
        before = pool->in_use;
        CHECK_EQ(PtlNIStatus(onic_mpi_g.ni, PTL_SR_DROP_COUNT, &drops_before), PTL_OK);
        onic_mem_fail_after(k);
        rc = MPI_Sendrecv(&v, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        onic_mem_fail_after(-1);
        if (onic_mpi_g.req_pool.in_use != before) {
            fprintf(stderr, "MPI_Sendrecv, allocation %d failing (rc %d): %zu requests in use "
                    "after, %zu before\n", k, rc, onic_mpi_g.req_pool.in_use, before);
            check_failed++;
        }
        if (rc == MPI_SUCCESS) {
            CHECK_EQ(got, one);
            /* The message sent: received, unless its arrival found no
             * memory for its header (the allocations fail inside this
             * process's own call) and Portals dropped it, counted. */
            for (int i = 0; i < 1000 && !flag; i++)
                CHECK_EQ(MPI_Iprobe(0, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
            CHECK_EQ(PtlNIStatus(onic_mpi_g.ni, PTL_SR_DROP_COUNT, &drops_after), PTL_OK);
            if (flag) {
                CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
                CHECK_EQ(v, 7);
            } else {
                CHECK(drops_after > drops_before);
            }
            flag = 0;
        }
        if (rc != MPI_SUCCESS) {
            failures++;
            received += got == one;
            /* Not received by the failed call: still there. */
            CHECK_EQ(MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(flag == (got != one));
            if (flag)
                CHECK_EQ(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
            CHECK_EQ(got, one);
        }
        for (int i = 0; i < nfill; i++) {
            CHECK_EQ(MPI_Cancel(&fill[i]), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&fill[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        }
    }
    CHECK_EQ(rc, MPI_SUCCESS);
    CHECK(failures > 0);
    /* Some failure came after the receive took its message. */
    CHECK(received > 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Each call that makes a communicator with a topology, with its k-th
 * allocation failing for k = 0, 1, ... until it succeeds: each failure is
 * MPI_ERR_NO_MEM and leaves no communicator, each success has its topology
 * (MPI_Topo_test), never a communicator without one. ("nomem": errors are
 * logged.) */
static void test_topo_nomem(void)
{
    static const int kind_of[] = {MPI_CART, MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH, MPI_DIST_GRAPH};
    static const char *const name[] = {"MPI_Cart_create", "MPI_Cart_sub", "MPI_Graph_create",
                                       "MPI_Dist_graph_create_adjacent", "MPI_Dist_graph_create"};
    int one[1] = {1}, zero[1] = {0}, remain[1] = {1};
    MPI_Comm cart;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, one, zero, 0, &cart), MPI_SUCCESS);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    for (int call = 0; call < 5; call++) {
        int rc = MPI_ERR_NO_MEM, failures = 0;

        for (int k = 0; k < 1000 && rc != MPI_SUCCESS; k++) {
            MPI_Comm nc = MPI_COMM_NULL;
            int kind = MPI_UNDEFINED, cls = MPI_SUCCESS;

            onic_mem_fail_after(k);
            switch (call) {
            case 0:
                rc = MPI_Cart_create(MPI_COMM_WORLD, 1, one, zero, 1, &nc);
                break;
            case 1:
                rc = MPI_Cart_sub(cart, remain, &nc);
                break;
            case 2: /* one node, its one edge to itself */
                rc = MPI_Graph_create(MPI_COMM_WORLD, 1, one, zero, 0, &nc);
                break;
            case 3:
                rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, zero, MPI_UNWEIGHTED, 1,
                                                    zero, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &nc);
                break;
            default:
                rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, zero, one, zero, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &nc);
                break;
            }
            onic_mem_fail_after(-1);
            if (rc != MPI_SUCCESS) {
                failures++;
                MPI_Error_class(rc, &cls);
                if (cls != MPI_ERR_NO_MEM || nc != MPI_COMM_NULL) {
                    fprintf(stderr, "%s, allocation %d failing: error class %d (want %d), "
                            "communicator %s\n", name[call], k, cls, MPI_ERR_NO_MEM,
                            nc == MPI_COMM_NULL ? "none" : "left");
                    check_failed++;
                }
                continue;
            }
            CHECK(nc != MPI_COMM_NULL);
            if (nc == MPI_COMM_NULL)
                break;
            CHECK_EQ(MPI_Topo_test(nc, &kind), MPI_SUCCESS);
            if (kind != kind_of[call]) {
                fprintf(stderr, "%s, allocation %d failing: succeeded with topology %d, not "
                        "%d\n", name[call], k, kind, kind_of[call]);
                check_failed++;
            }
            MPI_Comm_free(&nc);
        }
        CHECK_EQ(rc, MPI_SUCCESS);
        CHECK(failures > 0);
    }
    MPI_Comm_free(&cart);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* An error of the last predefined class (MPI_ERR_LASTCODE, MPI_ERR_SESSION)
 * is named as itself in its message, as any other: a call on no session;
 * and so is the last one-sided class: attaching memory to a window not made
 * by MPI_Win_create_dynamic. */
static void test_last_class_named(void)
{
    static int mem[4];
    char said[2048];
    FILE *tmp;
    MPI_Win win;
    int saved, level, n = -1;

    CHECK_EQ(MPI_ERR_SESSION, MPI_ERR_LASTCODE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "MPI_Session_get_num_psets on rank 0: MPI_ERR_SESSION: session 0 is "
                 "MPI_SESSION_NULL") != NULL);
    if (strstr(said, "MPI_ERR_SESSION") == NULL)
        fprintf(stderr, "MPI_Session_get_num_psets said:\n%s", said);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* The last one-sided class too. */
    CHECK_EQ(MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &win),
             MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Win_attach(win, mem, sizeof(mem)), MPI_ERR_RMA_FLAVOR);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "MPI_Win_attach on rank 0: MPI_ERR_RMA_FLAVOR: the window was not made "
                 "by MPI_Win_create_dynamic") != NULL);
    if (strstr(said, "MPI_ERR_RMA_FLAVOR") == NULL)
        fprintf(stderr, "MPI_Win_attach said:\n%s", said);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

/* The error report never returns MPI_SUCCESS, which the compiler is told
 * (mpi_impl.h): a report made with class 0 by mistake returns
 * MPI_ERR_INTERN, so a caller that returns it still fails. */
static void test_error_never_success(void)
{
    char said[1024];
    FILE *tmp;
    int saved, level;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(onic_mpi_err_report(onic_mpi_htab_get(&onic_mpi_g.comms, MPI_COMM_SELF),
                                 MPI_SUCCESS, "test_call", "a class of 0"), MPI_ERR_INTERN);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "test_call on rank 0: MPI_ERR_INTERN: a class of 0") != NULL);
}

/* Argument errors name what is wrong: MPI_Win_shared_query's NULL output
 * argument by its name, MPI_Intercomm_create's local leader outside
 * local_comm with the ranks there are. */
static void test_args_named(void)
{
    char said[2048];
    FILE *tmp;
    MPI_Win win;
    MPI_Aint size;
    MPI_Comm ic = MPI_COMM_NULL;
    int saved, level, disp = 0, *base = NULL, *mem = NULL;

    CHECK_EQ(MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF,
                                     &mem, &win), MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Win_shared_query(win, 0, &size, NULL, &base), MPI_ERR_ARG);
    said_caught(tmp, saved, level, said, sizeof(said));
    if (strstr(said, "disp_unit is NULL") == NULL)
        fprintf(stderr, "MPI_Win_shared_query with disp_unit NULL said:\n%s", said);
    CHECK(strstr(said, "disp_unit is NULL") != NULL);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Win_shared_query(win, 0, &size, &disp, NULL), MPI_ERR_ARG);
    said_caught(tmp, saved, level, said, sizeof(said));
    if (strstr(said, "baseptr is NULL") == NULL)
        fprintf(stderr, "MPI_Win_shared_query with baseptr NULL said:\n%s", said);
    CHECK(strstr(said, "baseptr is NULL") != NULL);
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_SELF, 0, 5, &ic), MPI_ERR_RANK);
    said_caught(tmp, saved, level, said, sizeof(said));
    if (strstr(said, "local_leader 1 is not a rank of local_comm (0 to 0)") == NULL)
        fprintf(stderr, "MPI_Intercomm_create with local_leader 1 of 1 said:\n%s", said);
    CHECK(strstr(said, "local_leader 1 is not a rank of local_comm (0 to 0)") != NULL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* Generalized requests and MPI_Isendrecv in the array forms, more of them
 * than fit on their stack: Waitall over N of each, interleaved, each
 * status the one its request says (query_fn's, or the receive's). */
static int greq_n_query(void *extra, MPI_Status *status)
{
    status->MPI_SOURCE = 0;
    status->MPI_TAG = (int)(intptr_t)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    return MPI_SUCCESS;
}

static int greq_n_freed;

static int greq_n_free(void *extra)
{
    (void)extra;
    greq_n_freed++;
    return MPI_SUCCESS;
}

static int greq_n_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void test_new_kinds_many(void)
{
    static int out[N], in[N];
    static MPI_Request q[2 * N];
    static MPI_Status st[2 * N];
    int flag = 0;

    greq_n_freed = 0;
    for (int i = 0; i < N; i++) {
        out[i] = 5000 + i;
        in[i] = -1;
        CHECK_EQ(MPI_Grequest_start(greq_n_query, greq_n_free, greq_n_cancel,
                                    (void *)(intptr_t)(700 + i), &q[2 * i]),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Isendrecv(&out[i], 1, MPI_INT, 0, 300 + i, &in[i], 1, MPI_INT, 0, 300 + i,
                               MPI_COMM_SELF, &q[2 * i + 1]),
                 MPI_SUCCESS);
    }
    /* Nothing is complete while the generalized ones are not. */
    CHECK_EQ(MPI_Testall(2 * N, q, &flag, st), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    for (int i = N - 1; i >= 0; i--)
        CHECK_EQ(MPI_Grequest_complete(q[2 * i]), MPI_SUCCESS);
    CHECK_EQ(MPI_Waitall(2 * N, q, st), MPI_SUCCESS);
    CHECK_EQ(greq_n_freed, N);
    for (int i = 0; i < N; i++) {
        int cnt = -1;
        CHECK_EQ(st[2 * i].MPI_TAG, 700 + i);
        CHECK_EQ(st[2 * i + 1].MPI_TAG, 300 + i);
        CHECK_EQ(st[2 * i + 1].MPI_SOURCE, 0);
        MPI_Get_count(&st[2 * i + 1], MPI_INT, &cnt);
        CHECK_EQ(cnt, 1);
        CHECK_EQ(in[i], 5000 + i);
        CHECK(q[2 * i] == MPI_REQUEST_NULL && q[2 * i + 1] == MPI_REQUEST_NULL);
    }
}

/* The new calls' errors say what was wrong: a buffered persistent send
 * started with no buffer attached, a generalized request whose query_fn
 * failed, a large count of a non-contiguous type. */
static void test_new_kinds_named(void)
{
    char said[2048];
    FILE *tmp;
    MPI_Request r;
    MPI_Datatype vec;
    int saved, level, v = 1;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Bsend_init(&v, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &r), MPI_SUCCESS);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Start(&r), MPI_ERR_BUFFER);
    said_caught(tmp, saved, level, said, sizeof(said));
    if (strstr(said, "MPI_Start") == NULL || strstr(said, "has no room") == NULL)
        fprintf(stderr, "MPI_Start of MPI_Bsend_init with no buffer said:\n%s", said);
    CHECK(strstr(said, "MPI_Start") != NULL && strstr(said, "MPI_Buffer_attach") != NULL);
    CHECK_EQ(MPI_Request_free(&r), MPI_SUCCESS);

    CHECK_EQ(MPI_Grequest_start(greq_n_query, greq_n_free, greq_n_cancel, NULL, &r),
             MPI_SUCCESS);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Grequest_start(greq_n_query, NULL, greq_n_cancel, NULL, &r), MPI_ERR_ARG);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "free_fn is NULL") != NULL);
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);

    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Send_c(&v, ((MPI_Count)1 << 31) + 1, vec, 0, 1, MPI_COMM_SELF), MPI_ERR_COUNT);
    said_caught(tmp, saved, level, said, sizeof(said));
    if (strstr(said, "only of a contiguous type") == NULL)
        fprintf(stderr, "MPI_Send_c of 2^31 + 1 vectors said:\n%s", said);
    CHECK(strstr(said, "MPI_Send_c") != NULL && strstr(said, "only of a contiguous type") != NULL);
    MPI_Type_free(&vec);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A fatal error ends the process with the error's class as its exit
 * status, and hands the launcher's abort (the hook boot installs under
 * PMIx or PMI-1; here the test's own) the same code. In a child: the error
 * ends it. */
static int die_pipe = -1;

static void die_hook(int code, const char *msg)
{
    (void)msg;
    if (write(die_pipe, &code, sizeof(code)) < 0) {
        /* the parent sees no code */
    }
}

static void test_fatal_status(void)
{
    int fds[2], code = -1, status = 0, v = 0;
    pid_t pid;

    REQUIRE(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2); /* the fatal error's report is expected */
        close(fds[0]);
        die_pipe = fds[1];
        onic_log_abort_set(die_hook);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_SELF); /* no rank 1: MPI_ERR_ROOT */
        _exit(100);
    }
    close(fds[1]);
    REQUIRE(pid > 0);
    if (read(fds[0], &code, sizeof(code)) != (ssize_t)sizeof(code))
        code = -1;
    close(fds[0]);
    REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_EQ(code, MPI_ERR_ROOT);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == MPI_ERR_ROOT);
}

/* A handle keeps its table index in 20 bits, so a table holds at most
 * 2^20 objects: with MPI_INFO_ENV at index 0, exactly 2^20 - 1 infos can
 * be made, the next is refused (MPI_ERR_NO_MEM) rather than given a handle
 * whose index spills into the generation bits; the last one made works,
 * and all free again. Infos are the smallest objects behind a handle
 * (about 50 MB for the lot). */
static void test_handle_cap(void)
{
    enum { CAP = 1 << 20 };
    MPI_Info *h = malloc(CAP * sizeof(*h));
    int made = 0, rc = MPI_SUCCESS, flag = 0;
    char val[8];

    REQUIRE(h != NULL);
    if (h == NULL)
        return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    while (made < CAP && (rc = MPI_Info_create(&h[made])) == MPI_SUCCESS)
        made++;
    CHECK_EQ(made, CAP - 1);
    CHECK_EQ(rc, MPI_ERR_NO_MEM);
    if (made > 0) {
        CHECK_EQ(MPI_Info_set(h[made - 1], "last", "yes"), MPI_SUCCESS);
        CHECK_EQ(MPI_Info_get(h[made - 1], "last", sizeof(val) - 1, val, &flag), MPI_SUCCESS);
        CHECK(flag && strcmp(val, "yes") == 0);
        CHECK_EQ(MPI_Info_get(h[0], "last", sizeof(val) - 1, val, &flag), MPI_SUCCESS);
        CHECK_EQ(flag, 0);
    }
    for (int i = 0; i < made; i++)
        if (MPI_Info_free(&h[i]) != MPI_SUCCESS) {
            CHECK(!"MPI_Info_free");
            break;
        }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(h);
}

/* A slot used again and again: every handle it gives keeps its kind, no
 * generation is 0 (the predefined objects'), a freed handle is refused
 * while its slot holds the next object, and the generation goes through
 * all 63 values and wraps to 1, never carrying into the kind. */
static void test_handle_generations(void)
{
    enum { ROUNDS = 140, GENS = ONIC_MPI_HANDLE_GEN_MASK };
    int seen[GENS + 1] = {0}, nkind = 0, ngen0 = 0, same_as_prev = 0, flag = 1;
    MPI_Info h, prev = MPI_INFO_NULL;
    char val[4];

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < ROUNDS; i++) {
        if (MPI_Info_create(&h) != MPI_SUCCESS) {
            CHECK(!"MPI_Info_create");
            break;
        }
        nkind += h >> ONIC_MPI_HANDLE_KIND_SHIFT == ONIC_MPI_KIND_INFO;
        ngen0 += (h >> ONIC_MPI_HANDLE_GEN_SHIFT & GENS) == 0;
        seen[h >> ONIC_MPI_HANDLE_GEN_SHIFT & GENS]++;
        same_as_prev += h == prev;
        /* The previous object's handle, its slot now h's: refused. */
        if (prev != MPI_INFO_NULL && (prev & (ONIC_MPI_HANDLE_INDEX_MAX - 1)) ==
                                         (h & (ONIC_MPI_HANDLE_INDEX_MAX - 1)))
            CHECK_EQ(MPI_Info_get(prev, "k", sizeof(val) - 1, val, &flag), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_set(h, "k", "v"), MPI_SUCCESS);
        prev = h;
        CHECK_EQ(MPI_Info_free(&h), MPI_SUCCESS);
        /* The handle the free slot gives next names nothing until then. */
        if ((prev >> ONIC_MPI_HANDLE_GEN_SHIFT & GENS) < GENS)
            CHECK_EQ(MPI_Info_get(prev + (1 << ONIC_MPI_HANDLE_GEN_SHIFT), "k", sizeof(val) - 1,
                                  val, &flag),
                     MPI_ERR_ARG);
    }
    CHECK_EQ(nkind, ROUNDS);
    CHECK_EQ(ngen0, 0);
    CHECK_EQ(same_as_prev, 0);
    /* The one slot went round at least twice: every generation seen. */
    for (int g = 1; g <= GENS; g++)
        CHECK(seen[g] >= 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Messages to oneself need a few tests each; none after this many is a
 * message lost (nothing else in a job of one can move it). */
enum { POLLS = 200000 };

/* Tests the n requests until all are done or POLLS tests went by; whether
 * all were done. */
static int done_within_polls(int n, MPI_Request *q)
{
    int flag = 0;

    for (long i = 0; i < POLLS && !flag; i++)
        if (MPI_Testall(n, q, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return 0;
    return flag;
}

/* A cancelled receive takes nothing more: the message sent after it with
 * its tag goes to the receive posted after it, not into its buffer. */
static void test_cancel_then_receive(void)
{
    int stale = -1, got = -1, v = 42, cancelled = 0, done;
    MPI_Request q[2];
    MPI_Status st;

    MPI_Irecv(&stale, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &q[0]);
    CHECK_EQ(MPI_Cancel(&q[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&q[0], &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);
    MPI_Isend(&v, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &q[0]);
    MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &q[1]);
    done = done_within_polls(2, q);
    if (!done)
        fprintf(stderr, "a receive posted after a cancelled one: not done after %d tests "
                "(the cancelled receive's buffer holds %d)\n", POLLS, stale);
    CHECK(done);
    CHECK_EQ(got, 42);
    CHECK_EQ(stale, -1);
}

/* A message over the eager limit sent to oneself before its receive is
 * posted (a rendezvous that arrives unexpected) and a burst of eager ones
 * (their unexpected buffers and credits used up and given back): every
 * byte arrives, in order, within the bound. */
static void test_unexpected_to_self(void)
{
    enum { BIG = 1 << 18, SMALL = 1000, NSMALL = 3000 };
    int *big_out = malloc(BIG * sizeof(int)), *big_in = malloc(BIG * sizeof(int));
    static int small_out[NSMALL][SMALL / 4], small_in[NSMALL][SMALL / 4];
    static MPI_Request q[2 * NSMALL];
    size_t bad = 0;
    int done, flag;

    REQUIRE(big_out != NULL && big_in != NULL);
    if (big_out == NULL || big_in == NULL)
        return;
    for (int i = 0; i < BIG; i++) {
        big_out[i] = i * 3 + 1;
        big_in[i] = -1;
    }
    MPI_Isend(big_out, BIG, MPI_INT, 0, 8, MPI_COMM_SELF, &q[0]);
    for (int i = 0; i < 100; i++)
        MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE); /* it arrives, with no receive */
    MPI_Irecv(big_in, BIG, MPI_INT, 0, 8, MPI_COMM_SELF, &q[1]);
    done = done_within_polls(2, q);
    if (!done)
        fprintf(stderr, "an unexpected rendezvous to oneself: not done after %d tests\n",
                POLLS);
    CHECK(done);
    for (int i = 0; i < BIG; i++)
        bad += big_in[i] != i * 3 + 1;
    CHECK_EQ(bad, 0);
    free(big_out);
    free(big_in);

    for (int k = 0; k < NSMALL; k++) {
        for (int i = 0; i < SMALL / 4; i++) {
            small_out[k][i] = k * 1000 + i;
            small_in[k][i] = -1;
        }
        MPI_Isend(small_out[k], SMALL / 4, MPI_INT, 0, 9, MPI_COMM_SELF, &q[k]);
    }
    for (int k = 0; k < NSMALL; k++)
        MPI_Irecv(small_in[k], SMALL / 4, MPI_INT, 0, 9, MPI_COMM_SELF, &q[NSMALL + k]);
    done = done_within_polls(2 * NSMALL, q);
    if (!done)
        fprintf(stderr, "%d eager messages to oneself, unexpected: not done after %d tests\n",
                NSMALL, POLLS);
    CHECK(done);
    bad = 0;
    for (int k = 0; k < NSMALL; k++)
        for (int i = 0; i < SMALL / 4; i++)
            bad += small_in[k][i] != k * 1000 + i;
    CHECK_EQ(bad, 0);
}

/* MPI_Recv of a message already here (onic_mpi_p2p_recv_now: no request)
 * hands its unexpected space back: after eager messages sent to oneself
 * (more than half the credit's worth) in batches of 20, each batch received with MPI_Recv once a
 * zero-byte marker sent last has come (so the batch is all here), every
 * byte that landed in the unexpected buffers has been consumed, and the
 * credit this process holds toward itself plus what it owes itself is the
 * whole credit again. */
static void test_recv_now_returns_space(void)
{
    uint64_t landed = 0, consumed = 0;
    /* Batches enough to charge more than half the credit (64 bytes a
     * message): the credit must have come back in a batch on the way. */
    int v, bad = 0, nb = (int)(onic_mpi_g.credits_per_peer / ONIC_MPI_CHARGE_MIN / 20) + 1;
    MPI_Status st;

    for (int b = 0; b < nb; b++) {
        for (int i = 0; i < 20; i++) {
            v = b * 20 + i;
            MPI_Send(&v, 1, MPI_INT, 0, 11, MPI_COMM_SELF);
        }
        MPI_Send(NULL, 0, MPI_INT, 0, 12, MPI_COMM_SELF);
        MPI_Recv(NULL, 0, MPI_INT, 0, 12, MPI_COMM_SELF, &st);
        for (int i = 0; i < 20; i++) {
            v = -1;
            CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &st), MPI_SUCCESS);
            bad += v != b * 20 + i || st.MPI_TAG != 11 || st.MPI_SOURCE != 0;
        }
    }
    CHECK_EQ(bad, 0);
    for (onic_mpi_ubuf_t *u = onic_mpi_g.ubufs; u != NULL; u = u->next) {
        landed += u->landed;
        consumed += u->consumed;
    }
    CHECK(landed > 0);
    CHECK_EQ(consumed, landed);
    CHECK_EQ(onic_mpi_g.credits[0] + onic_mpi_g.owed[0], onic_mpi_g.credits_per_peer);
    CHECK(onic_mpi_g.owed[0] < onic_mpi_g.credits_per_peer / 2); /* returned in batches */

    /* A contiguous type whose data starts 8 bytes in: the message lands
     * there, not at the buffer's start. */
    {
        int out[2] = {41, 42}, in[4] = {-1, -1, -1, -1}, len = 2;
        MPI_Aint disp = 8;
        MPI_Datatype t;
        MPI_Type_create_hindexed(1, &len, &disp, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Send(out, 2, MPI_INT, 0, 13, MPI_COMM_SELF);
        MPI_Send(NULL, 0, MPI_INT, 0, 12, MPI_COMM_SELF);
        MPI_Recv(NULL, 0, MPI_INT, 0, 12, MPI_COMM_SELF, &st);
        CHECK_EQ(MPI_Recv(in, 1, t, 0, 13, MPI_COMM_SELF, &st), MPI_SUCCESS);
        CHECK(in[0] == -1 && in[1] == -1 && in[2] == 41 && in[3] == 42);
        MPI_Type_free(&t);
    }
}

/* MPI_Improbe with nothing to match sets *flag to false; once a message to
 * oneself is there it sets it to true within the bound, with the message's
 * source and tag, and MPI_Mrecv receives it and sets the handle to
 * MPI_MESSAGE_NULL (MPI 4.0, 3.8.2); MPI_Mprobe returns with the message. */
static void test_probe_to_self(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request q;
    int flag = 7, v = 31, got = -1, rc = MPI_SUCCESS;
    long polls = 0;

    CHECK_EQ(MPI_Improbe(0, 11, MPI_COMM_SELF, &flag, &msg, &st), MPI_SUCCESS);
    if (flag != 0)
        fprintf(stderr, "MPI_Improbe with no message to match: flag %d, not false\n", flag);
    CHECK_EQ(flag, 0);
    MPI_Isend(&v, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &q);
    flag = 0;
    while (!flag && polls++ < POLLS && rc == MPI_SUCCESS)
        rc = MPI_Improbe(0, 11, MPI_COMM_SELF, &flag, &msg, &st);
    CHECK_EQ(rc, MPI_SUCCESS);
    if (!flag)
        fprintf(stderr, "MPI_Improbe of a message sent to oneself: flag still false after "
                "%d calls\n", POLLS);
    CHECK_EQ(flag, 1);
    if (!flag)
        return;
    CHECK_EQ(st.MPI_SOURCE, 0);
    CHECK_EQ(st.MPI_TAG, 11);
    CHECK(msg != MPI_MESSAGE_NULL);
    CHECK_EQ(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st), MPI_SUCCESS);
    CHECK_EQ(got, 31);
    CHECK(msg == MPI_MESSAGE_NULL);
    CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);

    /* MPI_Mprobe returns with the one message there is (it must not go on
     * looking after it has one: then only the alarm ends it). */
    v = 32;
    got = -1;
    MPI_Isend(&v, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &q);
    CHECK_EQ(MPI_Mprobe(0, 11, MPI_COMM_SELF, &msg, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_TAG, 11);
    CHECK_EQ(MPI_Mrecv(&got, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(got, 32);
    CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
}

/* Matched messages never received are freed by MPI_Finalize: as many as
 * fill the message table to its capacity (64 slots, slot 0 MPI_PROC_NULL's
 * message), so a walk one slot past the table's used part reads outside it
 * (AddressSanitizer). */
static void test_messages_at_finalize(void)
{
    static int v[64];
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request q;
    int index = 0, made = 0, flag;
    long polls;

    do {
        v[made % 64] = made;
        MPI_Isend(&v[made % 64], 1, MPI_INT, 0, 12, MPI_COMM_SELF, &q);
        flag = 0;
        polls = 0;
        while (!flag && polls++ < POLLS)
            MPI_Improbe(0, 12, MPI_COMM_SELF, &flag, &msg, MPI_STATUS_IGNORE);
        CHECK_EQ(flag, 1);
        if (!flag)
            return;
        CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        index = msg & (ONIC_MPI_HANDLE_INDEX_MAX - 1);
        made++;
    } while (made < 1000 && index != 63);
    CHECK_EQ(index, 63); /* left to MPI_Finalize */
}

/* ("pending") MPI_Finalize with four receives never completed is
 * MPI_ERR_PENDING, and its message counts the four and names the first
 * three (call, peer, tag), then "...". The message goes to the debug log
 * under MPI_ERRORS_RETURN, read here from stderr. The last receive is on
 * a communicator freed since, which it kept: MPI_Finalize counts it and
 * releases the communicator with the rest. */
static void test_finalize_pending(void)
{
    static int in[4];
    MPI_Request q[4];
    MPI_Comm d;
    char said[4096];
    const char *at;
    FILE *tmp;
    int saved, level, named = 0, tags = 0;

    MPI_Comm_dup(MPI_COMM_SELF, &d);
    for (int i = 0; i < 4; i++)
        MPI_Irecv(&in[i], 1, MPI_INT, 0, 3 + i, i < 3 ? MPI_COMM_SELF : d, &q[i]);
    MPI_Comm_free(&d);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    said_catch(&tmp, &saved, &level);
    CHECK_EQ(MPI_Finalize(), MPI_ERR_PENDING);
    said_caught(tmp, saved, level, said, sizeof(said));
    CHECK(strstr(said, "MPI_ERR_PENDING: 4 operations never completed (MPI_Irecv from rank 0 "
                 "tag ") != NULL);
    for (at = said; (at = strstr(at, "MPI_Irecv from rank 0 tag ")) != NULL; at++) {
        int tag = atoi(at + strlen("MPI_Irecv from rank 0 tag "));
        named++;
        if (tag >= 3 && tag <= 6)
            tags |= 1 << (tag - 3);
    }
    CHECK_EQ(named, 3);
    CHECK(tags == 7 || tags == 14 || tags == 13 || tags == 11); /* three different ones */
    CHECK(strstr(said, "; ...); complete every request") != NULL);
    if (named != 3)
        fprintf(stderr, "MPI_Finalize said:\n%s", said);
}

/* A non-blocking reduction carries at most 2^31 - 1 bytes (its schedule
 * moves them as one int count); a blocking one has no such limit. The
 * limit is checked before anything is allocated or copied: with every
 * allocation failing, a count over it is MPI_ERR_COUNT, and a count of
 * exactly 2^31 - 1 bytes passes it and fails for want of memory (no buffer
 * is touched either way). The blocking one's type has a gap after each
 * element, so that its data is packed into a buffer (a contiguous type's
 * is reduced in the receive buffer, with nothing to allocate). */
static void test_reduce_limit(void)
{
    const char *call[3] = {"MPI_Iallreduce", "MPI_Ireduce", "MPI_Iscan"};
    short in[4] = {0}, out[4] = {0};
    MPI_Datatype gapped;
    MPI_Request r;

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int k = 0; k < 3; k++) {
        for (int over = 0; over < 2; over++) {
            MPI_Datatype t = over ? MPI_SHORT : MPI_BYTE;
            int rc;

            r = MPI_REQUEST_NULL;
            onic_mem_fail_after(0);
            rc = k == 0 ? MPI_Iallreduce(in, out, INT32_MAX, t, MPI_BOR, MPI_COMM_SELF, &r)
                 : k == 1 ? MPI_Ireduce(in, out, INT32_MAX, t, MPI_BOR, 0, MPI_COMM_SELF, &r)
                          : MPI_Iscan(in, out, INT32_MAX, t, MPI_BOR, MPI_COMM_SELF, &r);
            onic_mem_fail_after(-1);
            if (rc != (over ? MPI_ERR_COUNT : MPI_ERR_NO_MEM))
                fprintf(stderr, "%s of 2^31 - 1 elements of %s: error %d\n", call[k],
                        over ? "MPI_SHORT" : "MPI_BYTE", rc);
            CHECK_EQ(rc, over ? MPI_ERR_COUNT : MPI_ERR_NO_MEM);
            CHECK(r == MPI_REQUEST_NULL);
        }
    }
    MPI_Type_create_resized(MPI_SHORT, 0, 2 * sizeof(short), &gapped);
    MPI_Type_commit(&gapped);
    onic_mem_fail_after(0);
    CHECK_EQ(MPI_Allreduce(in, out, INT32_MAX, gapped, MPI_BOR, MPI_COMM_SELF), MPI_ERR_NO_MEM);
    onic_mem_fail_after(-1);
    MPI_Type_free(&gapped);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* The descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory's own */
}

/* A shared window's member refuses a hand-over that is not one (wrong
 * length, wrong magic, no descriptor) or whose memory is not what it says
 * (the size named but memory that is not sealed and of that size), and
 * closes the descriptor it carried: what comes on the socket is not
 * trusted, and a forged message leaks nothing. A true one is taken. */
static void test_shared_handover_refused(void)
{
    static const char *const what[5] = {"3 bytes", "16 zero bytes", "16 bytes, no descriptor",
                                        "unsealed memory of the size named",
                                        "sealed memory of the size named"};
    char said[2048];
    FILE *tmp;
    int saved, level;

    for (int k = 0; k < 5; k++) {
        onic_mpi_wsh_msg_t msg = {k >= 3 ? ONIC_MPI_WSH_MAGIC : 0, k >= 3 ? 4096 : 0};
        int sv[2], before, got, mem = k == 4 ? onic_shmfd_create("test-handover", 4096)
                                             : memfd_create("test-handover", MFD_CLOEXEC);

        REQUIRE(mem >= 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
        if (k == 3)
            REQUIRE(ftruncate(mem, 4096) == 0);
        CHECK_EQ(onic_shmfd_send(sv[0], &msg, k == 0 ? 3 : sizeof(msg), &mem, k == 2 ? 0 : 1),
                 ONIC_OK);
        close(mem); /* in flight: only the message holds it now */
        before = open_fds();
        said_catch(&tmp, &saved, &level);
        got = onic_mpi_wsh_take(sv[1], 4096);
        said_caught(tmp, saved, level, said, sizeof(said));
        if (k == 4) {
            CHECK(got >= 0 && open_fds() == before + 1);
            if (got >= 0)
                close(got);
        } else {
            if (got >= 0 || open_fds() != before)
                fprintf(stderr, "hand-over of %s: took %d, %d descriptors open before, %d "
                        "after\n", what[k], got, before, open_fds());
            CHECK_EQ(got, -1);
            CHECK_EQ(open_fds(), before);
            CHECK(strstr(said, k == 3 ? "a shared window's memory" : "did not hand over its "
                                                                     "memory") != NULL);
        }
        close(sv[0]);
        close(sv[1]);
    }
}

/* Dropping a group reference: none for NULL (error paths drop what they
 * made, made or not); the last one of a group frees it (seen by ASan). */
static void test_group_unref(void)
{
    onic_mpi_group_t *g = onic_mpi_group_new(3), *c;

    onic_mpi_group_unref(NULL);
    REQUIRE(g != NULL);
    g->world[2] = 7;
    c = onic_mpi_group_copy(g);
    REQUIRE(c != NULL);
    CHECK(c->size == 3 && c->world[2] == 7 && c->refs == 1);
    g->refs++;
    onic_mpi_group_unref(g);
    CHECK_EQ(g->refs, 1);
    onic_mpi_group_unref(g);
    onic_mpi_group_unref(c);
}

/* MPI_Init with the k-th allocation failing, for k = 0, 1, ... until it
 * succeeds, each in a child process: every failure ends the process with
 * MPI's error (MPI_ERRORS_ARE_FATAL: an exit status, the class), never a
 * crash, and a later allocation never fails in a way that lets MPI_Init
 * go on with something missing. The children's messages are not read (the
 * same "no memory" many times over). */
static void test_init_nomem(void)
{
    int k, failed_cleanly = 0;

    for (k = 0; k < 5000; k++) {
        int st = 0;
        pid_t p = fork();

        REQUIRE(p >= 0);
        if (p == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, 2);
            onic_mem_fail_after(k);
            if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
                _exit(100); /* returned an error: as good as the fatal handler's exit */
            onic_mem_fail_after(-1);
            MPI_Finalize();
            _exit(0);
        }
        REQUIRE(waitpid(p, &st, 0) == p);
        if (WIFSIGNALED(st))
            fprintf(stderr, "MPI_Init with allocation %d failing: killed by signal %d\n", k,
                    WTERMSIG(st));
        CHECK(WIFEXITED(st));
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            break;
        failed_cleanly++;
    }
    CHECK(k < 5000);          /* it succeeds once enough allocations do */
    CHECK(failed_cleanly > 0); /* and the first allocation is MPI_Init's */
}

static const char *stage = "MPI_Init";

static void on_alarm(int sig)
{
    char msg[160];
    int n = snprintf(msg, sizeof(msg), "test_mpi_requests: %s has not returned after 60 s "
                     "(the whole test takes under a second): a call that never returns\n",
                     stage);

    (void)sig;
    if (write(2, msg, n > 0 ? (size_t)n : 0) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

/* What a request holds besides itself -- a packed copy of a
 * non-contiguous send or receive, a reference to a derived type, the
 * buffer a rendezvous pull into an in-place receive lands in -- is let go
 * when it ends: rounds of such sends and receives to oneself (non-blocking,
 * blocking and persistent, started twice; eager and rendezvous; packed and
 * in place) and the types freed after them leave the library's allocations
 * where they were. The first round sizes the tables and pools, which keep
 * what they took. */
/* Until a message with tag to oneself has arrived (MPI_Iprobe polls): its
 * receive, posted next, then finds it already here. */
static void probe_until_here(int tag)
{
    int flag = 0;

    for (int i = 0; i < 1000000 && !flag; i++)
        MPI_Iprobe(0, tag, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    CHECK(flag);
}

static void test_requests_let_go(void)
{
    enum { SPAN = 32 * 512 }; /* ints */
    static int out[SPAN], in[SPAN];
    /* 4 ints; 3000 blocks of one (12 KB, eager, packed both ways); 32
     * blocks of 256 (32 KB: rendezvous above the 16 KB eager limit,
     * received in place) */
    const int nblk[3] = {4, 3000, 32}, blen[3] = {1, 1, 256}, stride[3] = {1, 2, 512};
    MPI_Request q[4];
    MPI_Status st[4];
    MPI_Datatype t[3];
    long before = 0;

    for (int i = 0; i < SPAN; i++)
        out[i] = i;
    for (int round = 0; round < 4; round++) {
        if (round == 1) {
            onic_mem_count_start();
            before = onic_mem_count_net();
        }
        t[0] = MPI_INT;
        for (int c = 1; c < 3; c++) {
            REQUIRE(MPI_Type_vector(nblk[c], blen[c], stride[c], MPI_INT, &t[c]) == MPI_SUCCESS);
            REQUIRE(MPI_Type_commit(&t[c]) == MPI_SUCCESS);
        }
        for (int c = 0; c < 3; c++) {
            int n = c == 0 ? nblk[0] : 1;
            /* receive posted first, blocking (both in one call), send first, persistent with
             * the send started first (a rendezvous header then waits for
             * its receive, which pulls it) */
            for (int how = 0; how < 4; how++) {
                for (int start = 0; start < (how == 3 ? 2 : 1); start++) {
                    int bad = 0, tag = 30 + 4 * c + how;
                    memset(in, 0xff, sizeof(in));
                    if (how == 0) {
                        CHECK_EQ(MPI_Irecv(in, n, t[c], 0, tag, MPI_COMM_SELF, &q[0]),
                                 MPI_SUCCESS);
                        CHECK_EQ(MPI_Isend(out, n, t[c], 0, tag, MPI_COMM_SELF, &q[1]),
                                 MPI_SUCCESS);
                        CHECK_EQ(MPI_Waitall(2, q, st), MPI_SUCCESS);
                    } else if (how == 1) { /* a rendezvous MPI_Send to oneself would wait */
                        CHECK_EQ(MPI_Sendrecv(out, n, t[c], 0, tag, in, n, t[c], 0, tag,
                                              MPI_COMM_SELF, &st[0]), MPI_SUCCESS);
                    } else if (how == 2) {
                        CHECK_EQ(MPI_Isend(out, n, t[c], 0, tag, MPI_COMM_SELF, &q[1]),
                                 MPI_SUCCESS);
                        probe_until_here(tag);
                        CHECK_EQ(MPI_Irecv(in, n, t[c], 0, tag, MPI_COMM_SELF, &q[0]),
                                 MPI_SUCCESS);
                        CHECK_EQ(MPI_Waitall(2, q, st), MPI_SUCCESS);
                    } else {
                        if (start == 0) {
                            CHECK_EQ(MPI_Send_init(out, n, t[c], 0, tag, MPI_COMM_SELF, &q[2]),
                                     MPI_SUCCESS);
                            CHECK_EQ(MPI_Recv_init(in, n, t[c], 0, tag, MPI_COMM_SELF, &q[3]),
                                     MPI_SUCCESS);
                        }
                        CHECK_EQ(MPI_Start(&q[2]), MPI_SUCCESS);
                        probe_until_here(tag);
                        CHECK_EQ(MPI_Start(&q[3]), MPI_SUCCESS);
                        CHECK_EQ(MPI_Waitall(2, &q[2], st), MPI_SUCCESS);
                    }
                    for (int b = 0; b < nblk[c]; b++)
                        for (int i = 0; i < blen[c]; i++) {
                            int at = b * stride[c] + i;
                            bad += in[at] != at;
                            bad += i == blen[c] - 1 && stride[c] > blen[c] && in[at + 1] != -1;
                        }
                    CHECK_EQ(bad, 0);
                }
            }
            CHECK_EQ(MPI_Request_free(&q[2]), MPI_SUCCESS);
            CHECK_EQ(MPI_Request_free(&q[3]), MPI_SUCCESS);
        }
        for (int c = 1; c < 3; c++)
            REQUIRE(MPI_Type_free(&t[c]) == MPI_SUCCESS);
    }
    CHECK_EQ(onic_mem_count_net(), before);
}

/* A request's handle after the request has gone (a copy kept past the
 * MPI_Waitall that freed it) names nothing: every call that takes one
 * refuses it with MPI_ERR_REQUEST and leaves it as it was. A probe without
 * a status is MPI_ERR_ARG. */
static void test_stale_request(void)
{
    int v = 7, w = 0, flag = -1;
    MPI_Request q[2], stale, h;
    MPI_Status st;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Irecv(&w, 1, MPI_INT, 0, 90, MPI_COMM_SELF, &q[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, 0, 90, MPI_COMM_SELF, &q[1]), MPI_SUCCESS);
    stale = q[0];
    CHECK_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(w, 7);
    h = stale;
    CHECK_EQ(MPI_Wait(&h, &st), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Test(&h, &flag, &st), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Request_get_status(h, &flag, &st), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Start(&h), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Cancel(&h), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Request_free(&h), MPI_ERR_REQUEST);
    CHECK(h == stale);
    /* A null request among live ones gets the empty status (MPI 4.0
     * 3.7.3): any source, any tag, nothing received. */
    {
        MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Status sts[2];
        int count = -1;
        memset(sts, 0x5a, sizeof(sts));
        CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, 0, 92, MPI_COMM_SELF, &two[1]), MPI_SUCCESS);
        CHECK_EQ(MPI_Waitall(2, two, sts), MPI_SUCCESS);
        CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[0].MPI_TAG == MPI_ANY_TAG);
        CHECK(MPI_Get_count(&sts[0], MPI_INT, &count) == MPI_SUCCESS && count == 0);
        CHECK_EQ(MPI_Recv(&w, 1, MPI_INT, 0, 92, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    /* MPI_Testany with only a receive active, whose message is sent but not
     * yet delivered: its own poll delivers it. */
    {
        int idx = -1;
        CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 93, MPI_COMM_SELF), MPI_SUCCESS);
        CHECK_EQ(MPI_Irecv(&w, 1, MPI_INT, 0, 93, MPI_COMM_SELF, &q[0]), MPI_SUCCESS);
        flag = 0;
        for (int i = 0; i < 1000 && !flag; i++)
            CHECK_EQ(MPI_Testany(1, q, &idx, &flag, &st), MPI_SUCCESS);
        CHECK(flag && idx == 0 && st.MPI_TAG == 93);
        if (!flag)
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    }
    /* A probe with no status to fill is refused too, a message there or not. */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 91, MPI_COMM_SELF), MPI_SUCCESS);
    CHECK_EQ(MPI_Probe(0, 91, MPI_COMM_SELF, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Iprobe(0, 91, MPI_COMM_SELF, &flag, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Recv(&w, 1, MPI_INT, 0, 91, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int size, nomem = argc == 2 && strcmp(argv[1], "nomem") == 0;
    int pending = argc == 2 && strcmp(argv[1], "pending") == 0;

    if (argc == 2 && strcmp(argv[1], "initnomem") == 0) {
        test_init_nomem(); /* before this process's own MPI_Init */
        return check_summary("test_mpi_requests initnomem");
    }

    /* A call that never returns (a loop inside the library) fails the test
     * here, naming its part, rather than by ctest's timeout. */
    signal(SIGALRM, on_alarm);
    alarm(60);
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size == 1);
    if (pending) {
        stage = "MPI_Finalize with requests pending";
        test_finalize_pending();
        return check_summary("test_mpi_requests pending");
    }
    if (nomem) {
        if (test_rma_nomem() != 0)
            return check_summary("test_mpi_requests nomem"); /* no MPI_Finalize: it would wait */
        stage = "test_topo_nomem";
        test_topo_nomem();
        stage = "test_sendrecv_nomem";
        test_sendrecv_nomem();
    } else {
        stage = "test_keyvals";
        test_keyvals(); /* first: no keyval made before */
        stage = "test_many";
        test_many();
        stage = "test_recv_now_returns_space";
        test_recv_now_returns_space();
        stage = "test_requests_let_go";
        test_requests_let_go();
        stage = "test_stale_request";
        test_stale_request();
        stage = "test_args";
        test_args();
        stage = "test_info";
        test_info();
        stage = "test_root_named";
        test_root_named();
        stage = "test_last_class_named";
        test_last_class_named();
        stage = "test_error_never_success";
        test_error_never_success();
        stage = "test_args_named";
        test_args_named();
        stage = "test_new_kinds_many";
        test_new_kinds_many();
        stage = "test_new_kinds_named";
        test_new_kinds_named();
        stage = "test_type_errors_named";
        test_type_errors_named();
        stage = "test_dims_no_memory";
        test_dims_no_memory();
        stage = "test_fatal_status";
        test_fatal_status();
        stage = "test_handle_cap";
        test_handle_cap();
        stage = "test_handle_generations";
        test_handle_generations();
        stage = "test_group_unref";
        test_group_unref();
        stage = "test_shared_handover_refused";
        test_shared_handover_refused();
        stage = "test_reduce_limit";
        test_reduce_limit();
        stage = "test_cancel_then_receive";
        test_cancel_then_receive();
        stage = "test_unexpected_to_self";
        test_unexpected_to_self();
        stage = "test_probe_to_self";
        test_probe_to_self();
        stage = "test_messages_at_finalize";
        test_messages_at_finalize(); /* last: MPI_Finalize frees them */
    }
    stage = "MPI_Finalize";
    MPI_Finalize();
    return check_summary(nomem ? "test_mpi_requests nomem" : "test_mpi_requests");
}
