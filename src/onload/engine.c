/* The onload engine's process: its status segment and its main loop. */
#include "onload/onload.h"
#include "base/clock.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The engine's heartbeat period, and so its longest sleep. */
#define ENGINE_TICK_NS 100000000ull

void onic_onload_status_name(const char *jobid, char *buf)
{
    snprintf(buf, ONIC_ONLOAD_NAME_MAX, "/onic-%s-onload", jobid);
}

onic_status_t onic_onload_status_read(const char *jobid, onic_onload_status_t *status_p)
{
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_status_t copy;
    const onic_onload_status_t *s;
    struct stat st;
    int fd;

    if (jobid == NULL || jobid[0] == '\0' || status_p == NULL)
        return ONIC_ERR_INVALID_PARAM;
    onic_onload_status_name(jobid, name);
    fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? ONIC_ERR_NO_ELEM : ONIC_ERR_IO;
    /* The engine sizes the segment before it publishes the magic; a
     * segment still too small is one we cannot read yet. */
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(*s)) {
        close(fd);
        return ONIC_ERR_NO_ELEM;
    }
    s = mmap(NULL, sizeof(*s), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED)
        return ONIC_ERR_IO;
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != ONIC_ONLOAD_STATUS_MAGIC) {
        munmap((void *)s, sizeof(*s));
        return ONIC_ERR_NO_ELEM; /* not published yet */
    }
    memcpy(&copy, s, sizeof(copy));
    copy.state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    munmap((void *)s, sizeof(*s));
    if (copy.version != ONIC_ONLOAD_STATUS_VERSION || copy.pid <= 0 ||
        copy.state > ONIC_ONLOAD_STOPPED)
        return ONIC_ERR_IO;
    *status_p = copy;
    return ONIC_OK;
}

int onic_onload_status_alive(const onic_onload_status_t *status)
{
    return status->state == ONIC_ONLOAD_READY &&
           (kill((pid_t)status->pid, 0) == 0 || errno == EPERM);
}

static long engine_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* Whether one of the signals the caller blocked asks us to stop. */
static int engine_stop_requested(void)
{
    static const struct timespec zero = {0, 0};
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return sigtimedwait(&set, NULL, &zero) > 0;
}

/* Nothing to do: sleep on the bell until woken or the next tick. A
 * producer that finds `sleeping` set bumps `wake` and wakes the futex. */
static void engine_sleep(onic_onload_status_t *s)
{
    struct timespec ts = {0, (long)ENGINE_TICK_NS};
    uint32_t seq = __atomic_load_n(&s->wake, __ATOMIC_ACQUIRE);

    __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
    engine_futex(&s->wake, FUTEX_WAIT, seq, &ts);
    __atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
}

onic_status_t onic_onload_engine_run(const char *jobid, uint32_t core)
{
    char name[ONIC_ONLOAD_NAME_MAX];
    onic_onload_status_t *s;
    int fd;

    if (jobid == NULL || jobid[0] == '\0') {
        onic_error("onload: the engine needs ONIC_JOBID (onicrun --onload starts it)");
        return ONIC_ERR_INVALID_PARAM;
    }
    onic_onload_status_name(jobid, name);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        onic_error("onload: cannot create %s: %m%s", name,
                   errno == EEXIST ? " (a second engine for this job?)" : "");
        return ONIC_ERR_IO;
    }
    if (ftruncate(fd, (off_t)sizeof(*s)) != 0) {
        onic_error("onload: cannot size %s to %zu bytes: %m", name, sizeof(*s));
        close(fd);
        goto err_unlink;
    }
    s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED) {
        onic_error("onload: cannot map %s (%zu bytes): %m", name, sizeof(*s));
        goto err_unlink;
    }
    s->version = ONIC_ONLOAD_STATUS_VERSION;
    s->pid = (int32_t)getpid();
    s->core = core;
    s->started_ns = onic_time_ns();
    s->heartbeat_ns = s->started_ns;
    s->state = ONIC_ONLOAD_READY;
    __atomic_store_n(&s->magic, ONIC_ONLOAD_STATUS_MAGIC, __ATOMIC_RELEASE);
    onic_debug("onload: engine %d ready on core %u for job %s", (int)getpid(), core, jobid);

    while (!engine_stop_requested()) {
        __atomic_store_n(&s->heartbeat_ns, onic_time_ns(), __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->heartbeat, 1, __ATOMIC_RELEASE);
        /* No process hands the engine work yet (see onload.h): sleep. */
        engine_sleep(s);
    }

    __atomic_store_n(&s->state, ONIC_ONLOAD_STOPPED, __ATOMIC_RELEASE);
    munmap(s, sizeof(*s));
    shm_unlink(name);
    return ONIC_OK;

err_unlink:
    shm_unlink(name);
    return ONIC_ERR_IO;
}
