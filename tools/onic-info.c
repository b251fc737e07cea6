/* onic-info: what this build of onic is and how it is configured. */
#include "base/clock.h"
#include "base/config.h"
#include "base/cpu.h"
#include "boot/boot.h"
#include "match/engine.h"
#include "onload/onload.h"
#include "xport/xport.h"

#include <stdio.h>
#include <string.h>

/* The onload engine of the job this runs in (ONIC_JOBID), if any. */
static void info_onload(const onic_config_t *cfg)
{
    onic_onload_status_t st;
    onic_status_t status;

    printf("\nonload engine\n");
    if (cfg->jobid[0] == '\0') {
        printf("  not in a job (ONIC_JOBID is unset)\n");
        return;
    }
    status = onic_onload_status_read((int)cfg->onload_fd, &st);
    if (status == ONIC_ERR_NO_ELEM) {
        printf("  none for job %s\n", cfg->jobid);
        return;
    }
    if (status != ONIC_OK) {
        printf("  job %s: the engine's status segment is unreadable or of another version\n",
               cfg->jobid);
        return;
    }
    printf("  %s for job %s: pid %d, core ", onic_onload_status_alive(&st) ? "running" : "NOT running",
           cfg->jobid, (int)st.pid);
    if (st.core == ONIC_CONFIG_LAST)
        printf("unbound");
    else
        printf("%u", st.core);
    printf(", up %.1f s, last heartbeat %.1f s ago\n", (onic_time_ns() - st.started_ns) / 1e9,
           (onic_time_ns() - st.heartbeat_ns) / 1e9);
    printf("  processes attached %llu (refused %llu), commands %llu, matches %llu, bytes moved "
           "%llu, time busy %.3f s\n", (unsigned long long)st.procs,
           (unsigned long long)st.refused, (unsigned long long)st.commands,
           (unsigned long long)st.matches, (unsigned long long)st.bytes, st.busy_ns / 1e9);
}

int main(int argc, char **argv)
{
    size_t n;
    const onic_config_var_t *vars = onic_config_vars(&n);
    onic_config_t dflt, cur;
    onic_status_t status;

    if (argc > 1) {
        fprintf(stderr, "usage: %s\nprints onic's version, CPU features, ONIC_* variables "
                "and matching engines, and the job's onload engine\n", argv[0]);
        return strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    onic_config_defaults(&dflt);
    status = onic_config_read(&cur);

    printf("onic %s\n\n", ONIC_VERSION);
    printf("cpu features\n  avx2: %s\n\n", onic_cpu_has_avx2() ? "yes" : "no");

    printf("variables (set in the environment)\n");
    printf("  %-22s %-8s %-8s %s\n", "name", "default", "current", "description");
    for (size_t i = 0; i < n; i++) {
        char d[32], c[ONIC_CONFIG_PATH_MAX + 1];
        const char *env = onic_config_env(&vars[i]);
        onic_config_format(&vars[i], &dflt, d, sizeof(d));
        if (status == ONIC_OK)
            onic_config_format(&vars[i], &cur, c, sizeof(c));
        else
            snprintf(c, sizeof(c), "%s", env != NULL ? env : d);
        printf("  %-22s %-8s %-8s %s\n", vars[i].name, d, c, vars[i].desc);
    }

    printf("\nmatching engines (ONIC_MATCH)\n");
    for (const char *const *e = onic_match_engines(); *e != NULL; e++)
        printf("  %-6s %s\n", *e, onic_match_ops_find(*e)->desc);

    printf("\ntransports (ONIC_XPORT)\n");
    printf("  %-7s %s\n", "self", "built: a process's messages to itself");
    printf("  %-7s %s\n", "shm", "built: the processes on this node, through shared memory");
    /* Loading them here (onic-info's own start-up, not a job's) tells
     * whether a job that needs them will find them. */
    fflush(stdout); /* before a loader's error */
    printf("  %-7s built: processes on other nodes, through libfabric, loaded by jobs that "
           "span nodes: %s\n", "ofi", status == ONIC_OK && onic_xport_ofi_load(&cur) == ONIC_OK
                                          ? "it loads" : "it cannot be loaded (see above)");

    printf("\nbootstraps (ONIC_BOOT; auto: PMIX_NAMESPACE, PMI_FD, else onicrun)\n");
    {
        size_t nb;
        const onic_boot_ops_t *const *boots = onic_boot_all(&nb);
        for (size_t i = 0; i < nb; i++)
            printf("  %-7s built\n", boots[i]->name);
        fflush(stdout);
        printf("  %-7s loads libpmix when a PMIx launcher started the job: %s\n", "",
               status == ONIC_OK && onic_boot_pmix_load(&cur) == ONIC_OK
                   ? "it loads" : "it cannot be loaded (see above)");
    }
    /* What a program may call (include/mpi.h), and what it may not: a
     * call onic lacks fails to link, naming the function. */
    printf("\nMPI (include/mpi.h, MPI 3.1)\n"
           "  has: point-to-point (all modes, persistent, probe, matched probe, cancel,\n"
           "       wait/test any/all/some), generalized requests, and MPI 4.0's\n"
           "       MPI_Isendrecv(_replace) and MPI_Send_c/MPI_Recv_c/MPI_Get_count_c,\n"
           "       collectives (barrier, bcast, (all)reduce, (all)gather(v), scatter(v),\n"
           "       alltoall(v, w), reduce_scatter(_block), scan, exscan; MPI_IN_PLACE; user\n"
           "       ops, MPI_Reduce_local; on intercommunicators too, but for the scans),\n"
           "       non-blocking ibarrier, ibcast, i(all)reduce, igather(v), iscatter(v),\n"
           "       iallgather(v), ialltoall(v, w), ireduce_scatter(_block), iscan, iexscan,\n"
           "       MPI_Comm_idup (on intercommunicators too, but for the scans),\n"
           "       derived datatypes (vector to struct, subarray, darray, resized; pack and\n"
           "       unpack; the C, C++ and Fortran named types, complex sums and products),\n"
           "       communicators and groups, intercommunicators (point-to-point,\n"
           "       collectives, merge),\n"
           "       attributes, Cartesian, graph and distributed-graph topologies,\n"
           "       neighbourhood collectives (blocking and non-blocking), info objects,\n"
           "       error handlers (predefined and the program's),\n"
           "       one-sided windows (create, allocate, allocate_shared on one node, dynamic;\n"
           "       put, get, accumulates, fetch-and-op, compare-and-swap, rput, rget,\n"
           "       raccumulate, rget_accumulate; fence, locks, flushes,\n"
           "       post/start/complete/wait),\n"
           "       sessions (MPI 4.0: the process sets mpi://WORLD and mpi://SELF)\n"
           "  not:  dynamic processes, MPI-IO, the Fortran binding\n");
    if (status == ONIC_OK)
        info_onload(&cur);

    if (status != ONIC_OK) {
        fprintf(stderr, "\nonic-info: the environment holds an invalid ONIC_* value (see above)\n");
        return 1;
    }
    return 0;
}
