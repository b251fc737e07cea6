/* What a stencil code does first: the processes form a periodic 2-D grid
 * (MPI_Dims_create, MPI_Cart_create), each owns an N x N block of a global
 * array with a one-cell halo, swaps its edges with its four neighbours
 * (a contiguous type for rows, a vector type for columns, MPI_Cart_shift
 * and MPI_Sendrecv), and rank 0 gathers the whole array through subarray
 * types. Every cell holds f(global row, global column), so each halo cell
 * and the gathered array are checked against f.
 *   onicc examples/halo.c -o halo && onicrun -n 4 ./halo */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 6 };                     /* each block's side */
#define AT(a, i, j) (a)[(i) * (N + 2) + (j)]  /* with the halo: rows 0 and N+1 */

static double f(int gi, int gj)
{
    return gi * 1000.0 + gj;
}

int main(int argc, char **argv)
{
    int size, rank, dims[2] = {0, 0}, periods[2] = {1, 1}, me[2], up, down, left, right;
    int wrong = 0, all_wrong = 0;
    double *a = calloc((N + 2) * (N + 2), sizeof(double));
    MPI_Comm grid;
    MPI_Datatype row, col, block;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, me);
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);

    const int GR = dims[0] * N, GC = dims[1] * N; /* the global array */
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= N; j++)
            AT(a, i, j) = f(me[0] * N + i - 1, me[1] * N + j - 1);

    /* A row of the block is contiguous; a column is N cells a row apart. */
    MPI_Type_contiguous(N, MPI_DOUBLE, &row);
    MPI_Type_vector(N, 1, N + 2, MPI_DOUBLE, &col);
    MPI_Type_commit(&row);
    MPI_Type_commit(&col);
    MPI_Sendrecv(&AT(a, 1, 1), 1, row, up, 0, &AT(a, N + 1, 1), 1, row, down, 0, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(a, N, 1), 1, row, down, 1, &AT(a, 0, 1), 1, row, up, 1, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(a, 1, 1), 1, col, left, 2, &AT(a, 1, N + 1), 1, col, right, 2, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(a, 1, N), 1, col, right, 3, &AT(a, 1, 0), 1, col, left, 3, grid,
                 MPI_STATUS_IGNORE);
    /* Each halo cell is the neighbouring block's edge (the grid wraps). */
    for (int k = 1; k <= N; k++) {
        int gi = me[0] * N + k - 1, gj = me[1] * N + k - 1;
        wrong += AT(a, 0, k) != f((me[0] * N - 1 + GR) % GR, gj);
        wrong += AT(a, N + 1, k) != f((me[0] * N + N) % GR, gj);
        wrong += AT(a, k, 0) != f(gi, (me[1] * N - 1 + GC) % GC);
        wrong += AT(a, k, N + 1) != f(gi, (me[1] * N + N) % GC);
    }

    /* Rank 0 gathers every block into the global array: the block of the
     * process at (p, q) is a subarray of it. */
    {
        int sizes[2] = {N + 2, N + 2}, sub[2] = {N, N}, start[2] = {1, 1};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &block);
        MPI_Type_commit(&block);
        MPI_Send(a, 1, block, 0, 4, grid);
        MPI_Type_free(&block);
    }
    if (rank == 0) {
        double *g = calloc((size_t)GR * GC, sizeof(double));
        for (int r = 0; r < size; r++) {
            int pq[2], gsizes[2] = {GR, GC}, sub[2] = {N, N}, start[2];
            MPI_Cart_coords(grid, r, 2, pq);
            start[0] = pq[0] * N;
            start[1] = pq[1] * N;
            MPI_Type_create_subarray(2, gsizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &block);
            MPI_Type_commit(&block);
            MPI_Recv(g, 1, block, r, 4, grid, MPI_STATUS_IGNORE);
            MPI_Type_free(&block);
        }
        for (int i = 0; i < GR; i++)
            for (int j = 0; j < GC; j++)
                wrong += g[i * GC + j] != f(i, j);
        free(g);
    }
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, grid);
    if (rank == 0)
        printf("halo: %d x %d processes, a %d x %d array: %s\n", dims[0], dims[1], GR, GC,
               all_wrong == 0 ? "ok" : "WRONG");
    MPI_Type_free(&row);
    MPI_Type_free(&col);
    MPI_Comm_free(&grid);
    free(a);
    MPI_Finalize();
    return all_wrong != 0;
}
