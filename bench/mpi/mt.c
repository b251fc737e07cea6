/* Point-to-point benchmarks from several threads of each process, as a
 * plain MPI program (MPI_THREAD_MULTIPLE), built unchanged with onicc,
 * MPICH's mpicc and Open MPI's mpicc (bench/mpi/compare.py --prog mt drives
 * all three). Two processes, THREADS threads each; thread i of rank 0 and
 * thread i of rank 1 form pair i, and all pairs run at once:
 *
 *   latency_mt   each pair ping-pongs on its own communicator (a duplicate
 *                of MPI_COMM_WORLD): one-way time in microseconds, the mean
 *                of the pairs' (as osu_latency_mt reports), 0 B to 4 KiB
 *   rate_mt      each pair streams on its own communicator: a window of 64
 *                MPI_Isend / MPI_Irecv, then a 1-byte acknowledgment; the
 *                aggregate rate, messages of all pairs over the slowest
 *                pair's time, in millions of messages per second, 1 B to
 *                4 KiB (the isolated pairs: nothing shared but the process)
 *   rate_mt_world  the same with every pair on MPI_COMM_WORLD, its tag the
 *                pair's number (what the pairs share: one communicator's
 *                matching)
 *   wake_lat     each pair on its own communicator: rank 0's thread sends
 *                8 bytes every 1 ms, rank 1's waits in MPI_Recv meanwhile;
 *                the time from the send to the receive's return in
 *                microseconds (CLOCK_MONOTONIC, one node), the mean of the
 *                pairs': how soon a thread that waited long sees a message
 *                (one that sleeps must be woken by it)
 *   wait_cpu     the same with a message every 100 ms: the CPU time the
 *                waiting threads use, in percent of the time they wait
 *                (getrusage of each thread; 100: a core spent polling)
 *
 * With THREADS 1 these are the single-pair figures of an MPI_THREAD_MULTIPLE
 * process; compare.py's p2p rate with 2 pairs is the same load spread over
 * processes instead of threads.
 *
 * Usage: mt MODE [REPS [THREADS [SIZES [ITERS]]]] (2 processes; REPS 5,
 * THREADS 2 by default, SIZES a comma-separated list of byte counts, ITERS
 * the round trips, windows or messages of one repetition: by default 5000,
 * 300, 100 and 3, some 10 to 100 ms with one thread a process -- fewer for
 * an MPI whose threads take turns by time slices, milliseconds a round trip).
 * Each size is timed REPS times after a warm-up; rank 0 prints
 * "MODE,SIZE,MEDIAN,MIN,MAX" per size. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WINDOW      64
#define MAX_THREADS 16
#define MAX_SIZE    4096

typedef struct pair {
    pthread_t       thread;
    MPI_Comm        comm;
    int             tag, rank;
    long            size, n;
    char           *buf;
    double          time;
    pthread_barrier_t *start;
} pair_t;

static int rate_mode, latency_mode, wake_mode, cpu_mode;

#define WAKE_GAP_NS 1000000L
#define CPU_GAP_NS  100000000L

static double thread_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *pair_run(void *arg)
{
    pair_t *p = arg;
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    int peer = 1 - p->rank;
    char ack = 0;
    double t0;

    pthread_barrier_wait(p->start);
    t0 = MPI_Wtime();
    if (wake_mode || cpu_mode) {
        /* wake_lat: the sum of the delays; wait_cpu: the CPU time spent
         * waiting over the time waited. */
        double sent, delays = 0, cpu0 = thread_cpu_s(), wall0 = now_s();
        for (long i = 0; i < p->n; i++) {
            if (p->rank == 0) {
                struct timespec gap = {0, wake_mode ? WAKE_GAP_NS : CPU_GAP_NS};
                nanosleep(&gap, NULL);
                sent = now_s();
                MPI_Send(&sent, 1, MPI_DOUBLE, peer, p->tag, p->comm);
            } else {
                MPI_Recv(&sent, 1, MPI_DOUBLE, peer, p->tag, p->comm, MPI_STATUS_IGNORE);
                delays += now_s() - sent;
            }
        }
        p->time = wake_mode ? delays : (thread_cpu_s() - cpu0) / (now_s() - wall0);
        return NULL;
    }
    for (long i = 0; i < p->n; i++) {
        if (latency_mode) {
            if (p->rank == 0) {
                MPI_Send(p->buf, (int)p->size, MPI_CHAR, peer, p->tag, p->comm);
                MPI_Recv(p->buf, (int)p->size, MPI_CHAR, peer, p->tag, p->comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(p->buf, (int)p->size, MPI_CHAR, peer, p->tag, p->comm, MPI_STATUS_IGNORE);
                MPI_Send(p->buf, (int)p->size, MPI_CHAR, peer, p->tag, p->comm);
            }
            continue;
        }
        for (int w = 0; w < WINDOW; w++) {
            char *b = p->buf + (long)w * p->size;
            if (p->rank == 0)
                MPI_Isend(b, (int)p->size, MPI_CHAR, peer, p->tag, p->comm, &req[w]);
            else
                MPI_Irecv(b, (int)p->size, MPI_CHAR, peer, p->tag, p->comm, &req[w]);
        }
        MPI_Waitall(WINDOW, req, st);
        /* The acknowledgment on the pair's tag + MAX_THREADS: never taken
         * for a data message of any pair. */
        if (p->rank == 0)
            MPI_Recv(&ack, 1, MPI_CHAR, peer, p->tag + MAX_THREADS, p->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, peer, p->tag + MAX_THREADS, p->comm);
    }
    p->time = MPI_Wtime() - t0;
    return NULL;
}

/* One repetition of all pairs at once; the figure it gives. */
static double run(pair_t *pairs, int threads, long size, long n)
{
    pthread_barrier_t start;
    double sum = 0, most = 0;

    pthread_barrier_init(&start, NULL, (unsigned)threads);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < threads; i++) {
        pairs[i].size = size;
        pairs[i].n = n;
        pairs[i].start = &start;
        if (pthread_create(&pairs[i].thread, NULL, pair_run, &pairs[i]) != 0) {
            fprintf(stderr, "mt: cannot start thread %d\n", i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(pairs[i].thread, NULL);
        sum += pairs[i].time;
        if (pairs[i].time > most)
            most = pairs[i].time;
    }
    pthread_barrier_destroy(&start);
    if (wake_mode || cpu_mode) {
        /* Rank 1 measured: its figure goes to rank 0, which prints. */
        double mean = sum / threads * (wake_mode ? 1e6 / (double)n : 100.0);
        MPI_Bcast(&mean, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
        return mean;
    }
    if (latency_mode)
        return sum / threads * 1e6 / (2.0 * (double)n);
    /* Rank 0 sends: its slowest pair's time is the run's. */
    return (double)WINDOW * (double)n * threads / most / 1e6;
}

int main(int argc, char **argv)
{
    static const long lat_sizes[] = {0, 8, 64, 512, 4096};
    static const long rate_sizes[] = {1, 8, 64, 256, 1024, 4096};
    static const long wake_sizes[] = {8}; /* a double: the send's time */
    const char *mode = argc > 1 ? argv[1] : "latency_mt";
    int reps = argc > 2 ? atoi(argv[2]) : 5, threads = argc > 3 ? atoi(argv[3]) : 2;
    char *iters_end = NULL;
    long iters = argc > 5 ? strtol(argv[5], &iters_end, 10) : 0; /* 0: the mode's own */
    int provided, rank, nprocs, world = strcmp(mode, "rate_mt_world") == 0;
    pair_t pairs[MAX_THREADS];
    long given[64];
    const long *sizes;
    size_t nsizes;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    latency_mode = strcmp(mode, "latency_mt") == 0;
    rate_mode = strcmp(mode, "rate_mt") == 0 || world;
    wake_mode = strcmp(mode, "wake_lat") == 0;
    cpu_mode = strcmp(mode, "wait_cpu") == 0;
    if (nprocs != 2 || reps < 1 || reps > 100 || threads < 1 || threads > MAX_THREADS ||
        (!latency_mode && !rate_mode && !wake_mode && !cpu_mode) ||
        (argc > 5 && (iters < 1 || iters > 10000000 || *iters_end != '\0'))) {
        if (rank == 0)
            fprintf(stderr, "usage: run with 2 processes: mt "
                            "latency_mt|rate_mt|rate_mt_world|wake_lat|wait_cpu "
                            "[REPS (1-100) [THREADS (1-%d) [SIZES [ITERS (1-10^7)]]]]\n",
                    MAX_THREADS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "mt: MPI_THREAD_MULTIPLE asked, %d provided\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sizes = latency_mode ? lat_sizes : wake_mode || cpu_mode ? wake_sizes : rate_sizes;
    nsizes = latency_mode ? sizeof(lat_sizes) / sizeof(lat_sizes[0])
             : wake_mode || cpu_mode ? 1
                                     : sizeof(rate_sizes) / sizeof(rate_sizes[0]);
    if (argc > 4 && !wake_mode && !cpu_mode) {
        char *p = argv[4], *end;
        nsizes = 0;
        while (*p != '\0' && nsizes < sizeof(given) / sizeof(given[0])) {
            given[nsizes] = strtol(p, &end, 10);
            if (end == p || given[nsizes] < 0 || given[nsizes] > MAX_SIZE ||
                (*end != ',' && *end != '\0')) {
                if (rank == 0)
                    fprintf(stderr, "mt: SIZES is a comma-separated list of byte counts "
                                    "from 0 to %d, not \"%s\"\n", MAX_SIZE, argv[4]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            nsizes++;
            p = *end == ',' ? end + 1 : end;
        }
        sizes = given;
    }
    for (int i = 0; i < threads; i++) {
        pairs[i].rank = rank;
        pairs[i].tag = world ? i : 0;
        if (world)
            pairs[i].comm = MPI_COMM_WORLD;
        else
            MPI_Comm_dup(MPI_COMM_WORLD, &pairs[i].comm);
        if ((pairs[i].buf = malloc((size_t)WINDOW * MAX_SIZE)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(pairs[i].buf, 1, (size_t)WINDOW * MAX_SIZE);
    }
    for (size_t k = 0; k < nsizes; k++) {
        long n = iters > 0 ? iters : latency_mode ? 5000 : wake_mode ? 100 : cpu_mode ? 3 : 300;
        double v[100];

        run(pairs, threads, sizes[k], n / 4 + 1); /* warm-up */
        for (int r = 0; r < reps; r++)
            v[r] = run(pairs, threads, sizes[k], n);
        qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
        if (rank == 0)
            printf("%s,%ld,%.4f,%.4f,%.4f\n", mode, sizes[k], v[reps / 2], v[0], v[reps - 1]);
    }
    for (int i = 0; i < threads; i++) {
        if (!world)
            MPI_Comm_free(&pairs[i].comm);
        free(pairs[i].buf);
    }
    MPI_Finalize();
    return 0;
}
