/* Nonblocking sends are local (2 processes): rank 0 starts thousands of
 * sends to rank 1 while rank 1 is outside MPI, blocked in open() on a FIFO
 * that rank 0 opens for writing only once its loop of nonblocking calls has
 * returned. A call that waited for rank 1 -- for room in its ring, for
 * credit, for a receive -- would never return, and the job would end by
 * onicrun's timeout. Then rank 1 receives everything and checks content
 * and order, and rank 0 completes its requests.
 *
 * Each round is one kind of call: MPI_Isend of small (eager) and large
 * (rendezvous) messages, MPI_Issend, persistent sends started with
 * MPI_Startall, and MPI_Ibsend from an attached buffer. In two more rounds
 * of MPI_Isend rank 1 is stopped instead (SIGSTOP, which onicrun waits
 * out): rank 0 starts its loop once rank 1 is seen stopped and continues
 * it (SIGCONT) only after the loop.
 *
 * First, a wait that has its message returns without sleeping: rank 0 waits
 * on a receive whose message is already in its lane, with nothing more to
 * come, and must not sleep in the transport (counted by wrapping
 * syscall(2), which the transport's futex sleep goes through). */
#include <mpi.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../proc_state.h"

enum { R_ISEND, R_ISEND_LARGE, R_ISSEND, R_START, R_IBSEND, R_STOP, R_STOP_LARGE, R_N };
static const char *const round_name[R_N] = {"Isend 400 B", "Isend 64 KiB", "Issend 400 B",
                                            "Startall 400 B", "Ibsend 400 B",
                                            "Isend 400 B to a stopped rank",
                                            "Isend 64 KiB to a stopped rank"};
static const int round_count[R_N] = {3000, 64, 1000, 1000, 1000, 3000, 64};
static const int round_len[R_N] = {400, 65536, 400, 400, 400, 400, 65536};

static int failed;

static void check(int ok, const char *what, int round, int i)
{
    if (!ok && failed++ < 10)
        fprintf(stderr, "mpi_local: %s: %s (message %d)\n", round_name[round], what, i);
}

/* This process's futex sleeps, of any outcome. */
static unsigned long futex_sleeps;

long syscall(long nr, ...)
{
    static long (*real)(long, ...);
    long a[6];
    va_list ap;

    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "syscall");
    if (nr == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAIT)
        __atomic_fetch_add(&futex_sleeps, 1, __ATOMIC_RELAXED);
    return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Open a FIFO and close it: returns once the other rank has opened it the
 * other way, a meeting point outside MPI. */
static void fifo_meet(const char *fifo, int flags, const char *what)
{
    int fd = open(fifo, flags);

    if (fd < 0 && failed++ < 10)
        fprintf(stderr, "mpi_local: %s: cannot open the FIFO\n", what);
    if (fd >= 0)
        close(fd);
}

/* A blocking wait that has handled the event completing its request goes
 * back to its caller without polling again with a timeout: with nothing
 * more coming, such a poll sleeps for its whole timeout in every wait.
 * Rank 0 posts a receive; rank 1 sends once told (fifo a), then says it has
 * sent (fifo b); rank 0 makes no MPI call in between, so the message is in
 * its lane, unmatched, when it waits. Under --onload the engine matches and
 * delivers in its own time, so there a wait may sleep for it: the job
 * checks only the value. */
static void wait_has_message(int rank, const char *fifo_a, const char *fifo_b)
{
    const char *what = "a wait whose message has arrived";
    const char *onload = getenv("ONIC_ONLOAD");
    int v = 0;

    if (rank == 1) {
        fifo_meet(fifo_a, O_RDONLY, what);
        v = 4242;
        MPI_Send(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD); /* eager: complete once put */
        fifo_meet(fifo_b, O_WRONLY, what);
    } else {
        MPI_Request rq;
        MPI_Status st;
        unsigned long before;

        MPI_Irecv(&v, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &rq);
        fifo_meet(fifo_a, O_WRONLY, what);
        fifo_meet(fifo_b, O_RDONLY, what);
        before = __atomic_load_n(&futex_sleeps, __ATOMIC_RELAXED);
        MPI_Wait(&rq, &st);
        before = __atomic_load_n(&futex_sleeps, __ATOMIC_RELAXED) - before;
        if ((v != 4242 || st.MPI_SOURCE != 1 || st.MPI_TAG != 77) && failed++ < 10)
            fprintf(stderr, "mpi_local: %s: got %d from %d, tag %d (want 4242 from 1, tag 77)\n",
                    what, v, st.MPI_SOURCE, st.MPI_TAG);
        if ((onload == NULL || strcmp(onload, "1") != 0) && before != 0 && failed++ < 10)
            fprintf(stderr, "mpi_local: %s: MPI_Wait slept %lu times in the transport, with "
                    "its message already there and nothing more coming (want 0)\n", what,
                    before);
    }
}

static unsigned char fill(int round, int i, int k)
{
    return (unsigned char)(round * 31 + i * 7 + k);
}

static void sender(int round, const char *fifo, pid_t peer)
{
    int n = round_count[round], len = round_len[round], fd;
    unsigned char *buf = malloc((size_t)n * (size_t)len);
    MPI_Request *rq = malloc(sizeof(*rq) * (size_t)n);
    void *bbuf = NULL;
    int bsize = 0;

    for (int i = 0; i < n; i++)
        for (int k = 0; k < len; k++)
            buf[(size_t)i * len + k] = fill(round, i, k);
    if (round == R_IBSEND) {
        bsize = n * (len + MPI_BSEND_OVERHEAD);
        bbuf = malloc((size_t)bsize);
        MPI_Buffer_attach(bbuf, bsize);
    }
    if (round == R_START)
        for (int i = 0; i < n; i++)
            MPI_Send_init(buf + (size_t)i * len, len, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 leaves MPI now */
    if (round >= R_STOP) {
        int waited = 0;
        while (test_proc_state(peer) != 'T' && waited++ < 10000)
            usleep(1000);
        check(test_proc_state(peer) == 'T', "rank 1 did not stop", round, 0);
    }
    for (int i = 0; i < n; i++) {
        void *b = buf + (size_t)i * len;
        int rc = MPI_SUCCESS;
        switch (round) {
        case R_ISEND:
        case R_ISEND_LARGE:
        case R_STOP:
        case R_STOP_LARGE:
            rc = MPI_Isend(b, len, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
            break;
        case R_ISSEND:
            rc = MPI_Issend(b, len, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
            break;
        case R_IBSEND:
            rc = MPI_Ibsend(b, len, MPI_BYTE, 1, i, MPI_COMM_WORLD, &rq[i]);
            break;
        default:
            break;
        }
        check(rc == MPI_SUCCESS, "the call failed", round, i);
    }
    if (round == R_START)
        check(MPI_Startall(n, rq) == MPI_SUCCESS, "MPI_Startall failed", round, 0);
    /* Every call has returned: let rank 1 go on. */
    if (round >= R_STOP) {
        check(test_proc_state(peer) == 'T', "rank 1 went on while stopped", round, 0);
        kill(peer, SIGCONT);
    } else {
        fd = open(fifo, O_WRONLY);
        check(fd >= 0, "cannot open the FIFO", round, 0);
        if (fd >= 0)
            close(fd);
    }
    check(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall failed", round, 0);
    if (round == R_START)
        for (int i = 0; i < n; i++)
            MPI_Request_free(&rq[i]);
    if (round == R_IBSEND) {
        MPI_Buffer_detach(&bbuf, &bsize);
        free(bbuf);
    }
    free(rq);
    free(buf);
}

static void receiver(int round, const char *fifo)
{
    int n = round_count[round], len = round_len[round], fd;
    unsigned char *buf = malloc((size_t)len);
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD);
    /* Outside MPI until rank 0's calls have all returned. */
    if (round >= R_STOP) {
        raise(SIGSTOP);
    } else {
        fd = open(fifo, O_RDONLY);
        check(fd >= 0, "cannot open the FIFO", round, 0);
        if (fd >= 0)
            close(fd);
    }
    for (int i = 0; i < n; i++) {
        int bad = 0, count = -1;
        memset(buf, 0, (size_t)len);
        /* Any tag: the i-th receive must get the i-th send (no overtaking). */
        MPI_Recv(buf, len, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        for (int k = 0; k < len; k++)
            bad += buf[k] != fill(round, i, k);
        check(st.MPI_TAG == i, "out of order", round, i);
        check(count == len && bad == 0, "wrong content", round, i);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    char dir[64] = "", fifo[96];
    int rank, size, pid1 = (int)getpid(), stop = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_local: run with 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        strcpy(dir, "/tmp/onic-mpi-local-XXXXXX");
        if (mkdtemp(dir) == NULL) {
            perror("mpi_local: mkdtemp");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&pid1, 1, MPI_INT, 1, MPI_COMM_WORLD); /* rank 1's, for its stops */
    {
        char fifo_b[96];
        snprintf(fifo, sizeof(fifo), "%s/wait-a", dir);
        snprintf(fifo_b, sizeof(fifo_b), "%s/wait-b", dir);
        if (rank == 0 && (mkfifo(fifo, 0600) != 0 || mkfifo(fifo_b, 0600) != 0)) {
            perror("mpi_local: mkfifo");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        wait_has_message(rank, fifo, fifo_b);
        MPI_Allreduce(&failed, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            unlink(fifo);
            unlink(fifo_b);
        }
    }
    /* Failed, every wait below would sleep as long: both stop here, named. */
    for (int round = 0; round < R_N && stop == 0; round++) {
        snprintf(fifo, sizeof(fifo), "%s/fifo%d", dir, round);
        if (rank == 0 && mkfifo(fifo, 0600) != 0) {
            perror("mpi_local: mkfifo");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0)
            sender(round, fifo, (pid_t)pid1);
        else
            receiver(round, fifo);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            unlink(fifo);
    }
    if (rank == 0)
        rmdir(dir);
    printf("mpi_local rank %d: %s\n", rank, failed == 0 ? "passed" : "FAILED");
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
