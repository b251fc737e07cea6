/* An MPI job that looks for its own names while it runs (test_noname.sh):
 * after MPI_Init every rank lists /dev/shm and fails if anything named
 * onic-<its job id> is there, and counts its mappings of nameless shared
 * memory (/memfd:onic-*, base/shmfd.h) in /proc/self/maps, which must hold
 * the node's regions (one per process of the node -- ONIC_NODES splits the
 * job into blocks as even as they go; with the onload engine, which moves
 * the messages, its status segment and this process's segment). Then messages go round the
 * ring, the ranks look again, and the job ends.
 *
 *   onicrun -n N [--onload] noname_job
 *
 * Rank 0 prints "job ID"; every rank "rank R: nothing in /dev/shm, M
 * nameless mappings". */
#include <mpi.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int noname_in_shm(const char *job)
{
    char prefix[64];
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int found = 0;

    snprintf(prefix, sizeof(prefix), "onic-%s", job);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "noname_job: /dev/shm/%s exists while the job runs\n", e->d_name);
            found++;
        }
    }
    if (d != NULL)
        closedir(d);
    return found;
}

static int noname_memfds(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, "/memfd:onic-") != NULL;
    if (f != NULL)
        fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    const char *job = getenv("ONIC_JOBID");
    int rank, size, v = 0, bad, maps, want, nodes;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (job == NULL || job[0] == '\0') {
        fprintf(stderr, "noname_job: run me with onicrun\n");
        return 2;
    }
    if (rank == 0)
        printf("job %s\n", job);
    bad = noname_in_shm(job);
    maps = noname_memfds();
    /* The node's regions; under the engine (which then moves every
     * message), its status segment and this process's. */
    nodes = getenv("ONIC_NODES") != NULL ? atoi(getenv("ONIC_NODES")) : 1;
    want = getenv("ONIC_ONLOAD_FD") != NULL ? 2 : size / (nodes > 0 ? nodes : 1);
    for (int i = 0; i < 100; i++) {
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v++;
            MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    bad += noname_in_shm(job);
    if (maps < want) {
        fprintf(stderr, "noname_job: rank %d maps %d nameless segments, expected at least %d\n",
                rank, maps, want);
        bad++;
    }
    printf("rank %d: %s in /dev/shm, %d nameless mappings\n", rank, bad ? "FAILED" : "nothing",
           maps);
    fflush(stdout);
    MPI_Finalize();
    return bad != 0 || (rank == 0 && v != 100 * (size - 1)) ? 1 : 0;
}
