/* 2D Jacobi sweep, as paper 001 (section 4.4, figure 12) runs it: every
 * iteration each process starts the exchange of its boundary with all its
 * neighbours (MPI_Irecv / MPI_Isend), updates its interior, then completes
 * the exchange with MPI_Waitall and updates the points next to the
 * boundary. The time spent in MPI_Waitall is what a runtime that moves data
 * while the application computes takes away.
 *
 *   jacobi [--n N,..] [--iters I] [--reps R] [--verify 0|1]
 *
 * The processes form a PX x PY grid (as square as the count allows); each
 * owns an N x N block of a (PX*N) x (PY*N) grid of doubles with fixed
 * boundary values, so one halo is N doubles (8N bytes). With --verify 1
 * (the default when the whole grid has at most 2^20 points) rank 0 also
 * runs the sweep alone on the whole grid and checks every process's block
 * bit for bit: each point takes the same operations in the same order, so
 * the results must be identical.
 *
 * Output (rank 0), per N, over the repetitions (each ITERS iterations):
 *   jacobi_wait,N,HALO_BYTES,PROCS,...  time in MPI_Waitall per iteration (us),
 *                                       the slowest process's
 *   jacobi_iter,N,HALO_BYTES,PROCS,...  time per iteration (us)
 *   jacobi_sum,N,HALO_BYTES,PROCS,...   the sum of the grid after the last
 *                                       repetition (the same on every MPI) */
#include "../suite.h"

#include <math.h>

static suite_list_t ns = {4, {128, 256, 512, 1024}};
static double iters = 50, reps = 5, verify = -1;

static const suite_opt_t opts[] = {
    {"n", "block edges, points per process per side (default 128,256,512,1024)", &ns, NULL},
    {"iters", "iterations per repetition (default 50)", NULL, &iters},
    {"reps", "repetitions per size (default 5)", NULL, &reps},
    {"verify", "1: check against a sweep on one process (default: small grids only)", NULL,
     &verify},
    {NULL, NULL, NULL, NULL},
};

/* The fixed value outside the global grid and the starting value inside. */
static double edge_value(long gx, long gy)
{
    return (double)((gx * 7 + gy * 13) % 17);
}

static double start_value(long gx, long gy)
{
    return (double)((gx * 3 + gy * 5) % 11) / 11.0;
}

/* A block of (n+2) x (n+2) with a halo ring, row-major, x the row. */
#define AT(a, x, y) ((a)[(size_t)(x) * (size_t)(m) + (size_t)(y)])

static void block_init(double *a, double *b, int n, long ox, long oy, long gx, long gy)
{
    int m = n + 2;
    for (int x = 0; x < m; x++)
        for (int y = 0; y < m; y++) {
            long X = ox + x - 1, Y = oy + y - 1;
            double v = X < 0 || Y < 0 || X >= gx || Y >= gy ? edge_value(X, Y) : start_value(X, Y);
            AT(a, x, y) = AT(b, x, y) = v;
        }
}

static void update(const double *restrict a, double *restrict b, int m, int x0, int x1, int y0,
                   int y1)
{
    for (int x = x0; x < x1; x++)
        for (int y = y0; y < y1; y++)
            AT(b, x, y) = 0.25 * (AT(a, x - 1, y) + AT(a, x + 1, y) + AT(a, x, y - 1) +
                                  AT(a, x, y + 1));
}

static double block_sum(const double *a, int n)
{
    int m = n + 2;
    double s = 0;
    for (int x = 1; x <= n; x++)
        for (int y = 1; y <= n; y++)
            s += AT(a, x, y);
    return s;
}

int main(int argc, char **argv)
{
    static const char synopsis[] = "[--n N,..] [--iters I] [--reps R] [--verify 0|1]";
    int rank, np, px, py;
    double maxn = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    suite_opts_parse(argc, argv, 1, synopsis, opts, rank);
    SUITE_CHECK(reps >= 1 && reps <= SUITE_MAX_REPS, "--reps %g out of 1..%d", reps,
                SUITE_MAX_REPS);
    SUITE_CHECK(iters >= 1, "--iters %g below 1", iters);
    for (int i = 0; i < ns.n; i++) {
        SUITE_CHECK(ns.v[i] >= 4 && ns.v[i] <= 8192, "--n %g out of 4..8192", ns.v[i]);
        maxn = ns.v[i] > maxn ? ns.v[i] : maxn;
    }
    for (px = (int)sqrt((double)np); np % px; px--)
        ;
    py = np / px;
    int cx = rank / py, cy = rank % py; /* my place in the grid */
    int nbr[4] = {cx > 0 ? rank - py : MPI_PROC_NULL, cx < px - 1 ? rank + py : MPI_PROC_NULL,
                  cy > 0 ? rank - 1 : MPI_PROC_NULL, cy < py - 1 ? rank + 1 : MPI_PROC_NULL};
    size_t cells = ((size_t)maxn + 2) * ((size_t)maxn + 2);
    double *a = malloc(cells * sizeof(double)), *b = malloc(cells * sizeof(double));
    double *sendb = malloc(4 * ((size_t)maxn + 2) * sizeof(double));
    double *recvb = malloc(4 * ((size_t)maxn + 2) * sizeof(double));
    SUITE_CHECK(a && b && sendb && recvb, "out of memory");

    for (int k = 0; k < ns.n; k++) {
        int n = (int)ns.v[k], m = n + 2;
        long gx = (long)px * n, gy = (long)py * n;
        double wv[SUITE_MAX_REPS], iv[SUITE_MAX_REPS];
        double *sb[4], *rb[4];
        for (int d = 0; d < 4; d++)
            sb[d] = sendb + (size_t)d * (size_t)n, rb[d] = recvb + (size_t)d * (size_t)n;
        block_init(a, b, n, (long)cx * n, (long)cy * n, gx, gy);
        for (int r = -1; r < (int)reps; r++) { /* r = -1: warm-up of 2 iterations */
            int it = r < 0 ? 2 : (int)iters;
            double wait = 0, t0, t, w, tmax, wmax;
            if (r == 0) /* the timed repetitions all start from the same grid */
                block_init(a, b, n, (long)cx * n, (long)cy * n, gx, gy);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Request req[8];
                /* boundary rows and columns of a, out; halos of a, in */
                for (int y = 0; y < n; y++) {
                    sb[0][y] = AT(a, 1, y + 1);
                    sb[1][y] = AT(a, n, y + 1);
                }
                for (int x = 0; x < n; x++) {
                    sb[2][x] = AT(a, x + 1, 1);
                    sb[3][x] = AT(a, x + 1, n);
                }
                for (int d = 0; d < 4; d++) {
                    MPI_Irecv(rb[d], n, MPI_DOUBLE, nbr[d], 0, MPI_COMM_WORLD, &req[d]);
                    MPI_Isend(sb[d], n, MPI_DOUBLE, nbr[d], 0, MPI_COMM_WORLD, &req[4 + d]);
                }
                update(a, b, m, 2, n, 2, n); /* the interior needs no halo */
                double w0 = MPI_Wtime();
                MPI_Status st[8];
                MPI_Waitall(8, req, st);
                wait += MPI_Wtime() - w0;
                for (int y = 0; y < n; y++) {
                    if (nbr[0] != MPI_PROC_NULL)
                        AT(a, 0, y + 1) = rb[0][y];
                    if (nbr[1] != MPI_PROC_NULL)
                        AT(a, n + 1, y + 1) = rb[1][y];
                }
                for (int x = 0; x < n; x++) {
                    if (nbr[2] != MPI_PROC_NULL)
                        AT(a, x + 1, 0) = rb[2][x];
                    if (nbr[3] != MPI_PROC_NULL)
                        AT(a, x + 1, n + 1) = rb[3][x];
                }
                update(a, b, m, 1, 2, 1, n + 1);     /* first row */
                update(a, b, m, n, n + 1, 1, n + 1); /* last row */
                update(a, b, m, 2, n, 1, 2);         /* first column */
                update(a, b, m, 2, n, n, n + 1);     /* last column */
                double *tmp = a;
                a = b, b = tmp;
            }
            t = (MPI_Wtime() - t0) * 1e6 / it;
            w = wait * 1e6 / it;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(&w, &wmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= 0)
                wv[r] = wmax, iv[r] = tmax;
        }

        /* The grid after reps x iters iterations: sums per block, in rank order. */
        double mine = block_sum(a, n), *sums = malloc((size_t)np * sizeof(double));
        SUITE_CHECK(sums != NULL, "out of memory");
        MPI_Gather(&mine, 1, MPI_DOUBLE, sums, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        int check = verify < 0 ? gx * gy <= (1L << 20) : verify != 0;
        if (rank == 0 && check) {
            /* The same sweep on the whole grid, by one process. */
            long GM = gy + 2;
            double *ga = malloc((size_t)(gx + 2) * (size_t)GM * sizeof(double));
            double *gb = malloc((size_t)(gx + 2) * (size_t)GM * sizeof(double));
            SUITE_CHECK(ga && gb, "out of memory for the check (%ld x %ld)", gx, gy);
            for (long x = 0; x < gx + 2; x++)
                for (long y = 0; y < GM; y++) {
                    long X = x - 1, Y = y - 1;
                    ga[x * GM + y] = gb[x * GM + y] = X < 0 || Y < 0 || X >= gx || Y >= gy
                                                          ? edge_value(X, Y) : start_value(X, Y);
                }
            for (long i = 0; i < (long)reps * (long)iters; i++) {
                for (long x = 1; x <= gx; x++)
                    for (long y = 1; y <= gy; y++)
                        gb[x * GM + y] = 0.25 * (ga[(x - 1) * GM + y] + ga[(x + 1) * GM + y] +
                                                 ga[x * GM + y - 1] + ga[x * GM + y + 1]);
                double *tmp = ga;
                ga = gb, gb = tmp;
            }
            for (int p = 0; p < np; p++) {
                long ox = (long)(p / py) * n, oy = (long)(p % py) * n;
                double s = 0;
                for (long x = 1; x <= n; x++)
                    for (long y = 1; y <= n; y++)
                        s += ga[(ox + x) * GM + oy + y];
                SUITE_CHECK(s == sums[p], "n %d: block of rank %d sums to %.17g, one process "
                            "computed %.17g", n, p, sums[p], s);
            }
            free(ga);
            free(gb);
        }
        if (rank == 0) {
            double total = 0;
            for (int p = 0; p < np; p++)
                total += sums[p];
            suite_print("jacobi_wait", n, 8.0 * n, np, wv, (int)reps);
            suite_print("jacobi_iter", n, 8.0 * n, np, iv, (int)reps);
            suite_print("jacobi_sum", n, 8.0 * n, np, &total, 1);
        }
        free(sums);
    }
    free(a);
    free(b);
    free(sendb);
    free(recvb);
    MPI_Finalize();
    return 0;
}
