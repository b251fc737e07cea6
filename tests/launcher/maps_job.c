/* Which libraries a process of a job has loaded, after MPI_Init:
 *   maps_job self|parent absent|present NAME...
 * reads /proc/self/maps (or its parent's: the launcher that started it) and
 * exits 1 when one of the NAMEs (a part of a file name, "libfabric") is
 * loaded and should be absent, or is not and should be present. Linked with
 * the shared libonic, as a user's program is. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 if a file whose path holds name is mapped in the maps file at path. */
static int mapped(const char *path, const char *name, char *line, size_t len)
{
    FILE *f = fopen(path, "r");
    int found = 0;

    if (f == NULL) {
        perror(path);
        exit(2);
    }
    while (!found && fgets(line, (int)len, f) != NULL) {
        const char *file = strchr(line, '/');
        found = file != NULL && strstr(file, name) != NULL;
    }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    char path[64], line[4096];
    int rank, want, bad = 0;

    if (argc < 4 || (strcmp(argv[1], "self") != 0 && strcmp(argv[1], "parent") != 0) ||
        (strcmp(argv[2], "absent") != 0 && strcmp(argv[2], "present") != 0)) {
        fprintf(stderr, "usage: %s self|parent absent|present NAME...\n", argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(argv[1], "self") == 0)
        snprintf(path, sizeof(path), "/proc/self/maps");
    else
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)getppid());
    want = strcmp(argv[2], "present") == 0;
    for (int i = 3; i < argc; i++) {
        int got = mapped(path, argv[i], line, sizeof(line));
        if (got != want) {
            printf("rank %d: %s %s %s%s", rank, path, got ? "maps" : "does not map", argv[i],
                   got ? ": " : "\n");
            if (got)
                fputs(line, stdout);
            bad = 1;
        }
    }
    MPI_Finalize();
    return bad;
}
