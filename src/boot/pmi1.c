/* The PMI-1 wire protocol, as MPICH's Hydra (mpiexec) and Slurm's pmi2
 * plugin serve it: lines of "cmd=NAME key=value ..." over the descriptor in
 * PMI_FD, with PMI_RANK and PMI_SIZE in the environment. Values carry no
 * blanks or '=', so onic's bytes go as hex; keys are global to the job's
 * key-value space, so each carries the rank that put it.
 *
 * Which ranks share the node comes from the launcher's PMI_process_mapping
 * ("(vector,(first node,nodes,ranks per node),...)"), as MPICH reads it.
 * Everything read from the launcher is parsed with bounds checks, and an
 * answer with rc != 0 is reported with the launcher's own msg. */
#include "boot/boot.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PMI1_LINE_MAX 4096

typedef struct pmi1 {
    int  fd;
    char kvs[256];
    size_t vallen_max;
    char line[PMI1_LINE_MAX];  /* the last answer */
    int  finalized;
} pmi1_t;

static onic_status_t pmi1_send(pmi1_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static onic_status_t pmi1_send(pmi1_t *s, const char *fmt, ...)
{
    char buf[PMI1_LINE_MAX];
    va_list ap;
    int n;
    size_t off = 0;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        onic_error("boot: pmi1: a command of %d bytes is too long", n);
        return ONIC_ERR_INVALID_PARAM;
    }
    while (off < (size_t)n) {
        /* send with MSG_NOSIGNAL: a launcher that is gone is an error here,
         * not a SIGPIPE; write where PMI_FD is not a socket. */
        ssize_t w = send(s->fd, buf + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(s->fd, buf + off, (size_t)n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            onic_error("boot: pmi1: cannot write to the launcher (PMI_FD=%d): %m", s->fd);
            return ONIC_ERR_IO;
        }
        off += (size_t)w;
    }
    return ONIC_OK;
}

/* One answer line into s->line, byte by byte: the launcher may send the
 * next answer right behind, and it is not ours to read yet. */
static onic_status_t pmi1_recv(pmi1_t *s)
{
    size_t n = 0;

    for (;;) {
        char c;
        ssize_t r = read(s->fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            onic_error("boot: pmi1: the launcher closed PMI_FD=%d%s", s->fd,
                       r < 0 ? " with an error" : " (did the job end?)");
            return ONIC_ERR_IO;
        }
        if (c == '\n')
            break;
        if (n + 1 >= sizeof(s->line)) {
            onic_error("boot: pmi1: an answer longer than %d bytes", PMI1_LINE_MAX);
            return ONIC_ERR_IO;
        }
        s->line[n++] = c;
    }
    s->line[n] = '\0';
    return ONIC_OK;
}

/* The value of key in the last answer (up to the next blank, or to the end
 * for msg, which may hold blanks), or NULL. */
static const char *pmi1_field(pmi1_t *s, const char *key, char *buf, size_t len)
{
    size_t klen = strlen(key);
    const char *p = s->line;

    while ((p = strstr(p, key)) != NULL) {
        if ((p == s->line || p[-1] == ' ') && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t vlen = strcmp(key, "msg") == 0 ? strlen(v) : strcspn(v, " ");
            if (vlen >= len)
                return NULL;
            memcpy(buf, v, vlen);
            buf[vlen] = '\0';
            return buf;
        }
        p += klen;
    }
    return NULL;
}

/* Send a command and read its answer, which must be cmd=expect with rc 0
 * (or no rc). */
static onic_status_t pmi1_call(pmi1_t *s, const char *what, const char *expect, const char *cmd)
{
    char cmdv[64], rc[32], msg[512];
    onic_status_t status = pmi1_send(s, "%s", cmd);

    if (status == ONIC_OK)
        status = pmi1_recv(s);
    if (status != ONIC_OK)
        return status;
    if (pmi1_field(s, "cmd", cmdv, sizeof(cmdv)) == NULL || strcmp(cmdv, expect) != 0) {
        onic_error("boot: pmi1: %s: the launcher answered \"%.200s\", expected cmd=%s", what,
                   s->line, expect);
        return ONIC_ERR_IO;
    }
    if (pmi1_field(s, "rc", rc, sizeof(rc)) != NULL && strcmp(rc, "0") != 0) {
        onic_error("boot: pmi1: %s failed: the launcher says rc=%s: %s", what, rc,
                   pmi1_field(s, "msg", msg, sizeof(msg)) != NULL ? msg : "(no message)");
        return ONIC_ERR_IO;
    }
    return ONIC_OK;
}

static int pmi1_env_uint(const char *name, uint32_t *v_p)
{
    const char *str = getenv(name); /* the launcher's, not an ONIC_* knob */
    char *end;
    unsigned long v;

    if (str == NULL)
        return 0;
    errno = 0;
    v = strtoul(str, &end, 10);
    if (str[0] < '0' || str[0] > '9' || *end != '\0' || errno != 0 || v > 0x7fffffff)
        return 0;
    *v_p = (uint32_t)v;
    return 1;
}

/* PMI_process_mapping: "(vector,(n0,nn,ppn),...)": blocks of nn nodes
 * from node n0, each taking ppn consecutive ranks; when the blocks hold
 * fewer ranks than the job, placement starts again at the first block
 * (Hydra's round robin). Our node's ranks, or an error. */
#define PMI1_MAP_BLOCKS 64

static onic_status_t pmi1_mapping(onic_boot_t *b, const char *map)
{
    unsigned long blk[PMI1_MAP_BLOCKS][3];
    unsigned nblk = 0;
    const char *p = map;
    uint32_t *local = NULL, n = 0;
    unsigned long mynode = 0;

    if (strncmp(p, "(vector", 7) != 0)
        goto err_bad;
    p += 7;
    while (*p == ',') {
        char *end;
        if (nblk == PMI1_MAP_BLOCKS || p[1] != '(')
            goto err_bad;
        blk[nblk][0] = strtoul(p + 2, &end, 10);
        if (*end != ',')
            goto err_bad;
        blk[nblk][1] = strtoul(end + 1, &end, 10);
        if (*end != ',')
            goto err_bad;
        blk[nblk][2] = strtoul(end + 1, &end, 10);
        if (*end != ')' || blk[nblk][1] == 0 || blk[nblk][2] == 0 ||
            blk[nblk][0] > 0x7fffffff || blk[nblk][1] > 0x7fffffff || blk[nblk][2] > 0x7fffffff)
            goto err_bad;
        nblk++;
        p = end + 1;
    }
    if (*p != ')' || nblk == 0)
        goto err_bad;
    local = onic_calloc(b->size, sizeof(*local));
    if (local == NULL)
        return ONIC_ERR_NO_MEMORY;
    /* Two walks over the placement: find our node, then collect its ranks. */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t rank = 0;
        while (rank < b->size) {
            for (unsigned i = 0; i < nblk && rank < b->size; i++) {
                for (unsigned long node = 0; node < blk[i][1] && rank < b->size; node++) {
                    unsigned long id = blk[i][0] + node;
                    for (unsigned long k = 0; k < blk[i][2] && rank < b->size; k++, rank++) {
                        if (pass == 0 && rank == b->rank)
                            mynode = id;
                        else if (pass == 1 && id == mynode)
                            local[n++] = rank;
                    }
                }
            }
        }
    }
    return onic_boot_local_set(b, local, n);

err_bad:
    onic_free(local);
    onic_error("boot: pmi1: cannot read the launcher's PMI_process_mapping \"%.100s\" for "
               "rank %u of %u", map, b->rank, b->size);
    return ONIC_ERR_IO;
}

static onic_status_t pmi1_init(onic_boot_t *b)
{
    pmi1_t *s = onic_calloc(1, sizeof(*s));
    uint32_t fd;
    char buf[1024], map[PMI1_LINE_MAX]; /* the map fits wherever its answer line does */
    onic_status_t status;

    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    b->state = s;
    s->fd = -1;
    if (!pmi1_env_uint("PMI_FD", &fd) || !pmi1_env_uint("PMI_RANK", &b->rank) ||
        !pmi1_env_uint("PMI_SIZE", &b->size) || b->size == 0 || b->rank >= b->size) {
        onic_error("boot: pmi1: PMI_FD, PMI_RANK and PMI_SIZE must hold a descriptor, a rank "
                   "and a size above it (got \"%s\", \"%s\", \"%s\"); start the job with "
                   "mpiexec.hydra or srun --mpi=pmi2", getenv("PMI_FD") ? getenv("PMI_FD") : "",
                   getenv("PMI_RANK") ? getenv("PMI_RANK") : "",
                   getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "");
        status = ONIC_ERR_INVALID_PARAM;
        goto err_free;
    }
    s->fd = (int)fd;
    status = pmi1_call(s, "init", "response_to_init",
                       "cmd=init pmi_version=1 pmi_subversion=1\n");
    if (status == ONIC_OK)
        status = pmi1_call(s, "get_maxes", "maxes", "cmd=get_maxes\n");
    s->vallen_max = 256;
    if (status == ONIC_OK && pmi1_field(s, "vallen_max", buf, sizeof(buf)) != NULL)
        s->vallen_max = strtoul(buf, NULL, 10);
    if (status == ONIC_OK)
        status = pmi1_call(s, "get_my_kvsname", "my_kvsname", "cmd=get_my_kvsname\n");
    if (status == ONIC_OK && pmi1_field(s, "kvsname", s->kvs, sizeof(s->kvs)) == NULL) {
        onic_error("boot: pmi1: the launcher gave no key-value space name: \"%.200s\"", s->line);
        status = ONIC_ERR_IO;
    }
    if (status != ONIC_OK)
        goto err_free;
    snprintf(b->jobid, sizeof(b->jobid), "%.*s", ONIC_BOOT_JOBID_MAX, s->kvs);
    snprintf(buf, sizeof(buf), "cmd=get kvsname=%s key=PMI_process_mapping\n", s->kvs);
    if (pmi1_send(s, "%s", buf) != ONIC_OK || pmi1_recv(s) != ONIC_OK) {
        status = ONIC_ERR_IO;
        goto err_free;
    }
    if (pmi1_field(s, "rc", buf, sizeof(buf)) != NULL && strcmp(buf, "0") == 0 &&
        pmi1_field(s, "value", map, sizeof(map)) != NULL) {
        status = pmi1_mapping(b, map);
    } else if (strstr(s->line, " value=") != NULL && strstr(s->line, "rc=0") != NULL) {
        onic_error("boot: pmi1: cannot read the launcher's PMI_process_mapping in \"%.200s\"",
                   s->line);
        status = ONIC_ERR_IO;
    } else {
        /* No map: nothing says who shares the node, so nobody does. */
        onic_info("boot: pmi1: the launcher publishes no PMI_process_mapping; every rank "
                  "counts as its own node");
        status = onic_boot_local_block(b, b->rank, 1);
    }
    if (status != ONIC_OK)
        goto err_free;
    return ONIC_OK;

err_free:
    onic_free(s);
    b->state = NULL;
    return status;
}

static onic_status_t pmi1_put(onic_boot_t *b, const char *key, const void *val, size_t len)
{
    pmi1_t *s = b->state;
    char hex[2 * ONIC_BOOT_VAL_MAX + 2], cmd[PMI1_LINE_MAX];
    static const char digits[] = "0123456789abcdef";

    if (2 * len + 1 >= s->vallen_max) { /* vallen_max counts the terminating NUL */
        onic_error("boot: pmi1: a value of %zu bytes does not fit the launcher's %zu "
                   "characters", len, s->vallen_max);
        return ONIC_ERR_NO_RESOURCE;
    }
    /* An empty value is "-": PMI-1 has no empty ones. */
    hex[0] = '-';
    for (size_t i = 0; i < len; i++) {
        hex[1 + 2 * i] = digits[((const uint8_t *)val)[i] >> 4];
        hex[2 + 2 * i] = digits[((const uint8_t *)val)[i] & 15];
    }
    hex[1 + 2 * len] = '\0';
    snprintf(cmd, sizeof(cmd), "cmd=put kvsname=%s key=onic-%s-%u value=%s\n", s->kvs, key,
             b->rank, hex);
    return pmi1_call(s, "put", "put_result", cmd);
}

static onic_status_t pmi1_fence(onic_boot_t *b)
{
    return pmi1_call(b->state, "barrier", "barrier_out", "cmd=barrier_in\n");
}

static int pmi1_hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static onic_status_t pmi1_get(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                              size_t *len_p)
{
    pmi1_t *s = b->state;
    char cmd[PMI1_LINE_MAX], hex[2 * ONIC_BOOT_VAL_MAX + 2];
    size_t hlen, len;
    onic_status_t status;

    snprintf(cmd, sizeof(cmd), "cmd=get kvsname=%s key=onic-%s-%u\n", s->kvs, key, rank);
    status = pmi1_call(s, "get", "get_result", cmd);
    if (status != ONIC_OK)
        return status;
    if (pmi1_field(s, "value", hex, sizeof(hex)) == NULL || hex[0] != '-' ||
        (hlen = strlen(hex + 1)) % 2 != 0) {
        onic_error("boot: pmi1: rank %u's %s is not a value onic put: \"%.100s\"", rank, key,
                   s->line);
        return ONIC_ERR_IO;
    }
    len = hlen / 2;
    if (len > *len_p) {
        onic_error("boot: pmi1: rank %u's %s has %zu bytes, more than %zu", rank, key, len,
                   *len_p);
        return ONIC_ERR_TRUNCATED;
    }
    for (size_t i = 0; i < len; i++) {
        int hi = pmi1_hexval(hex[1 + 2 * i]), lo = pmi1_hexval(hex[2 + 2 * i]);
        if (hi < 0 || lo < 0) {
            onic_error("boot: pmi1: rank %u's %s is not hex", rank, key);
            return ONIC_ERR_IO;
        }
        ((uint8_t *)val)[i] = (uint8_t)(hi << 4 | lo);
    }
    *len_p = len;
    return ONIC_OK;
}

static void pmi1_abort(onic_boot_t *b, int code, const char *msg)
{
    pmi1_t *s = b->state;

    fprintf(stderr, "onic: rank %u aborts the job with code %d: %s\n", b->rank, code, msg);
    /* Hydra ends the other processes; no answer comes. */
    (void)pmi1_send(s, "cmd=abort exitcode=%d\n", code);
}

static void pmi1_fini(onic_boot_t *b)
{
    pmi1_t *s = b->state;

    if (s == NULL)
        return;
    (void)pmi1_call(s, "finalize", "finalize_ack", "cmd=finalize\n");
    onic_free(s);
    b->state = NULL;
}

const onic_boot_ops_t onic_boot_pmi1_ops = {
    .name    = "pmi1",
    .init    = pmi1_init,
    .put     = pmi1_put,
    .fence   = pmi1_fence,
    .get     = pmi1_get,
    .abort   = pmi1_abort,
    .fini    = pmi1_fini,
};
