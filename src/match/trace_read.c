/* Reading match traces (format in trace.h): every field checked, nothing
 * trusted, every problem reported with its byte offset. */
#include "match/trace.h"
#include "base/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int trace_rec_zero(const unsigned char *p)
{
    for (size_t i = 0; i < ONIC_TRACE_REC_SIZE; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* NULL if r is well formed, else what is wrong with it. */
static const char *trace_rec_check(const onic_trace_rec_t *r)
{
    int hit = (r->flags & ONIC_TRACE_HIT) != 0;

    if (r->op > ONIC_TRACE_OP_MAX)
        return "unknown operation";
    if (r->kind >= ONIC_TRACE_QUEUE_KINDS)
        return "unknown queue kind";
    if ((r->flags & ~ONIC_TRACE_FLAGS) != 0)
        return "unknown flags";
    if (r->queue == 0)
        return "queue number 0";
    switch (r->op) {
    case ONIC_TRACE_OP_LABEL:
        if (r->entry != 0 || r->flags != 0)
            return "label with an entry or flags";
        break;
    case ONIC_TRACE_OP_INSERT:
        if (r->pos != ONIC_MATCH_HEAD && r->pos != ONIC_MATCH_BEFORE && r->pos != ONIC_MATCH_AFTER)
            return "insert at an unknown position";
        if ((r->pos == ONIC_MATCH_HEAD) != (r->aux == 0))
            return "insert whose anchor does not fit its position";
        /* fall through */
    case ONIC_TRACE_OP_APPEND:
    case ONIC_TRACE_OP_REMOVE:
        if (r->entry == 0 || r->flags != 0)
            return "entry operation without an entry, or with lookup flags";
        break;
    case ONIC_TRACE_OP_MATCH:
    case ONIC_TRACE_OP_PEEK:
        if (hit != (r->entry != 0))
            return "lookup whose hit flag disagrees with its entry";
        if (r->aux > UINT32_MAX)
            return "lookup inspecting more than 2^32 entries";
        break;
    }
    return NULL;
}

onic_status_t onic_trace_parse(const void *buf, size_t len, onic_trace_t *t_p,
                               char *err, size_t errlen)
{
    const unsigned char *p = buf;
    onic_trace_t t;
    size_t off, cap;

    if (buf == NULL && len > 0) {
        snprintf(err, errlen, "no buffer");
        return ONIC_ERR_INVALID_PARAM;
    }
    memset(&t, 0, sizeof(t));
    if (len < ONIC_TRACE_HDR_SIZE) {
        snprintf(err, errlen, "truncated header at offset 0: %zu of %d bytes", len,
                 ONIC_TRACE_HDR_SIZE);
        return ONIC_ERR_TRUNCATED;
    }
    memcpy(&t.hdr, p, sizeof(t.hdr));
    if (memcmp(t.hdr.magic, ONIC_TRACE_MAGIC, sizeof(ONIC_TRACE_MAGIC)) != 0) {
        snprintf(err, errlen, "not an onic match trace: bad magic at offset 0");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (t.hdr.version != ONIC_TRACE_VERSION) {
        snprintf(err, errlen, "trace version %u at offset 8; this reader knows version %d",
                 t.hdr.version, ONIC_TRACE_VERSION);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (t.hdr.hdr_size != ONIC_TRACE_HDR_SIZE || t.hdr.rec_size != ONIC_TRACE_REC_SIZE) {
        snprintf(err, errlen, "header size %u or record size %u at offset 10 is not %d / %d",
                 t.hdr.hdr_size, t.hdr.rec_size, ONIC_TRACE_HDR_SIZE, ONIC_TRACE_REC_SIZE);
        return ONIC_ERR_INVALID_PARAM;
    }
    t.hdr.clock[sizeof(t.hdr.clock) - 1] = '\0';
    t.hdr.engine[sizeof(t.hdr.engine) - 1] = '\0';
    t.hdr.job[sizeof(t.hdr.job) - 1] = '\0';
    t.file_size = len;
    cap = 0;
    for (off = ONIC_TRACE_HDR_SIZE; off < len; off += ONIC_TRACE_REC_SIZE) {
        onic_trace_rec_t r;
        const char *why;

        if (len - off < ONIC_TRACE_REC_SIZE) {
            t.damaged = 1;
            t.error_offset = off;
            snprintf(t.error, sizeof(t.error), "truncated record at offset %zu: %zu of %d bytes",
                     off, len - off, ONIC_TRACE_REC_SIZE);
            break;
        }
        if (trace_rec_zero(p + off))
            continue;
        memcpy(&r, p + off, sizeof(r));
        if (r.op == 0)      /* begun, never finished: a killed writer */
            continue;
        why = trace_rec_check(&r);
        if (why != NULL) {
            t.damaged = 1;
            t.error_offset = off;
            snprintf(t.error, sizeof(t.error), "bad record at offset %zu: %s", off, why);
            break;
        }
        if (t.nrecs == cap) {
            size_t ncap = cap == 0 ? 1024 : 2 * cap;
            onic_trace_rec_t *recs = onic_realloc(t.recs, ncap * sizeof(*recs));
            uint64_t *offs = onic_realloc(t.offsets, ncap * sizeof(*offs));
            if (recs != NULL)
                t.recs = recs;
            if (offs != NULL)
                t.offsets = offs;
            if (recs == NULL || offs == NULL) {
                onic_trace_free(&t);
                snprintf(err, errlen, "no memory for %zu records", ncap);
                return ONIC_ERR_NO_MEMORY;
            }
            cap = ncap;
        }
        t.offsets[t.nrecs] = off;
        t.recs[t.nrecs++] = r;
    }
    *t_p = t;
    return ONIC_OK;
}

onic_status_t onic_trace_read(const char *path, onic_trace_t *t_p, char *err, size_t errlen)
{
    struct stat st;
    unsigned char *buf;
    size_t done = 0;
    onic_status_t status;
    int fd;

    if (path == NULL || t_p == NULL) {
        snprintf(err, errlen, "NULL %s", path == NULL ? "path" : "trace");
        return ONIC_ERR_INVALID_PARAM;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return ONIC_ERR_NO_ELEM;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        close(fd);
        return ONIC_ERR_INVALID_PARAM;
    }
    buf = onic_malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    if (buf == NULL) {
        snprintf(err, errlen, "no memory to read %s (%lld bytes)", path, (long long)st.st_size);
        close(fd);
        return ONIC_ERR_NO_MEMORY;
    }
    while (done < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;   /* shrank while read: parse what came */
        }
        done += (size_t)n;
    }
    close(fd);
    status = onic_trace_parse(buf, done, t_p, err, errlen);
    onic_free(buf);
    return status;
}

void onic_trace_free(onic_trace_t *t)
{
    if (t == NULL)
        return;
    onic_free(t->recs);
    onic_free(t->offsets);
    t->recs = NULL;
    t->offsets = NULL;
    t->nrecs = 0;
}
