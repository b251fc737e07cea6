/* The memory an idle job sets aside for messages: after MPI_Init and a
 * barrier, every process lists the shared mappings it holds (the entries of
 * /proc/self/smaps whose permissions end in 's': the MPI's shared-memory
 * segments, its own and its peers'). Two figures come from them:
 *
 *   mapped    each object counted once (by device and inode, the largest
 *             extent any process maps): what the job reserved, whether or
 *             not its pages were ever touched
 *   resident  the sum of every process's Pss over those mappings: the pages
 *             actually in memory, each counted once (Pss splits a shared
 *             page among the processes that map it)
 *
 * Both are divided by the number of processes. Memory the MPI holds
 * privately (onic's posted unexpected buffers, a peer's free lists) is in
 * no shared mapping; each process's resident private memory after
 * MPI_Init (Private_Clean + Private_Dirty of smaps_rollup) is printed
 * beside them, which covers that and everything else the process touched.
 * A plain MPI program, built unchanged with onicc, MPICH's mpicc and
 * Open MPI's mpicc (bench/mpi/idle_mem.py runs it with 2, 4 and 64
 * processes).
 *
 * Usage: idle_mem. Rank 0 prints
 * "idle_mem,NP,MAPPED,RESIDENT,PRIVATE,OBJECTS": bytes per process, and the
 * number of shared objects in the job. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAPS 1024

typedef struct {
    unsigned long long dev;  /* major << 32 | minor */
    unsigned long long ino;
    unsigned long long end;  /* file offset + length: the extent mapped */
} obj_t;

/* This process's shared mappings, one entry per mapping, and the sum of
 * their Pss in bytes (*pss). */
static int shared_maps(obj_t *o, int max, long long *pss)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[4096];
    int n = 0, in_shared = 0;
    long long kb;

    if (f == NULL)
        return -1;
    *pss = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long lo, hi, off, ino;
        unsigned maj, min;
        char perms[8];

        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &off, &maj, &min, &ino) == 7) {
            in_shared = perms[3] == 's';
            if (!in_shared)
                continue;
            if (n == max) {
                fclose(f);
                return -1;
            }
            o[n].dev = (unsigned long long)maj << 32 | min;
            o[n].ino = ino;
            o[n].end = off + (hi - lo);
            n++;
        } else if (in_shared && sscanf(line, "Pss: %lld kB", &kb) == 1) {
            *pss += kb * 1024;
        }
    }
    fclose(f);
    return n;
}

/* Resident private memory of this process, in bytes (smaps_rollup). */
static long long private_rss(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long long kb = 0, v;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Private_Clean: %lld kB", &v) == 1 || sscanf(line, "Private_Dirty: %lld kB", &v) == 1)
            kb += v;
    fclose(f);
    return kb * 1024;
}

static int cmp_obj(const void *a, const void *b)
{
    const obj_t *x = a, *y = b;

    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

int main(int argc, char **argv)
{
    static obj_t mine[MAX_MAPS];
    obj_t *all = NULL;
    int rank, size, n;
    long long rss, pss, sums[2], totals[2] = {0, 0};
    double shared = 0;
    int objects = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD); /* every peer's segment set up and mapped */
    n = shared_maps(mine, MAX_MAPS, &pss);
    rss = private_rss();
    if (n < 0 || rss < 0) {
        fprintf(stderr, "idle_mem: rank %d cannot read /proc/self/smaps or smaps_rollup, "
                        "or holds more than %d shared mappings\n", rank, MAX_MAPS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = n; i < MAX_MAPS; i++)
        mine[i] = (obj_t){0, 0, 0}; /* the padding of a fixed-size gather */
    if (rank == 0 && (all = malloc(sizeof(obj_t) * MAX_MAPS * (size_t)size)) == NULL) {
        fprintf(stderr, "idle_mem: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gather(mine, (int)(sizeof(mine)), MPI_BYTE, all, (int)(sizeof(mine)), MPI_BYTE, 0, MPI_COMM_WORLD);
    sums[0] = pss;
    sums[1] = rss;
    MPI_Reduce(sums, totals, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t total = (size_t)MAX_MAPS * (size_t)size;

        qsort(all, total, sizeof(obj_t), cmp_obj);
        /* Sorted by object, then extent: the last of each run is its
         * largest extent. The padding (end 0) adds nothing. */
        for (size_t i = 0; i < total; i++)
            if (all[i].end > 0 &&
                (i + 1 == total || all[i + 1].dev != all[i].dev || all[i + 1].ino != all[i].ino)) {
                shared += (double)all[i].end;
                objects++;
            }
        printf("idle_mem,%d,%.0f,%.0f,%.0f,%d\n", size, shared / size, (double)totals[0] / size,
               (double)totals[1] / size, objects);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
