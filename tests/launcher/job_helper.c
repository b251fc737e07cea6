/* A process for onicrun's tests: checks its job environment, then behaves as
 * told, so the launcher's reaction can be observed.
 *
 *   job_helper MODE [RANK]
 *     env         print "rank R size S job J" after checking all three
 *     shm         create /onic-<job>-test-<rank> (mode 0600), print its name, sleep
 *     exit RANK   rank RANK exits 3 at once, the others sleep
 *     abort RANK  rank RANK calls abort(), the others sleep
 *     kill RANK   rank RANK kills itself with SIGKILL, the others sleep
 *     stubborn    ignore SIGTERM and sleep; rank 0 exits 1 after 0.2 s
 *     sleep       sleep (for timeouts and signal forwarding)
 *     cpus        print how many CPUs this process may run on and the first one
 * Each line is written with one write() so lines of different ranks do not
 * interleave. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long env_long(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long x;

    if (v == NULL) {
        fprintf(stderr, "job_helper: %s is not set\n", name);
        exit(10);
    }
    x = strtol(v, &end, 10);
    if (*end != '\0' || x < 0) {
        fprintf(stderr, "job_helper: %s=%s is not a number\n", name, v);
        exit(10);
    }
    return x;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) != n)
        exit(13);
}

static void sleep_long(void)
{
    for (int i = 0; i < 600; i++)
        usleep(100000);
    exit(0);
}

int main(int argc, char **argv)
{
    long rank = env_long("ONIC_RANK"), size = env_long("ONIC_SIZE");
    const char *job = getenv("ONIC_JOBID");
    const char *mode = argc > 1 ? argv[1] : "env";
    long who = argc > 2 ? atol(argv[2]) : 0;

    if (job == NULL || strlen(job) != 16 || strspn(job, "0123456789abcdef") != 16 ||
        rank >= size) {
        fprintf(stderr, "job_helper: bad job environment (rank %ld size %ld job %s)\n", rank,
                size, job ? job : "unset");
        return 10;
    }
    if (strcmp(mode, "env") == 0) {
        say("rank %ld size %ld job %s\n", rank, size, job);
        return 0;
    }
    if (strcmp(mode, "shm") == 0) {
        char name[64];
        int fd;
        snprintf(name, sizeof(name), "/onic-%s-test-%ld", job, rank);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, 4096) != 0) {
            perror("job_helper: shm_open");
            return 11;
        }
        say("%s\n", name);
        if (rank == who) {
            usleep(200000); /* let the others create theirs */
            raise(SIGKILL); /* dies holding it: onicrun must remove it */
        }
        sleep_long();
    }
    if (strcmp(mode, "exit") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "kill") == 0) {
        if (rank == who) {
            usleep(100000);
            if (mode[0] == 'e')
                return 3;
            if (mode[0] == 'a')
                abort();
            raise(SIGKILL);
        }
        sleep_long();
    }
    if (strcmp(mode, "stubborn") == 0) {
        signal(SIGTERM, SIG_IGN);
        if (rank == 0) {
            usleep(200000);
            return 1;
        }
        sleep_long();
    }
    if (strcmp(mode, "sleep") == 0)
        sleep_long();
    if (strcmp(mode, "cpus") == 0) {
        cpu_set_t set;
        int first = 0;
        sched_getaffinity(0, sizeof(set), &set);
        while (first < CPU_SETSIZE && !CPU_ISSET(first, &set))
            first++;
        say("%d %d\n", CPU_COUNT(&set), first);
        return 0;
    }
    fprintf(stderr, "job_helper: unknown mode %s\n", mode);
    return 12;
}
