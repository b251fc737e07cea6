/* onicrun: start the processes of one onic job on this machine.
 *
 *   onicrun -n N [--bind none|core] [--timeout SECONDS] [--onload] PROGRAM [ARGS...]
 *
 * Each process gets ONIC_RANK, ONIC_SIZE, ONIC_JOBID (16 random hex digits)
 * and the job's store (boot.h), nameless shared memory it inherits
 * (ONIC_BOOT_FD): the library's shared memory never has a name (shmfd.h).
 * The processes share one process group. SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1, SIGUSR2 and SIGALRM are forwarded to it. When a process exits
 * non-zero or dies from a signal, or the timeout passes, the others get
 * SIGTERM and, half a second later, SIGKILL.
 *
 * Job control: SIGTSTP (Ctrl-Z) to onicrun stops every process and the
 * onload engine (SIGSTOP), then onicrun itself; SIGCONT to onicrun (fg, bg)
 * continues them all, and the job goes on. A process stopped on its own (a
 * debugger, kill -STOP) is waited for, not killed: after RUN_STOP_NOTICE_NS
 * onicrun says once which rank is stopped and that SIGCONT resumes it. A
 * timeout still counts while the job is stopped. Shared-memory objects a
 * program names /onic-<jobid>-... itself are
 * removed before onicrun exits; if onicrun itself is killed by SIGKILL its
 * processes die with it (PR_SET_PDEATHSIG), but such objects stay. Standard input goes to rank 0 unless it is a terminal
 * (the job is not the terminal's foreground group, so reading it would stop
 * the process); every other rank reads /dev/null.
 *
 * With --onload (or ONIC_ONLOAD=1), onicrun first starts the job's onload
 * engine, onic-engine from onicrun's own directory, in a process group of
 * its own, pinned to ONIC_ONLOAD_CORE (default the last core), waits until
 * its status segment says it is ready (a memfd onicrun makes, inherited by
 * the engine and the processes as ONIC_ONLOAD_FD, with a socket pair,
 * ONIC_ONLOAD_SOCK, over which the processes hand the engine their
 * segments), gives every process ONIC_ONLOAD=1,
 * and stops it (SIGTERM, then SIGKILL) after the processes. If the engine
 * dies while they run, the job is stopped as if a process had failed.
 *
 * Exit status: 0 when every process exited 0; else the first failing
 * process's exit status, 128 + its signal number if a signal killed it,
 * 128 + the signal onicrun was stopped with, or 124 after a timeout. */
#include "base/config.h"
#include "base/shmfd.h"
#include "boot/boot.h"
#include "onload/onload.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <libgen.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#define RUN_GRACE_NS     500000000ull  /* SIGTERM, then SIGKILL this much later */
#define RUN_POLL_NS      50000000l
#define RUN_MAX_PROCS    4096
#define RUN_SHM_DIR      "/dev/shm"
#define RUN_EXIT_USAGE   2
#define RUN_EXIT_TIMEOUT 124
#define RUN_ENGINE_START_NS 10000000000ull /* the engine must be ready by then */
#define RUN_STOP_NOTICE_NS 3000000000ull   /* a rank stopped this long is reported */

/* Signals onicrun passes on to the job instead of dying from them. */
static const int run_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

typedef struct run_opts {
    long        nprocs;
    int         bind_core;
    double      timeout_s;  /* 0: none */
    int         onload;     /* --onload or ONIC_ONLOAD=1 */
    unsigned    onload_core; /* ONIC_ONLOAD_CORE: a core or ONIC_CONFIG_LAST */
    unsigned    onload_shared; /* ONIC_ONLOAD_SHARED: onic_config_onload_shared_t */
    unsigned    wait;       /* ONIC_WAIT: onic_config_wait_t */
    char      **argv;       /* PROGRAM ARGS... */
} run_opts_t;

typedef struct run_job {
    char     jobid[17];
    pid_t    pgid;
    pid_t    launcher;  /* onicrun's own pid, for the children to check */
    pid_t   *pids;      /* by rank; 0 once reaped */
    pid_t    engine;    /* the onload engine; 0 if none or reaped */
    int      store_fd;  /* the job's store (boot.h), inherited by the processes */
    int      onload_fd; /* the engine's status segment, inherited by it and them; -1 none */
    int      onload_sock[2]; /* the engine's end, the processes' end */
    int      engine_core; /* the core it is pinned to, -1 if unbound */
    long     alive;
    int      status;    /* onicrun's exit status so far */
    int      stopping;  /* the others have been told to stop */
    uint64_t kill_at;   /* when stopping: SIGKILL time, 0 once sent */
    uint64_t *stopped;  /* by rank: when it was seen stopped, 0 if running */
    uint8_t  *noticed;  /* by rank: its stop was reported */
    int      suspended; /* onicrun stopped the job itself (SIGTSTP) */
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
            "usage: onicrun -n N [--bind none|core] [--timeout SECONDS] [--onload] PROGRAM "
            "[ARGS...]\n"
            "  -n N               start N processes (ranks 0 to N-1)\n"
            "  --bind none|core   leave processes unbound (default) or bind rank r to core\n"
            "                     r modulo the number of cores (hwloc)\n"
            "  --timeout SECONDS  stop the job and fail if it runs longer\n"
            "  --onload           run the job with an onload engine on its own core\n"
            "                     (ONIC_ONLOAD_CORE, default the last; also ONIC_ONLOAD=1);\n"
            "                     when the processes leave it none, they progress their\n"
            "                     own traffic without it (ONIC_ONLOAD_SHARED), and say so\n"
            "Each process gets ONIC_RANK, ONIC_SIZE and ONIC_JOBID.\n");
}

/* One ONIC_* variable through the registry (its default when unset); the
 * rest of the environment is the processes' business. */
static int run_env_uint(const char *name, unsigned *value_p)
{
    const onic_config_var_t *var = onic_config_var_find(name);
    const char *str = var != NULL ? onic_config_env(var) : NULL;
    char err[256];

    if (var == NULL)
        return -1;
    if (onic_config_parse(var, str != NULL ? str : var->dflt, value_p, err, sizeof(err)) !=
        ONIC_OK) {
        fprintf(stderr, "onicrun: %s\n", err);
        return -1;
    }
    return 0;
}

static int run_parse_env(run_opts_t *o)
{
    unsigned onload;

    if (run_env_uint("ONIC_ONLOAD", &onload) != 0 ||
        run_env_uint("ONIC_ONLOAD_CORE", &o->onload_core) != 0 ||
        run_env_uint("ONIC_ONLOAD_SHARED", &o->onload_shared) != 0 ||
        run_env_uint("ONIC_WAIT", &o->wait) != 0)
        return RUN_EXIT_USAGE;
    o->onload |= onload != 0;
    return 0;
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
        } else if (strcmp(arg, "--onload") == 0) {
            o->onload = 1;
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
    return run_parse_env(o);

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

/* In a child: keep fd across exec and name it in the environment. */
static int run_inherit(int fd, const char *var)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "%d", fd);
    return fcntl(fd, F_SETFD, 0) != 0 || setenv(var, buf, 1) != 0 ? -1 : 0;
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
    /* The job's store: nameless, so inherited, never opened by name. */
    if (fcntl(job->store_fd, F_SETFD, 0) != 0)
        _exit(127);
    snprintf(buf, sizeof(buf), "%d", job->store_fd);
    setenv("ONIC_BOOT_FD", buf, 1);
    if (o->onload)
        setenv("ONIC_ONLOAD", "1", 1);
    if (job->onload_fd >= 0 && run_inherit(job->onload_fd, "ONIC_ONLOAD_FD") != 0)
        _exit(127);
    if (job->onload_fd >= 0 && run_inherit(job->onload_sock[1], "ONIC_ONLOAD_SOCK") != 0)
        _exit(127);
    if (o->bind_core) {
        int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        long c = rank % ncores;
        /* The engine's core is left to the engine while the other cores
         * hold a rank each; with more ranks, the ranks take every core, the
         * engine's last, so the first ranks still have a core to
         * themselves (rank 0 computes in the overlap benchmarks). */
        if (job->engine_core >= 0 && ncores > 1) {
            long others = ncores - 1;
            c = o->nprocs <= others ? rank % others : rank % ncores;
            if (c == others)
                c = job->engine_core;
            else
                c += c >= job->engine_core;
        }
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
        if (core == NULL || hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) != 0)
            fprintf(stderr, "onicrun: rank %ld: cannot bind to core %ld: %m (running unbound)\n",
                    rank, c);
    }
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "onicrun: rank %ld: cannot run %s: %m\n", rank, o->argv[0]);
    _exit(127);
}

/* onic-engine, next to onicrun itself (both in the build tree or in
 * PREFIX/bin). */
static int run_engine_path(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0) {
        fprintf(stderr, "onicrun: cannot find its own executable: %m\n");
        return -1;
    }
    self[n] = '\0';
    if ((size_t)snprintf(buf, len, "%s/onic-engine", dirname(self)) >= len) {
        fprintf(stderr, "onicrun: the path to onic-engine is too long\n");
        return -1;
    }
    return 0;
}

static void run_engine_child(const run_opts_t *o, run_job_t *job, hwloc_topology_t topo,
                             const char *path, const sigset_t *oldmask)
{
    char buf[32];
    int null = open("/dev/null", O_RDONLY);

    setpgid(0, 0); /* its own group: stopped after the job, not with it */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != job->launcher)
        _exit(127);
    if (null >= 0 && null != STDIN_FILENO) {
        dup2(null, STDIN_FILENO);
        close(null);
    }
    snprintf(buf, sizeof(buf), "%ld", o->nprocs);
    setenv("ONIC_SIZE", buf, 1);
    unsetenv("ONIC_RANK");
    setenv("ONIC_JOBID", job->jobid, 1);
    setenv("ONIC_ONLOAD", "1", 1);
    if (run_inherit(job->onload_fd, "ONIC_ONLOAD_FD") != 0 ||
        run_inherit(job->onload_sock[0], "ONIC_ONLOAD_SOCK") != 0)
        _exit(127);
    if (job->engine_core >= 0) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)job->engine_core);
        snprintf(buf, sizeof(buf), "%d", job->engine_core);
        setenv("ONIC_ONLOAD_CORE", buf, 1);
        if (core == NULL || hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) != 0)
            fprintf(stderr, "onicrun: onload engine: cannot bind to core %d: %m\n",
                    job->engine_core);
    }
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    execl(path, path, (char *)NULL);
    fprintf(stderr, "onicrun: cannot run the onload engine %s: %m\n", path);
    _exit(127);
}

/* Start the engine and wait until its status segment says it is ready.
 * 0 on success; else the engine is gone and the reason said. */
static int run_engine_start(const run_opts_t *o, run_job_t *job, hwloc_topology_t topo,
                            const sigset_t *oldmask)
{
    char path[PATH_MAX];
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    uint64_t deadline;
    pid_t pid;

    if (o->onload_core != ONIC_CONFIG_LAST && o->onload_core >= (unsigned)ncores) {
        fprintf(stderr, "onicrun: ONIC_ONLOAD_CORE=%u: this machine has %d cores (0 to %d)\n",
                o->onload_core, ncores, ncores - 1);
        return -1;
    }
    job->engine_core = o->onload_core == ONIC_CONFIG_LAST ? ncores - 1 : (int)o->onload_core;
    if (run_engine_path(path, sizeof(path)) != 0)
        return -1;
    /* Its status segment and the socket over which the processes hand it
     * their segments: nameless, inherited (base/shmfd.h). */
    job->onload_fd = onic_shmfd_create("onic-onload", sizeof(onic_onload_status_t));
    if (job->onload_fd < 0)
        return -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, job->onload_sock) != 0) {
        fprintf(stderr, "onicrun: cannot make the onload engine's socket: %m\n");
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "onicrun: cannot start the onload engine: %m\n");
        return -1;
    }
    if (pid == 0)
        run_engine_child(o, job, topo, path, oldmask);
    /* The engine's end is the engine's alone: once it is gone, a process
     * handing it a segment gets an error instead of a full socket. */
    close(job->onload_sock[0]);
    job->engine = pid;
    deadline = run_now_ns() + RUN_ENGINE_START_NS;
    for (;;) {
        struct timespec tick = {0, 1000000};
        onic_onload_status_t st;
        int wst;

        if (onic_onload_status_read(job->onload_fd, &st) == ONIC_OK && st.pid == pid &&
            st.state == ONIC_ONLOAD_READY)
            return 0;
        if (waitpid(pid, &wst, WNOHANG) == pid) {
            job->engine = 0;
            fprintf(stderr, "onicrun: the onload engine (pid %d) %s %d before it was ready\n",
                    (int)pid, WIFSIGNALED(wst) ? "was killed by signal" : "exited with status",
                    WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
            return -1;
        }
        if (run_now_ns() >= deadline) {
            fprintf(stderr, "onicrun: the onload engine (pid %d) was not ready within %llu s\n",
                    (int)pid, RUN_ENGINE_START_NS / 1000000000ull);
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            job->engine = 0;
            return -1;
        }
        nanosleep(&tick, NULL);
    }
}

/* After the job: SIGTERM, SIGKILL after the grace period. The engine's
 * failure to stop cleanly fails a job that had succeeded. */
static void run_engine_stop(run_job_t *job)
{
    uint64_t kill_at = run_now_ns() + RUN_GRACE_NS;
    int st;

    if (job->engine == 0)
        return;
    kill(job->engine, SIGTERM);
    kill(job->engine, SIGCONT);
    while (waitpid(job->engine, &st, WNOHANG) == 0) {
        struct timespec tick = {0, 1000000};
        if (run_now_ns() >= kill_at) {
            fprintf(stderr, "onicrun: the onload engine (pid %d) did not stop; killing it\n",
                    (int)job->engine);
            kill(job->engine, SIGKILL);
            waitpid(job->engine, &st, 0);
            break;
        }
        nanosleep(&tick, NULL);
    }
    if (job->status == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fprintf(stderr, "onicrun: the onload engine (pid %d) did not end cleanly\n",
                (int)job->engine);
        job->status = 1;
    }
    job->engine = 0;
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
    run_signal(job, n, SIGCONT); /* a stopped process must run to end */
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

    while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
        long rank = run_rank_of(job, n, pid);
        int failed = 0, code = 0;

        if (pid == job->engine && !WIFSTOPPED(st) && !WIFCONTINUED(st)) {
            /* The processes it serves cannot go on without it. */
            job->engine = 0;
            if (!job->stopping) {
                fprintf(stderr, "onicrun: the onload engine (pid %d) %s %d; stopping the job\n",
                        (int)pid, WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                /* Its own status if it said one (65: it found corrupt data). */
                job->status = WIFSIGNALED(st)                               ? 128 + WTERMSIG(st)
                              : WIFEXITED(st) && WEXITSTATUS(st) != 0 ? WEXITSTATUS(st)
                                                                      : 1;
                run_stop(job, n, SIGTERM);
            }
            continue;
        }
        if (rank < 0)
            continue;
        if (WIFSTOPPED(st)) {
            /* Waited for, like any slow process (a debugger, kill -STOP):
             * said once if it lasts (run_stop_notice). */
            if (job->stopped[rank] == 0)
                job->stopped[rank] = run_now_ns();
            if (job->stopping)
                kill(pid, SIGCONT); /* so that SIGTERM can end it */
            continue;
        }
        if (WIFCONTINUED(st)) {
            if (job->noticed[rank] && !job->stopping)
                fprintf(stderr, "onicrun: rank %ld (pid %d) continues\n", rank, (int)pid);
            job->stopped[rank] = 0;
            job->noticed[rank] = 0;
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

/* A rank stopped on its own for RUN_STOP_NOTICE_NS: say so, once. */
static void run_stop_notice(run_job_t *job, long n, uint64_t now)
{
    for (long r = 0; r < n && !job->suspended && !job->stopping; r++) {
        if (job->pids[r] == 0 || job->stopped[r] == 0 || job->noticed[r] ||
            now - job->stopped[r] < RUN_STOP_NOTICE_NS)
            continue;
        fprintf(stderr, "onicrun: rank %ld (pid %d) has been stopped for %.0f s; the job waits "
                "for it (kill -CONT %d resumes it)\n", r, (int)job->pids[r],
                (double)(now - job->stopped[r]) / 1e9, (int)job->pids[r]);
        job->noticed[r] = 1;
    }
}

/* Ctrl-Z: stop the processes and the engine, then onicrun itself; when
 * onicrun is continued (fg, bg), continue them. */
static void run_suspend(run_job_t *job, long n)
{
    if (job->stopping)
        return;
    job->suspended = 1;
    run_signal(job, n, SIGSTOP);
    if (job->engine != 0)
        kill(job->engine, SIGSTOP);
    kill(getpid(), SIGSTOP); /* returns once continued */
}

static void run_resume(run_job_t *job, long n)
{
    if (job->engine != 0)
        kill(job->engine, SIGCONT);
    run_signal(job, n, SIGCONT);
    job->suspended = 0;
    for (long r = 0; r < n; r++)
        job->stopped[r] = 0;
}

/* The cores the job may use: with --bind core, hwloc's cores (the ranks are
 * bound to them); else the CPUs onicrun itself may run on. */
static long run_cores(const run_opts_t *o, hwloc_topology_t topo)
{
    cpu_set_t set;

    if (o->bind_core && topo != NULL)
        return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
}

/* Whether the processes, with the engine, outnumber their cores, which
 * decides two things. The engine: with no core of its own it would take
 * the ranks' (every message a trip through it and the scheduler), so
 * unless ONIC_ONLOAD_SHARED=engine the job runs without it and onicrun
 * says so, once. The waits (ONIC_WAIT=auto): a waiting process that spins
 * holds the core the process it waits for needs, so they do not spin;
 * onicrun passes its answer on as ONIC_WAIT=spin or sleep. */
static int run_placement(run_opts_t *o, hwloc_topology_t topo)
{
    long cores = run_cores(o, topo);

    if (o->onload && o->nprocs + 1 > cores) {
        if (o->onload_shared == ONIC_ONLOAD_SHARED_INLINE) {
            fprintf(stderr, "onicrun: --onload: %ld process%s and the onload engine would "
                    "share %ld core%s, leaving the engine none of its own: running without "
                    "it, each process progresses its own traffic (ONIC_ONLOAD_SHARED=engine "
                    "keeps the engine on shared cores)\n", o->nprocs,
                    o->nprocs == 1 ? "" : "es", cores, cores == 1 ? "" : "s");
            o->onload = 0;
            if (setenv("ONIC_ONLOAD", "0", 1) != 0) {
                fprintf(stderr, "onicrun: cannot set ONIC_ONLOAD: %m\n");
                return -1;
            }
        } else {
            fprintf(stderr, "onicrun: --onload: %ld process%s and the onload engine share "
                    "%ld core%s (ONIC_ONLOAD_SHARED=engine): nobody spins, and every message "
                    "waits for the scheduler\n", o->nprocs, o->nprocs == 1 ? "" : "es", cores,
                    cores == 1 ? "" : "s");
        }
    }
    if (o->wait == ONIC_WAIT_AUTO &&
        setenv("ONIC_WAIT", o->nprocs + (o->onload != 0) > cores ? "sleep" : "spin", 1) != 0) {
        fprintf(stderr, "onicrun: cannot set ONIC_WAIT: %m\n");
        return -1;
    }
    return 0;
}

/* Standard input, output and error opened on /dev/null where they are
 * closed (onicrun started by a daemon, or with <&-): otherwise the job's
 * store would get descriptor 0, which ONIC_BOOT_FD cannot name (0 there
 * means "no store"), and a process's later descriptors those its output
 * is written to. */
static void run_std_fds_open(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int null = open("/dev/null", O_RDWR);
            if (null >= 0 && null != fd) {
                dup2(null, fd);
                close(null);
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
    int rc;

    run_std_fds_open();
    if ((rc = run_parse(argc, argv, &o)) != 0)
        return rc;
    memset(&job, 0, sizeof(job));
    job.launcher = getpid();
    if (run_jobid_make(job.jobid) != 0 || run_env_clean() != 0)
        return 1;
    job.pids = calloc((size_t)o.nprocs, sizeof(*job.pids));
    job.stopped = calloc((size_t)o.nprocs, sizeof(*job.stopped));
    job.noticed = calloc((size_t)o.nprocs, sizeof(*job.noticed));
    if (job.pids == NULL || job.stopped == NULL || job.noticed == NULL) {
        fprintf(stderr, "onicrun: out of memory\n");
        return 1;
    }
    job.engine_core = -1;
    job.onload_fd = -1;
    if ((o.bind_core || o.onload) &&
        (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0 ||
         hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) < 1)) {
        fprintf(stderr, "onicrun: cannot read the machine's cores with hwloc: %m\n");
        return 1;
    }
    if (run_placement(&o, topo) != 0)
        return 1;
    if (onic_boot_onicrun_store((uint32_t)o.nprocs, &job.store_fd) != ONIC_OK) {
        fprintf(stderr, "onicrun: cannot make the job's store (see above)\n");
        return 1;
    }

    /* Signals are taken synchronously by sigtimedwait below. */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTSTP);
    sigaddset(&set, SIGCONT);
    for (size_t i = 0; i < sizeof(run_forwarded) / sizeof(run_forwarded[0]); i++)
        sigaddset(&set, run_forwarded[i]);
    sigprocmask(SIG_BLOCK, &set, &oldmask);
    signal(SIGPIPE, SIG_IGN); /* a closed stderr must not kill onicrun before cleanup */

    if (o.onload && run_engine_start(&o, &job, topo, &oldmask) != 0) {
        run_shm_cleanup(&job);
        hwloc_topology_destroy(topo);
        free(job.pids);
    free(job.stopped);
    free(job.noticed);
        return 1;
    }

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

        if (sig == SIGTSTP) {
            run_suspend(&job, o.nprocs);
        } else if (sig == SIGCONT) {
            run_resume(&job, o.nprocs);
        } else if (sig > 0 && sig != SIGCHLD) {
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
        run_stop_notice(&job, o.nprocs, now);
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
    run_engine_stop(&job);
    run_shm_cleanup(&job);
    if (topo != NULL)
        hwloc_topology_destroy(topo);
    free(job.pids);
    free(job.stopped);
    free(job.noticed);
    return job.status;
}
