/* onic's MPI beyond point-to-point, tested through onicrun: `mpi_more
 * NAME...` runs the named tests (or `all`) on every rank: Cartesian
 * topologies, derived datatypes and packing, the v-collectives, scans and
 * user operations, and the smaller calls real programs use. Each rank
 * counts its failed checks and the job fails if any rank's count is not
 * zero. Every expectation is computed from the ranks and sizes, never read
 * from a table. Runs at any number of processes, 1 included. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failed;

#define CHECK(_c) \
    do { \
        if (!(_c)) { \
            failed++; \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #_c); \
        } \
    } while (0)
#define CHECK_EQ(_a, _b) \
    do { \
        long long _x = (long long)(_a), _y = (long long)(_b); \
        if (_x != _y) { \
            failed++; \
            fprintf(stderr, "rank %d: %s:%d: %s == %s (%lld != %lld)\n", rank, __FILE__, \
                    __LINE__, #_a, #_b, _x, _y); \
        } \
    } while (0)

/* --- Cartesian topologies ------------------------------------------------------------ */
/* The smallest spread (largest minus smallest factor) of n over two
 * dimensions, by trying every divisor. */
static int topo_best_spread2(int n)
{
    int best = n - 1;
    for (int a = 1; a <= n; a++)
        if (n % a == 0 && a >= n / a && a - n / a < best)
            best = a - n / a;
    return best;
}

static void test_topo_dims(void)
{
    int d[4];

    /* Known splits, worked by hand from the standard's rule. */
    memset(d, 0, sizeof(d));
    CHECK_EQ(MPI_Dims_create(6, 2, d), MPI_SUCCESS);
    CHECK(d[0] == 3 && d[1] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(7, 2, d);
    CHECK(d[0] == 7 && d[1] == 1);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(12, 3, d);
    CHECK(d[0] == 3 && d[1] == 2 && d[2] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(16, 4, d);
    CHECK(d[0] == 2 && d[1] == 2 && d[2] == 2 && d[3] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(24, 2, d);
    CHECK(d[0] == 6 && d[1] == 4);
    d[0] = 0; d[1] = 3; d[2] = 0;
    MPI_Dims_create(12, 3, d);
    CHECK(d[0] == 2 && d[1] == 3 && d[2] == 2);
    d[0] = 2; d[1] = 3;
    CHECK_EQ(MPI_Dims_create(6, 2, d), MPI_SUCCESS); /* all given, product right */
    CHECK(d[0] == 2 && d[1] == 3);
    /* Every count to 200 in two dimensions: product, order, best balance. */
    for (int n = 1; n <= 200; n++) {
        d[0] = d[1] = 0;
        MPI_Dims_create(n, 2, d);
        CHECK_EQ(d[0] * d[1], n);
        CHECK(d[0] >= d[1]);
        CHECK_EQ(d[0] - d[1], topo_best_spread2(n));
    }
    /* And to 100 in three and four: product and order. */
    for (int k = 3; k <= 4; k++)
        for (int n = 1; n <= 100; n++) {
            long long p = 1;
            memset(d, 0, sizeof(d));
            MPI_Dims_create(n, k, d);
            for (int i = 0; i < k; i++) {
                p *= d[i];
                if (i > 0)
                    CHECK(d[i - 1] >= d[i]);
            }
            CHECK_EQ(p, n);
        }
}

static void test_topo(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r, src, dst, nd, st;
    MPI_Comm cart, sub, dup;

    test_topo_dims();
    /* A 2-D grid over every process, periodic in dimension 0 only. */
    MPI_Dims_create(size, 2, dims);
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart), MPI_SUCCESS);
    CHECK(cart != MPI_COMM_NULL);
    MPI_Topo_test(cart, &st);
    CHECK_EQ(st, MPI_CART);
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    CHECK_EQ(st, MPI_UNDEFINED);
    MPI_Cartdim_get(cart, &nd);
    CHECK_EQ(nd, 2);
    MPI_Comm_rank(cart, &r);
    CHECK_EQ(r, rank); /* no reordering */
    {
        int gd[2], gp[2], gc[2];
        MPI_Cart_get(cart, 2, gd, gp, gc);
        CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
        CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]);
    }
    for (int q = 0; q < size; q++) {
        int back;
        MPI_Cart_coords(cart, q, 2, coords);
        CHECK(coords[0] == q / dims[1] && coords[1] == q % dims[1]);
        MPI_Cart_rank(cart, coords, &back);
        CHECK_EQ(back, q);
    }
    /* Periodic dimension 0 wraps coordinates given to MPI_Cart_rank. */
    coords[0] = -1;
    coords[1] = 0;
    MPI_Cart_rank(cart, coords, &r);
    CHECK_EQ(r, (dims[0] - 1) * dims[1]);
    {
        int x = rank / dims[1], y = rank % dims[1];
        MPI_Cart_shift(cart, 0, 1, &src, &dst);
        CHECK_EQ(src, ((x - 1 + dims[0]) % dims[0]) * dims[1] + y);
        CHECK_EQ(dst, ((x + 1) % dims[0]) * dims[1] + y);
        MPI_Cart_shift(cart, 1, 1, &src, &dst);
        CHECK_EQ(src, y == 0 ? MPI_PROC_NULL : rank - 1);
        CHECK_EQ(dst, y == dims[1] - 1 ? MPI_PROC_NULL : rank + 1);
        MPI_Cart_shift(cart, 1, -2, &src, &dst);
        CHECK_EQ(src, y + 2 >= dims[1] ? MPI_PROC_NULL : rank + 2);
        CHECK_EQ(dst, y - 2 < 0 ? MPI_PROC_NULL : rank - 2);
        /* A halo exchange along each dimension: each side gets its
         * neighbour's rank, or keeps -5 at an open edge. */
        for (int dir = 0; dir < 2; dir++) {
            int got[2] = {-5, -5};
            MPI_Cart_shift(cart, dir, 1, &src, &dst);
            MPI_Sendrecv(&rank, 1, MPI_INT, dst, 7, &got[0], 1, MPI_INT, src, 7, cart,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(&rank, 1, MPI_INT, src, 8, &got[1], 1, MPI_INT, dst, 8, cart,
                         MPI_STATUS_IGNORE);
            CHECK_EQ(got[0], src == MPI_PROC_NULL ? -5 : src);
            CHECK_EQ(got[1], dst == MPI_PROC_NULL ? -5 : dst);
        }
        /* Rows: keep dimension 1. */
        int remain[2] = {0, 1}, sr, ss, sd[1], sp[1], sc[1];
        CHECK_EQ(MPI_Cart_sub(cart, remain, &sub), MPI_SUCCESS);
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &ss);
        CHECK_EQ(ss, dims[1]);
        CHECK_EQ(sr, y);
        MPI_Cartdim_get(sub, &nd);
        CHECK_EQ(nd, 1);
        MPI_Cart_get(sub, 1, sd, sp, sc);
        CHECK(sd[0] == dims[1] && sp[0] == 0 && sc[0] == y);
        /* The row's sum of world ranks: x*dims1*dims1 + dims1*(dims1-1)/2. */
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        CHECK_EQ(sum, x * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
        MPI_Comm_free(&sub);
        /* Nothing kept: a grid of one process, with no dimensions. */
        remain[1] = 0;
        MPI_Cart_sub(cart, remain, &sub);
        MPI_Comm_size(sub, &ss);
        CHECK_EQ(ss, 1);
        MPI_Cartdim_get(sub, &nd);
        CHECK_EQ(nd, 0);
        MPI_Comm_free(&sub);
    }
    /* A duplicate keeps the grid. */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_CART);
    MPI_Cart_shift(dup, 0, 1, &src, &dst);
    CHECK_EQ(dst, ((rank / dims[1] + 1) % dims[0]) * dims[1] + rank % dims[1]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);

    /* A 3-D periodic grid: a shift by the whole size comes back home. */
    {
        int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1}, c3[3];
        MPI_Dims_create(size, 3, d3);
        MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cart);
        MPI_Cart_shift(cart, 2, d3[2], &src, &dst);
        CHECK_EQ(src, rank);
        CHECK_EQ(dst, rank);
        MPI_Cart_coords(cart, rank, 3, c3);
        CHECK_EQ((c3[0] * d3[1] + c3[1]) * d3[2] + c3[2], rank);
        MPI_Comm_free(&cart);
    }
    /* A grid smaller than the communicator: the last process is left out. */
    if (size > 1) {
        int d1[1] = {size - 1}, p1[1] = {0}, s1;
        MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
        if (rank == size - 1) {
            CHECK(cart == MPI_COMM_NULL);
        } else {
            MPI_Comm_size(cart, &s1);
            CHECK_EQ(s1, size - 1);
            MPI_Comm_free(&cart);
        }
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int big[2] = {size + 1, 1}, zero[2] = {0, 1}, neg[2] = {-1, 0}, p[2] = {0, 0};
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, big, p, 0, &cart), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, p, 0, &cart), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, p, 0, &cart), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cart_coords(MPI_COMM_NULL, 0, 1, coords), MPI_ERR_COMM);
        CHECK_EQ(MPI_Dims_create(6, 2, neg), MPI_ERR_DIMS);
        int five[2] = {5, 0};
        CHECK_EQ(MPI_Dims_create(12, 2, five), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Dims_create(0, 2, zero), MPI_ERR_ARG);
        int d1[1] = {size}, p1[1] = {0}, bad[1] = {size};
        MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
        CHECK_EQ(MPI_Cart_rank(cart, bad, &r), MPI_ERR_RANK);
        CHECK_EQ(MPI_Cart_coords(cart, size, 1, coords), MPI_ERR_RANK);
        CHECK_EQ(MPI_Cart_coords(cart, 0, 0, coords), MPI_ERR_ARG);
        CHECK_EQ(MPI_Cart_shift(cart, 1, 1, &src, &dst), MPI_ERR_DIMS);
        MPI_Comm_free(&cart);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- The runner ------------------------------------------------------------------------ */
typedef struct {
    const char *name;
    void (*fn)(void);
} test_t;

static const test_t tests[] = {
    {"topo", test_topo},
};

int main(int argc, char **argv)
{
    int total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        int known = strcmp(argv[a], "all") == 0;
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
            known |= strcmp(argv[a], tests[t].name) == 0;
        if (!known) {
            if (rank == 0) {
                fprintf(stderr, "mpi_more: unknown test \"%s\"; the tests are: all", argv[a]);
                for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
                    fprintf(stderr, " %s", tests[t].name);
                fprintf(stderr, "\n");
            }
            MPI_Finalize();
            return 2;
        }
    }
    if (argc < 2 && rank == 0)
        fprintf(stderr, "mpi_more: no test named; running none\n");
    for (int a = 1; a < argc; a++)
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
            if (strcmp(argv[a], "all") == 0 || strcmp(argv[a], tests[t].name) == 0) {
                double t0 = MPI_Wtime();
                tests[t].fn();
                if (rank == 0)
                    printf("%-8s %s (%.2f s)\n", tests[t].name, failed ? "FAILED" : "ok",
                           MPI_Wtime() - t0);
                fflush(stdout);
            }
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    return total != 0;
}
