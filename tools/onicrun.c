/* onicrun: start the processes of one onic job on this machine.
 *
 *   onicrun -n N [--bind none|core] [--timeout SECONDS] PROGRAM [ARGS...]
 *
 * Each process gets ONIC_RANK, ONIC_SIZE and ONIC_JOBID (16 random hex
 * digits: the job's shared-memory objects are named /onic-<jobid>-..., so
 * two jobs never collide and no one outside the job can guess the names).
 * The processes share one process group. SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1, SIGUSR2 and SIGALRM are forwarded to it. When a process exits
 * non-zero, dies from a signal or stops, or the timeout passes, the others
 * get SIGTERM and, half a second later, SIGKILL. The job's shared-memory
 * objects are removed before onicrun exits; if onicrun itself is killed by
 * SIGKILL its processes die with it (PR_SET_PDEATHSIG), but what they left
 * in /dev/shm stays. Standard input goes to rank 0 unless it is a terminal
 * (the job is not the terminal's foreground group, so reading it would stop
 * the process); every other rank reads /dev/null.
 *
 * Exit status: 0 when every process exited 0; else the first failing
 * process's exit status, 128 + its signal number if a signal killed it,
 * 128 + the signal onicrun was stopped with, or 124 after a timeout. */
#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_GRACE_NS     500000000ull  /* SIGTERM, then SIGKILL this much later */
#define RUN_POLL_NS      50000000l
#define RUN_MAX_PROCS    4096
#define RUN_SHM_DIR      "/dev/shm"
#define RUN_EXIT_USAGE   2
#define RUN_EXIT_TIMEOUT 124

/* Signals onicrun passes on to the job instead of dying from them. */
static const int run_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

typedef struct run_opts {
    long        nprocs;
    int         bind_core;
    double      timeout_s;  /* 0: none */
    char      **argv;       /* PROGRAM ARGS... */
} run_opts_t;

typedef struct run_job {
    char     jobid[17];
    pid_t    pgid;
    pid_t    launcher;  /* onicrun's own pid, for the children to check */
    pid_t   *pids;      /* by rank; 0 once reaped */
    long     alive;
    int      status;    /* onicrun's exit status so far */
    int      stopping;  /* the others have been told to stop */
    uint64_t kill_at;   /* when stopping: SIGKILL time, 0 once sent */
} run_job_t;

static uint64_t run_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: onicrun -n N [--bind none|core] [--timeout SECONDS] PROGRAM [ARGS...]\n"
            "  -n N               start N processes (ranks 0 to N-1)\n"
            "  --bind none|core   leave processes unbound (default) or bind rank r to core\n"
            "                     r modulo the number of cores (hwloc)\n"
            "  --timeout SECONDS  stop the job and fail if it runs longer\n"
            "Each process gets ONIC_RANK, ONIC_SIZE and ONIC_JOBID.\n");
}

/* 0 on success, else the exit status for a usage error (after saying why). */
static int run_parse(int argc, char **argv, run_opts_t *o)
{
    int i;

    memset(o, 0, sizeof(*o));
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            run_usage(stdout);
            exit(0);
        } else if (strcmp(arg, "--") == 0) {
            i++;
            break;
        } else if (strcmp(arg, "-n") == 0 || strcmp(arg, "-np") == 0) {
            if (val == NULL)
                goto err_missing;
            errno = 0;
            o->nprocs = strtol(val, &end, 10);
            if (errno != 0 || *end != '\0' || o->nprocs < 1 || o->nprocs > RUN_MAX_PROCS) {
                fprintf(stderr, "onicrun: -n %s: the number of processes must be 1 to %d\n",
                        val, RUN_MAX_PROCS);
                return RUN_EXIT_USAGE;
            }
            i++;
        } else if (strcmp(arg, "--bind") == 0) {
            if (val == NULL)
                goto err_missing;
            if (strcmp(val, "core") != 0 && strcmp(val, "none") != 0) {
                fprintf(stderr, "onicrun: --bind %s: expected none or core\n", val);
                return RUN_EXIT_USAGE;
            }
            o->bind_core = strcmp(val, "core") == 0;
            i++;
        } else if (strcmp(arg, "--timeout") == 0) {
            if (val == NULL)
                goto err_missing;
            errno = 0;
            o->timeout_s = strtod(val, &end);
            if (errno != 0 || *end != '\0' || !(o->timeout_s > 0) || o->timeout_s > 1e7) {
                fprintf(stderr, "onicrun: --timeout %s: expected a number of seconds > 0\n", val);
                return RUN_EXIT_USAGE;
            }
            i++;
        } else {
            fprintf(stderr, "onicrun: unknown option %s\n", arg);
            run_usage(stderr);
            return RUN_EXIT_USAGE;
        }
    }
    if (o->nprocs == 0) {
        fprintf(stderr, "onicrun: -n N is required\n");
        run_usage(stderr);
        return RUN_EXIT_USAGE;
    }
    if (i >= argc) {
        fprintf(stderr, "onicrun: no program to run\n");
        run_usage(stderr);
        return RUN_EXIT_USAGE;
    }
    o->argv = &argv[i];
    return 0;

err_missing:
    fprintf(stderr, "onicrun: option %s needs a value\n", argv[i]);
    run_usage(stderr);
    return RUN_EXIT_USAGE;
}

static int run_jobid_make(char *jobid)
{
    uint64_t id;

    if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
        fprintf(stderr, "onicrun: cannot draw a random job id: %m\n");
        return -1;
    }
    snprintf(jobid, 17, "%016" PRIx64, id);
    return 0;
}

/* Remove every shared-memory object of the job. Called on every exit path:
 * processes killed by SIGKILL cannot clean up after themselves. */
static void run_shm_cleanup(const run_job_t *job)
{
    char prefix[32];
    DIR *dir = opendir(RUN_SHM_DIR);
    struct dirent *d;
    size_t plen;

    if (dir == NULL)
        return;
    plen = (size_t)snprintf(prefix, sizeof(prefix), "onic-%s-", job->jobid);
    while ((d = readdir(dir)) != NULL) {
        char name[300];
        if (strncmp(d->d_name, prefix, plen) != 0)
            continue;
        snprintf(name, sizeof(name), "/%s", d->d_name);
        if (shm_unlink(name) != 0 && errno != ENOENT)
            fprintf(stderr, "onicrun: cannot remove shared memory %s: %m\n", name);
    }
    closedir(dir);
}

/* The children are onicrun's job, whatever launcher started onicrun: they
 * use onicrun's bootstrap, and an outer launcher's variables (PMI-1's PMI_*,
 * PMIx's PMIX_*) must not reach them, or they would join that launcher's job
 * instead. Done once, in onicrun itself, before any child is started. */
static int run_env_clean(void)
{
    extern char **environ;
    char name[256];

    for (size_t i = 0; environ != NULL && environ[i] != NULL;) {
        const char *e = environ[i], *eq = strchr(e, '=');
        size_t len = eq != NULL ? (size_t)(eq - e) : strlen(e);
        if ((strncmp(e, "PMI_", 4) != 0 && strncmp(e, "PMIX_", 5) != 0) || len >= sizeof(name)) {
            i++;
            continue;
        }
        memcpy(name, e, len);
        name[len] = '\0';
        if (unsetenv(name) != 0) { /* environ changed under us: look at slot i again */
            fprintf(stderr, "onicrun: cannot remove %s from the environment: %m\n", name);
            return -1;
        }
    }
    if (setenv("ONIC_BOOT", "onicrun", 1) != 0) {
        fprintf(stderr, "onicrun: cannot set ONIC_BOOT: %m\n");
        return -1;
    }
    return 0;
}

/* In the child: environment, binding, default signal state, then exec. */
static void run_child(const run_opts_t *o, run_job_t *job, long rank, hwloc_topology_t topo,
                      const sigset_t *oldmask)
{
    char buf[32];

    setpgid(0, job->pgid); /* the first process (pgid 0) founds the group */
    /* Die with onicrun, even if it is SIGKILLed; it may already be gone. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != job->launcher)
        _exit(127);
    if (rank != 0 || isatty(STDIN_FILENO)) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
    }
    snprintf(buf, sizeof(buf), "%ld", rank);
    setenv("ONIC_RANK", buf, 1);
    snprintf(buf, sizeof(buf), "%ld", o->nprocs);
    setenv("ONIC_SIZE", buf, 1);
    setenv("ONIC_JOBID", job->jobid, 1);
    if (topo != NULL) {
        int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(rank % ncores));
        if (core == NULL || hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) != 0)
            fprintf(stderr, "onicrun: rank %ld: cannot bind to core %ld: %m (running unbound)\n",
                    rank, rank % ncores);
    }
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "onicrun: rank %ld: cannot run %s: %m\n", rank, o->argv[0]);
    _exit(127);
}

/* The whole group, which also reaches what the processes started, and each
 * process by pid in case one could not join the group. */
static void run_signal(const run_job_t *job, long n, int sig)
{
    kill(-job->pgid, sig);
    for (long r = 0; r < n; r++)
        if (job->pids[r] != 0)
            kill(job->pids[r], sig);
}

static void run_stop(run_job_t *job, long n, int sig)
{
    if (job->stopping)
        return;
    job->stopping = 1;
    job->kill_at = run_now_ns() + RUN_GRACE_NS;
    run_signal(job, n, sig);
}

static long run_rank_of(const run_job_t *job, long n, pid_t pid)
{
    for (long r = 0; r < n; r++)
        if (job->pids[r] == pid)
            return r;
    return -1;
}

/* Reap what has exited; the first failure stops the rest of the job. */
static void run_reap(run_job_t *job, long n)
{
    pid_t pid;
    int st;

    while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
        long rank = run_rank_of(job, n, pid);
        int failed = 0, code = 0;

        if (rank < 0)
            continue;
        if (WIFSTOPPED(st)) {
            /* A stopped process would hang the job: treat it as failed. */
            if (!job->stopping) {
                fprintf(stderr, "onicrun: rank %ld (pid %d) was stopped by signal %d (%s)\n",
                        rank, (int)pid, WSTOPSIG(st), strsignal(WSTOPSIG(st)));
                job->status = 128 + WSTOPSIG(st);
            }
            kill(pid, SIGKILL);
            run_stop(job, n, SIGTERM);
            continue;
        }
        job->pids[rank] = 0;
        job->alive--;
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
            failed = 1;
            code = WEXITSTATUS(st);
            if (!job->stopping)
                fprintf(stderr, "onicrun: rank %ld (pid %d) exited with status %d\n", rank,
                        (int)pid, code);
        } else if (WIFSIGNALED(st)) {
            failed = 1;
            code = 128 + WTERMSIG(st);
            if (!job->stopping)
                fprintf(stderr, "onicrun: rank %ld (pid %d) was killed by signal %d (%s)\n", rank,
                        (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
        }
        if (failed && !job->stopping) {
            job->status = code;
            if (job->alive > 0) {
                fprintf(stderr, "onicrun: stopping the other %ld process%s\n", job->alive,
                        job->alive == 1 ? "" : "es");
                run_stop(job, n, SIGTERM);
            }
        }
    }
}

int main(int argc, char **argv)
{
    run_opts_t o;
    run_job_t job;
    hwloc_topology_t topo = NULL;
    sigset_t set, oldmask;
    uint64_t deadline;
    int rc = run_parse(argc, argv, &o);

    if (rc != 0)
        return rc;
    memset(&job, 0, sizeof(job));
    job.launcher = getpid();
    if (run_jobid_make(job.jobid) != 0 || run_env_clean() != 0)
        return 1;
    job.pids = calloc((size_t)o.nprocs, sizeof(*job.pids));
    if (job.pids == NULL) {
        fprintf(stderr, "onicrun: out of memory\n");
        return 1;
    }
    if (o.bind_core && (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0 ||
                        hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) < 1)) {
        fprintf(stderr, "onicrun: cannot read the machine's cores with hwloc: %m\n");
        return 1;
    }

    /* Signals are taken synchronously by sigtimedwait below. */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
        sigaddset(&set, run_forwarded[i]);
    sigprocmask(SIG_BLOCK, &set, &oldmask);
    signal(SIGPIPE, SIG_IGN); /* a closed stderr must not kill onicrun before cleanup */

    for (long r = 0; r < o.nprocs; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "onicrun: cannot start rank %ld: %m\n", r);
            job.status = 1;
            if (job.pgid != 0)
                run_stop(&job, o.nprocs, SIGTERM);
            break;
        }
        if (pid == 0)
            run_child(&o, &job, r, topo, &oldmask);
        if (job.pgid == 0)
            job.pgid = pid;
        setpgid(pid, job.pgid); /* also here: whichever runs first wins the race */
        job.pids[r] = pid;
        job.alive++;
    }

    deadline = o.timeout_s > 0 ? run_now_ns() + (uint64_t)(o.timeout_s * 1e9) : 0;
    while (job.alive > 0) {
        struct timespec poll = {0, RUN_POLL_NS};
        siginfo_t info;
        int sig = sigtimedwait(&set, &info, &poll);
        uint64_t now;

        if (sig > 0 && sig != SIGCHLD) {
            if (!job.stopping) {
                fprintf(stderr, "onicrun: got signal %d (%s), stopping the job\n", sig,
                        strsignal(sig));
                job.status = 128 + sig;
                run_stop(&job, o.nprocs, sig);
            } else {
                job.kill_at = run_now_ns(); /* a second signal: no more grace */
            }
        }
        run_reap(&job, o.nprocs);
        now = run_now_ns();
        if (deadline != 0 && now >= deadline && !job.stopping && job.alive > 0) {
            fprintf(stderr, "onicrun: the job did not finish within %g s; stopping it\n",
                    o.timeout_s);
            job.status = RUN_EXIT_TIMEOUT;
            run_stop(&job, o.nprocs, SIGTERM);
        }
        if (job.stopping && job.kill_at != 0 && now >= job.kill_at && job.alive > 0) {
            run_signal(&job, o.nprocs, SIGKILL);
            job.kill_at = 0;
        }
    }
    run_shm_cleanup(&job);
    if (topo != NULL)
        hwloc_topology_destroy(topo);
    free(job.pids);
    return job.status;
}
