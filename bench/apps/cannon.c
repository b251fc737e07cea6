/* Cannon's matrix multiplication, the kernel of paper 001 (section 4.4,
 * figure 11): C = A x B for N x N matrices of doubles on a Q x Q grid of
 * blocks. Each of the Q steps multiplies the blocks in hand and passes A
 * one block to the left and B one block up. The shifts of a step are
 * started (MPI_Isend / MPI_Irecv into the next buffers) before its
 * multiplication and completed after it, so a runtime that moves data while
 * the application computes hides them.
 *
 *   cannon [--n N,..] [--q Q] [--reps R]
 *
 * Q defaults to the smallest Q with Q x Q >= the number of processes; block
 * (i, j) belongs to process (i * Q + j) mod P, so 2 processes run a 2 x 2
 * grid with two blocks each, and 4 processes one block each. A process
 * sends a block to itself like to any other. The blocks start in Cannon's
 * aligned placement (A(i, j) holds the original A(i, i+j), B(i, j) holds
 * B(i+j, j)), generated in place. The entries are small integers, so C is
 * exact, and rank 0 checks its sum against sum_k (column sums of A)(row
 * sums of B).
 *
 * Output (rank 0): cannon,N,Q,PROCS,median,min,max -- the time of the
 * multiplication in milliseconds (the slowest process), over REPS. */
#include "../suite.h"

static suite_list_t ns = {3, {256, 512, 1024}};
static double q_opt = 0, reps = 3;

static const suite_opt_t opts[] = {
    {"n", "matrix sizes, multiples of Q (default 256,512,1024)", &ns, NULL},
    {"q", "blocks per side (default: the smallest with Q*Q >= processes)", NULL, &q_opt},
    {"reps", "repetitions per size (default 3)", NULL, &reps},
    {NULL, NULL, NULL, NULL},
};

static double a_value(long r, long c) { return (double)((r * 3 + c * 5) % 7) - 3; }
static double b_value(long r, long c) { return (double)((r * 2 + c * 7) % 5) - 2; }

/* c += a x b for b x b blocks. */
static void multiply(const double *restrict a, const double *restrict b, double *restrict c, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double x = a[(size_t)i * n + k];
            for (int j = 0; j < n; j++)
                c[(size_t)i * n + j] += x * b[(size_t)k * n + j];
        }
}

int main(int argc, char **argv)
{
    static const char synopsis[] = "[--n N,..] [--q Q] [--reps R]";
    int rank, np, q;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    suite_opts_parse(argc, argv, 1, synopsis, opts, rank);
    for (q = 1; q * q < np; q++)
        ;
    if (q_opt > 0)
        q = (int)q_opt;
    SUITE_CHECK(q >= 1 && q <= 64 && q * q >= np, "--q %d: need 1..64 and Q*Q >= %d processes",
                q, np);
    SUITE_CHECK(reps >= 1 && reps <= SUITE_MAX_REPS, "--reps %g out of 1..%d", reps,
                SUITE_MAX_REPS);
    for (int i = 0; i < ns.n; i++)
        SUITE_CHECK(ns.v[i] >= q && ns.v[i] <= 8192 && (long)ns.v[i] % q == 0,
                    "--n %g: need a multiple of Q = %d up to 8192", ns.v[i], q);

    /* My blocks: grid positions i*q+j with (i*q+j) % np == rank. */
    int mine = 0, *pos = malloc((size_t)q * q * sizeof(int));
    SUITE_CHECK(pos != NULL, "out of memory");
    for (int g = 0; g < q * q; g++)
        if (g % np == rank)
            pos[mine++] = g;

    for (int k = 0; k < ns.n; k++) {
        long n = (long)ns.v[k];
        int bs = (int)(n / q);
        size_t be = (size_t)bs * (size_t)bs;
        double *mem = malloc(5 * (size_t)mine * be * sizeof(double) + 1);
        MPI_Request *req = malloc(4 * (size_t)mine * sizeof(*req) + 1);
        MPI_Status *st = malloc(4 * (size_t)mine * sizeof(*st) + 1);
        double v[SUITE_MAX_REPS];
        SUITE_CHECK(mem && req && st, "out of memory for n %ld", n);

        for (int r = 0; r < (int)reps; r++) {
            /* per block: A, B (current), A, B (next), C */
            double *A[2], *B[2], *C;
            for (int b = 0; b < mine; b++) {
                int i = pos[b] / q, j = pos[b] % q, ka = (i + j) % q;
                double *blk = mem + 5 * (size_t)b * be;
                for (int x = 0; x < bs; x++)
                    for (int y = 0; y < bs; y++) {
                        blk[(size_t)x * bs + y] = a_value((long)i * bs + x, (long)ka * bs + y);
                        blk[be + (size_t)x * bs + y] = b_value((long)ka * bs + x, (long)j * bs + y);
                        blk[4 * be + (size_t)x * bs + y] = 0;
                    }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int s = 0; s < q; s++) {
                int cur = s % 2, nreq = 0;
                for (int b = 0; b < mine && s < q - 1; b++) { /* no shift after the last */
                    int i = pos[b] / q, j = pos[b] % q;
                    double *blk = mem + 5 * (size_t)b * be;
                    A[0] = blk, B[0] = blk + be, A[1] = blk + 2 * be, B[1] = blk + 3 * be;
                    int left = i * q + (j + q - 1) % q, right = i * q + (j + 1) % q;
                    int up = ((i + q - 1) % q) * q + j, down = ((i + 1) % q) * q + j;
                    /* tags: 2 x the receiving block's position, + 1 for B */
                    MPI_Irecv(A[1 - cur], (int)be, MPI_DOUBLE, right % np, 2 * pos[b],
                              MPI_COMM_WORLD, &req[nreq++]);
                    MPI_Irecv(B[1 - cur], (int)be, MPI_DOUBLE, down % np, 2 * pos[b] + 1,
                              MPI_COMM_WORLD, &req[nreq++]);
                    MPI_Isend(A[cur], (int)be, MPI_DOUBLE, left % np, 2 * left, MPI_COMM_WORLD,
                              &req[nreq++]);
                    MPI_Isend(B[cur], (int)be, MPI_DOUBLE, up % np, 2 * up + 1, MPI_COMM_WORLD,
                              &req[nreq++]);
                }
                for (int b = 0; b < mine; b++) {
                    double *blk = mem + 5 * (size_t)b * be;
                    A[0] = blk, B[0] = blk + be, A[1] = blk + 2 * be, B[1] = blk + 3 * be;
                    C = blk + 4 * be;
                    multiply(A[cur], B[cur], C, bs);
                }
                MPI_Waitall(nreq, req, st);
            }
            double t = (MPI_Wtime() - t0) * 1e3, tmax;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            v[r] = tmax;

            /* Check: the sum of C equals sum_k colsum_A(k) * rowsum_B(k). */
            double part = 0, sum = 0;
            for (int b = 0; b < mine; b++) {
                C = mem + 5 * (size_t)b * be + 4 * be;
                for (size_t e = 0; e < be; e++)
                    part += C[e];
            }
            MPI_Reduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                double want = 0;
                for (long kk = 0; kk < n; kk++) {
                    double ca = 0, rb = 0;
                    for (long x = 0; x < n; x++)
                        ca += a_value(x, kk), rb += b_value(kk, x);
                    want += ca * rb;
                }
                SUITE_CHECK(sum == want, "n %ld: the sum of C is %.17g, expected %.17g", n, sum,
                            want);
            }
        }
        if (rank == 0)
            suite_print("cannon", (double)n, q, np, v, (int)reps);
        free(mem);
        free(req);
        free(st);
    }
    free(pos);
    MPI_Finalize();
    return 0;
}
