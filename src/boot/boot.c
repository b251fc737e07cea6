/* The bootstrap front end (which launcher, argument checks, the one
 * per-process instance) and the onicrun bootstrap.
 *
 * onicrun starts every process of a job on this machine and tells each its
 * rank, the size and an unguessable job id in the environment; the store is
 * nameless shared memory that onicrun makes before it starts them and they
 * inherit (ONIC_BOOT_FD, base/shmfd.h: no name to race for, nothing left
 * however the job ends): a table of values by rank and key, and a barrier. Each process writes only
 * its own row. ONIC_NODES splits the ranks into blocks that act as nodes. */
#include "boot/boot.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/shmfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const onic_boot_ops_t *const boot_all[] = {
    &onic_boot_onicrun_ops,
    &onic_boot_pmi1_ops,
    &onic_boot_pmix_ops,
};

static onic_boot_t *boot_g; /* the process's bootstrap, while anyone holds it */

const onic_boot_ops_t *const *onic_boot_all(size_t *count_p)
{
    *count_p = sizeof(boot_all) / sizeof(boot_all[0]);
    return boot_all;
}

int onic_boot_is_launcher(const onic_boot_t *b)
{
    return b != NULL && b->ops != &onic_boot_onicrun_ops;
}

/* A fatal error elsewhere: tell the launcher, which ends the others. */
static void boot_abort_hook(int code, const char *msg)
{
    if (boot_g != NULL)
        boot_g->ops->abort(boot_g, code != 0 ? code : 1, msg);
}

static const onic_boot_ops_t *boot_choose(const onic_config_t *cfg)
{
    if (cfg->boot != ONIC_BOOT_AUTO)
        return boot_all[cfg->boot - 1];
    /* The launcher's own variables: not ONIC_* knobs, so read here and only
     * here, like libfabric reads FI_*. */
    if (getenv("PMIX_NAMESPACE") != NULL)
        return &onic_boot_pmix_ops;
    if (getenv("PMI_FD") != NULL)
        return &onic_boot_pmi1_ops;
    return &onic_boot_onicrun_ops;
}

onic_status_t onic_boot_open(const onic_config_t *cfg, onic_boot_t **b_p)
{
    const onic_boot_ops_t *ops;
    onic_boot_t *b;
    onic_status_t status;

    if (cfg == NULL || b_p == NULL) {
        onic_error("boot: open needs a config and where to store the bootstrap");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (boot_g != NULL) {
        if (boot_g->refs++ == 0) {
            boot_g->epoch++; /* a launcher's session, kept since the last close */
            onic_log_abort_set(boot_abort_hook);
        }
        *b_p = boot_g;
        return ONIC_OK;
    }
    ops = boot_choose(cfg);
    b = onic_calloc(1, sizeof(*b));
    if (b == NULL)
        return ONIC_ERR_NO_MEMORY;
    b->ops = ops;
    b->cfg = *cfg;
    status = ops->init(b);
    if (status == ONIC_OK && (b->size == 0 || b->rank >= b->size || b->nlocal == 0 ||
                              b->local == NULL || b->local[b->local_index] != b->rank)) {
        onic_error("boot: %s gave rank %u of %u with %u ranks on this node; the launcher "
                   "and onic disagree about the job", ops->name, b->rank, b->size, b->nlocal);
        ops->fini(b);
        status = ONIC_ERR_IO;
    }
    if (status != ONIC_OK) {
        onic_free(b->local);
        onic_free(b);
        return status;
    }
    onic_debug("boot: %s: rank %u of %u, %u on this node (first %u), job %s", ops->name,
               b->rank, b->size, b->nlocal, b->local[0], b->jobid);
    b->refs = 1;
    boot_g = b;
    onic_log_rank_set((int)b->rank); /* errors from here on name it */
    /* onicrun ends the job when a process exits non-zero; other launchers
     * (srun without --kill-on-bad-exit) may need to be told. */
    if (onic_boot_is_launcher(b))
        onic_log_abort_set(boot_abort_hook);
    *b_p = b;
    return ONIC_OK;
}

static void boot_fini(onic_boot_t *b)
{
    b->ops->fini(b);
    onic_free(b->local);
    onic_free(b);
    boot_g = NULL;
}

/* A launcher's session ends when the process does: initialising again
 * after finalizing is not something every launcher allows. */
static void boot_atexit(void)
{
    if (boot_g != NULL && boot_g->refs == 0)
        boot_fini(boot_g);
}

void onic_boot_close(onic_boot_t *b)
{
    static int atexit_set;

    if (b == NULL || b != boot_g || b->refs == 0 || --b->refs > 0)
        return;
    onic_log_abort_set(NULL);
    if (onic_boot_is_launcher(b)) {
        if (!atexit_set && atexit(boot_atexit) == 0)
            atexit_set = 1;
        if (atexit_set)
            return;
    }
    boot_fini(b);
}

static int boot_key_ok(const char *key)
{
    size_t len;

    if (key == NULL)
        return 0;
    len = strlen(key);
    if (len == 0 || len > ONIC_BOOT_KEY_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') ||
              key[i] == '-'))
            return 0;
    return 1;
}

onic_status_t onic_boot_put(onic_boot_t *b, const char *key, const void *val, size_t len)
{
    if (b == NULL || !boot_key_ok(key) || (val == NULL && len > 0) || len > ONIC_BOOT_VAL_MAX) {
        onic_error("boot: put needs a bootstrap, a key of 1 to %d characters [a-z0-9-] and a "
                   "value of at most %d bytes", ONIC_BOOT_KEY_MAX, ONIC_BOOT_VAL_MAX);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (b->epoch > 0) { /* a key of this epoch, not the one put before */
        char k[ONIC_BOOT_KEY_MAX + 16];
        snprintf(k, sizeof(k), "%s-e%u", key, b->epoch);
        return b->ops->put(b, k, val, len);
    }
    return b->ops->put(b, key, val, len);
}

onic_status_t onic_boot_fence(onic_boot_t *b)
{
    if (b == NULL) {
        onic_error("boot: fence without a bootstrap");
        return ONIC_ERR_INVALID_PARAM;
    }
    return b->ops->fence(b);
}

onic_status_t onic_boot_get(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                            size_t *len_p)
{
    if (b == NULL || !boot_key_ok(key) || len_p == NULL || (val == NULL && *len_p > 0) ||
        rank >= b->size) {
        onic_error("boot: get needs a bootstrap, a valid key, a buffer and a rank of the job "
                   "(asked for rank %u)", rank);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (b->epoch > 0) {
        char k[ONIC_BOOT_KEY_MAX + 16];
        snprintf(k, sizeof(k), "%s-e%u", key, b->epoch);
        return b->ops->get(b, rank, k, val, len_p);
    }
    return b->ops->get(b, rank, key, val, len_p);
}

int onic_boot_is_local(const onic_boot_t *b, uint32_t rank)
{
    uint32_t lo = 0, hi = b->nlocal;

    while (lo < hi) { /* local[] is sorted */
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->local[mid] == rank)
            return 1;
        if (b->local[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void onic_boot_abort(onic_boot_t *b, int code, const char *msg)
{
    if (code == 0)
        code = 1; /* an abort is never a success */
    if (b != NULL)
        b->ops->abort(b, code, msg != NULL ? msg : "aborted");
    exit(code & 0xff ? code & 0xff : 1);
}

onic_status_t onic_boot_local_set(onic_boot_t *b, uint32_t *local, uint32_t n)
{
    int found = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (local[i] == b->rank) {
            b->local_index = i;
            found = 1;
        }
        if (local[i] >= b->size || (i > 0 && local[i] <= local[i - 1])) {
            found = 0;
            break;
        }
    }
    if (!found) {
        onic_error("boot: the launcher's ranks on this node are not ascending ranks below %u "
                   "that include this one (%u)", b->size, b->rank);
        onic_free(local);
        return ONIC_ERR_IO;
    }
    b->local = local;
    b->nlocal = n;
    return ONIC_OK;
}

onic_status_t onic_boot_local_block(onic_boot_t *b, uint32_t first, uint32_t count)
{
    uint32_t *local = onic_calloc(count, sizeof(*local));

    if (local == NULL)
        return ONIC_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < count; i++)
        local[i] = first + i;
    return onic_boot_local_set(b, local, count);
}

static int boot_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

onic_status_t onic_boot_local_parse(onic_boot_t *b, const char *list, const char *what)
{
    uint32_t *local = onic_calloc(b->size, sizeof(*local));
    uint32_t n = 0;
    const char *p = list;

    if (local == NULL)
        return ONIC_ERR_NO_MEMORY;
    while (*p != '\0') {
        char *end;
        unsigned long lo, hi;
        errno = 0;
        lo = strtoul(p, &end, 10);
        hi = lo;
        if (end != p && *end == '-') {
            p = end + 1;
            hi = strtoul(p, &end, 10);
        }
        if (end == p || errno != 0 || hi < lo || hi >= b->size || hi - lo >= b->size - n ||
            (*end != ',' && *end != '\0'))
            goto err_bad;
        for (unsigned long r = lo; r <= hi; r++)
            local[n++] = (uint32_t)r;
        p = *end == ',' ? end + 1 : end;
    }
    qsort(local, n, sizeof(*local), boot_cmp_u32);
    for (uint32_t i = 1; i < n; i++)
        if (local[i] == local[i - 1])
            goto err_bad;
    if (n == 0 || bsearch(&b->rank, local, n, sizeof(*local), boot_cmp_u32) == NULL)
        goto err_bad;
    return onic_boot_local_set(b, local, n);

err_bad:
    onic_error("boot: %s \"%.64s\" is not a list of ranks below %u that holds rank %u", what,
               list, b->size, b->rank);
    onic_free(local);
    return ONIC_ERR_IO;
}

/* --- onicrun: the environment and a store in shared memory ------------- */

#define BOOTRUN_MAGIC      0x6f6e69632d6b7673ull /* "onic-kvs" */
#define BOOTRUN_KEYS       8                     /* per rank */
#define BOOTRUN_TIMEOUT_NS (60ull * 1000000000ull)

typedef struct bootrun_entry {
    char     key[ONIC_BOOT_KEY_MAX + 1];
    uint32_t len;
    uint8_t  val[ONIC_BOOT_VAL_MAX];
} bootrun_entry_t;

typedef struct bootrun_hdr {
    uint64_t magic;    /* written last: the region is ready */
    uint32_t size;
    uint32_t arrived;  /* at the current fence */
    uint32_t gen;      /* fences completed; a futex word */
    uint32_t pad;
} bootrun_hdr_t;

typedef struct bootrun {
    bootrun_hdr_t   *hdr;     /* NULL until the first put or fence; or private in a job of one */
    bootrun_entry_t *table;   /* [rank][BOOTRUN_KEYS] */
    size_t           bytes;
    int              shared;
} bootrun_t;

static onic_status_t bootrun_init(onic_boot_t *b)
{
    bootrun_t *s = onic_calloc(1, sizeof(*s));
    uint32_t nodes = b->cfg.nodes, node, first, next;

    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    b->state = s;
    b->rank = b->cfg.rank;
    b->size = b->cfg.size;
    if (b->size > 1 && b->cfg.jobid[0] == '\0') {
        onic_error("boot: ONIC_SIZE=%u but no ONIC_JOBID: start the job with onicrun, or with "
                   "mpirun, srun or mpiexec (PMIx or PMI)", b->size);
        onic_free(s);
        return ONIC_ERR_INVALID_PARAM;
    }
    snprintf(b->jobid, sizeof(b->jobid), "%s", b->cfg.jobid);
    /* Blocks as even as integer division makes them: rank r is on node
     * r * nodes / size. */
    node = (uint32_t)((uint64_t)b->rank * nodes / b->size);
    first = (uint32_t)(((uint64_t)node * b->size + nodes - 1) / nodes);
    next = (uint32_t)(((uint64_t)(node + 1) * b->size + nodes - 1) / nodes);
    if (onic_boot_local_block(b, first, next - first) != ONIC_OK) {
        onic_free(s);
        return ONIC_ERR_NO_MEMORY;
    }
    b->local_index = b->rank - first;
    /* The node's shared memory is named by the job's id, which onicrun
     * removes by prefix however the job ends. */
    if (nodes == 1)
        snprintf(b->nodeid, sizeof(b->nodeid), "%s", b->cfg.jobid);
    else
        snprintf(b->nodeid, sizeof(b->nodeid), "%s-n%u", b->cfg.jobid, node);
    return ONIC_OK;
}

static size_t bootrun_bytes(uint32_t size)
{
    return sizeof(bootrun_hdr_t) + (size_t)size * BOOTRUN_KEYS * sizeof(bootrun_entry_t);
}

onic_status_t onic_boot_onicrun_store(uint32_t size, int *fd_p)
{
    size_t bytes = bootrun_bytes(size);
    bootrun_hdr_t *h;
    int fd;

    if (size < 1 || fd_p == NULL)
        return ONIC_ERR_INVALID_PARAM;
    fd = onic_shmfd_create("onic-boot", bytes);
    if (fd < 0)
        return ONIC_ERR_NO_MEMORY;
    h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        onic_error("boot: cannot map the job's store (%zu bytes): %m", bytes);
        close(fd);
        return ONIC_ERR_NO_MEMORY;
    }
    h->size = size;
    h->magic = BOOTRUN_MAGIC;
    munmap(h, bytes);
    *fd_p = fd;
    return ONIC_OK;
}

/* The store onicrun made and the processes inherit (ONIC_BOOT_FD), mapped
 * on first use. */
static onic_status_t bootrun_map(onic_boot_t *b, bootrun_t *s)
{
    int fd = (int)b->cfg.boot_fd;

    if (s->hdr != NULL)
        return ONIC_OK;
    s->bytes = bootrun_bytes(b->size);
    if (b->size == 1) { /* nobody to share it with */
        s->hdr = onic_calloc(1, s->bytes);
        if (s->hdr == NULL)
            return ONIC_ERR_NO_MEMORY;
        s->hdr->size = 1;
        s->table = (bootrun_entry_t *)(s->hdr + 1);
        return ONIC_OK;
    }
    if (fd == 0) {
        onic_error("boot: ONIC_SIZE=%u but no ONIC_BOOT_FD, the job's store: start the job "
                   "with onicrun", b->size);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (onic_shmfd_check(fd, s->bytes, "the job's store (ONIC_BOOT_FD)") != ONIC_OK) {
        onic_error("boot: are all processes of the job of size %u, started by one onicrun?",
                   b->size);
        return ONIC_ERR_IO;
    }
    /* Not for what this process may start in turn. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    s->hdr = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->hdr == MAP_FAILED) {
        s->hdr = NULL;
        onic_error("boot: cannot map the job's store (%zu bytes): %m", s->bytes);
        return ONIC_ERR_NO_MEMORY;
    }
    s->shared = 1;
    s->table = (bootrun_entry_t *)(s->hdr + 1);
    if (__atomic_load_n(&s->hdr->magic, __ATOMIC_ACQUIRE) != BOOTRUN_MAGIC ||
        s->hdr->size != b->size) {
        onic_error("boot: the job's store (ONIC_BOOT_FD) is not one of %u processes", b->size);
        munmap(s->hdr, s->bytes);
        s->hdr = NULL;
        return ONIC_ERR_IO;
    }
    return ONIC_OK;
}

static onic_status_t bootrun_put(onic_boot_t *b, const char *key, const void *val, size_t len)
{
    bootrun_t *s = b->state;
    bootrun_entry_t *row;
    onic_status_t status = bootrun_map(b, s);

    if (status != ONIC_OK)
        return status;
    row = &s->table[(size_t)b->rank * BOOTRUN_KEYS];
    for (unsigned k = 0; k < BOOTRUN_KEYS; k++) {
        if (row[k].key[0] != '\0' && strcmp(row[k].key, key) != 0)
            continue;
        snprintf(row[k].key, sizeof(row[k].key), "%s", key);
        row[k].len = (uint32_t)len;
        if (len > 0)
            memcpy(row[k].val, val, len);
        return ONIC_OK;
    }
    onic_error("boot: more than %d keys put by one process", BOOTRUN_KEYS);
    return ONIC_ERR_NO_RESOURCE;
}

static onic_status_t bootrun_fence(onic_boot_t *b)
{
    bootrun_t *s = b->state;
    bootrun_hdr_t *h;
    uint32_t gen;
    uint64_t deadline = onic_time_ns() + BOOTRUN_TIMEOUT_NS;
    onic_status_t status = bootrun_map(b, s);

    if (status != ONIC_OK)
        return status;
    h = s->hdr;
    if (!s->shared)
        return ONIC_OK;
    gen = __atomic_load_n(&h->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&h->arrived, 1, __ATOMIC_ACQ_REL) == b->size) {
        __atomic_store_n(&h->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&h->gen, gen + 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &h->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    } else {
        while (__atomic_load_n(&h->gen, __ATOMIC_ACQUIRE) == gen) {
            struct timespec ts = {0, 10000000}; /* re-check the deadline now and then */
            if (onic_time_ns() > deadline) {
                onic_error("boot: not every process of the job reached the fence within %llu "
                           "s; did one fail?", BOOTRUN_TIMEOUT_NS / 1000000000ull);
                return ONIC_ERR_IO;
            }
            syscall(SYS_futex, &h->gen, FUTEX_WAIT, gen, &ts, NULL, 0);
        }
    }
    return ONIC_OK;
}

static onic_status_t bootrun_get(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                                 size_t *len_p)
{
    bootrun_t *s = b->state;
    const bootrun_entry_t *row;
    onic_status_t status = bootrun_map(b, s);

    if (status != ONIC_OK)
        return status;
    row = &s->table[(size_t)rank * BOOTRUN_KEYS];
    for (unsigned k = 0; k < BOOTRUN_KEYS; k++) {
        char rkey[ONIC_BOOT_KEY_MAX + 1];
        uint32_t len;
        /* Another process's row: copy before trusting. */
        memcpy(rkey, row[k].key, sizeof(rkey));
        rkey[ONIC_BOOT_KEY_MAX] = '\0';
        if (strcmp(rkey, key) != 0)
            continue;
        len = row[k].len;
        if (len > ONIC_BOOT_VAL_MAX || len > *len_p) {
            onic_error("boot: rank %u's value for %s has %u bytes, more than %zu", rank, key,
                       len, *len_p);
            return ONIC_ERR_TRUNCATED;
        }
        memcpy(val, row[k].val, len);
        *len_p = len;
        return ONIC_OK;
    }
    onic_error("boot: rank %u published no %s (was it put before the fence?)", rank, key);
    return ONIC_ERR_NO_ELEM;
}

static void bootrun_abort(onic_boot_t *b, int code, const char *msg)
{
    /* onicrun stops the rest of the job when this process exits non-zero. */
    (void)b;
    fprintf(stderr, "onic: abort with code %d: %s\n", code, msg);
}

static void bootrun_fini(onic_boot_t *b)
{
    bootrun_t *s = b->state;

    if (s == NULL)
        return;
    if (s->hdr != NULL && s->shared)
        munmap(s->hdr, s->bytes);
    else
        onic_free(s->hdr);
    onic_free(s);
    b->state = NULL;
}

const onic_boot_ops_t onic_boot_onicrun_ops = {
    .name    = "onicrun",
    .init    = bootrun_init,
    .put     = bootrun_put,
    .fence   = bootrun_fence,
    .get     = bootrun_get,
    .abort   = bootrun_abort,
    .fini    = bootrun_fini,
};
