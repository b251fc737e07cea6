/* Reading match traces (format in trace.h): every chunk and field checked,
 * nothing trusted, every problem reported with its byte offset. */
#include "match/trace.h"
#include "base/mem.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
            return "lookup inspecting 2^32 entries or more";
        break;
    }
    return NULL;
}

/* A varint from p (not past end) into *v; NULL if it runs past end or
 * takes more than 10 bytes. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end,
                                       uint64_t *v)
{
    uint64_t x = 0;

    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p == end)
            return NULL;
        x |= (uint64_t)(*p & 0x7f) << shift;
        if ((*p++ & 0x80) == 0) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* A zigzag difference from base. */
static const unsigned char *get_zigzag(const unsigned char *p, const unsigned char *end,
                                       uint64_t base, uint64_t *v)
{
    uint64_t z;

    p = get_varint(p, end, &z);
    if (p != NULL)
        *v = base + ((z >> 1) ^ (0 - (z & 1)));
    return p;
}

/* What a chunk's records are decoded against: the previous record's, and
 * for key and ignore words the previous lookup's ([1]) or entry record's
 * ([0]). */
typedef struct trace_prev {
    uint64_t    time, entry;   /* entry over 8 (ONIC_TRACE_ENTRY_SHIFT) */
    onic_mkey_t key[2], ign[2];
    uint8_t     kind;
} trace_prev_t;

/* An entry's address from its name in the file (its address over 8) into
 * *addr; -1 for a name whose top bits the shift would drop (it could stand
 * for two entries). */
static int trace_entry_addr(uint64_t unit, uint64_t *addr)
{
    if (unit >> (64 - ONIC_TRACE_ENTRY_SHIFT) != 0)
        return -1;
    *addr = unit << ONIC_TRACE_ENTRY_SHIFT;
    return 0;
}

/* Decode the record at p (before end) into r. Returns the byte after it,
 * or NULL with *why set: "truncated" when it runs past end, else what is
 * wrong with it. */
static const unsigned char *trace_rec_decode(const unsigned char *p, const unsigned char *end,
                                             trace_prev_t *pv, uint32_t queue,
                                             onic_trace_rec_t *r, const char **why)
{
    unsigned head = *p++;
    uint64_t v;
    int lookup;

    memset(r, 0, sizeof(*r));
    *why = "truncated";
    r->op = (uint8_t)(head & ONIC_TRACE_B_OP);
    r->flags = (uint8_t)((head >> ONIC_TRACE_B_FLAGS_SHIFT) & ONIC_TRACE_FLAGS);
    r->queue = queue;
    if (r->op == 0 || r->op > ONIC_TRACE_OP_MAX) {
        *why = "unknown operation";
        return NULL;
    }
    if (r->op == ONIC_TRACE_OP_LABEL) {
        if (p == end)
            return NULL;
        pv->kind = *p++;
        if (pv->kind >= ONIC_TRACE_QUEUE_KINDS) {
            *why = "unknown queue kind";
            return NULL;
        }
    }
    r->kind = pv->kind;
    lookup = r->op == ONIC_TRACE_OP_MATCH || r->op == ONIC_TRACE_OP_PEEK;
    if ((head & ONIC_TRACE_B_KEY_SAME) == 0) {
        onic_mkey_t *k = &pv->key[lookup];
        if ((p = get_zigzag(p, end, k->bits, &k->bits)) == NULL ||
            (p = get_zigzag(p, end, k->id, &k->id)) == NULL)
            return NULL;
    }
    r->key = pv->key[lookup];
    if ((head & ONIC_TRACE_B_IGN_SAME) == 0) {
        onic_mkey_t *k = &pv->ign[lookup];
        if ((p = get_zigzag(p, end, k->bits, &k->bits)) == NULL ||
            (p = get_zigzag(p, end, k->id, &k->id)) == NULL)
            return NULL;
    }
    r->ignore = pv->ign[lookup];
    switch (r->op) {
    case ONIC_TRACE_OP_LABEL:
        break;
    case ONIC_TRACE_OP_MATCH:
    case ONIC_TRACE_OP_PEEK:
        if ((r->flags & ONIC_TRACE_HIT) != 0) {
            if ((p = get_zigzag(p, end, pv->entry, &pv->entry)) == NULL)
                return NULL;
            if (trace_entry_addr(pv->entry, &r->entry) != 0) {
                *why = "entry beyond the address space";
                return NULL;
            }
        }
        if ((p = get_varint(p, end, &r->aux)) == NULL)
            return NULL;
        break;
    default:   /* APPEND, INSERT, REMOVE */
        if ((p = get_zigzag(p, end, pv->entry, &pv->entry)) == NULL)
            return NULL;
        if (trace_entry_addr(pv->entry, &r->entry) != 0) {
            *why = "entry beyond the address space";
            return NULL;
        }
        if (r->op == ONIC_TRACE_OP_INSERT) {
            if (p == end)
                return NULL;
            r->pos = *p++;
            if (r->pos != ONIC_MATCH_HEAD) {
                if ((p = get_zigzag(p, end, pv->entry, &v)) == NULL)
                    return NULL;
                if (trace_entry_addr(v, &r->aux) != 0) {
                    *why = "anchor beyond the address space";
                    return NULL;
                }
            }
        }
        break;
    }
    if ((head & ONIC_TRACE_B_TIME) != 0) {
        if ((p = get_varint(p, end, &v)) == NULL)
            return NULL;
        pv->time += v;
    }
    r->time = pv->time;
    *why = trace_rec_check(r);
    return *why == NULL ? p : NULL;
}

/* Keep r, read at off. 0, or -1 out of memory. */
static int trace_keep(onic_trace_t *t, size_t *cap, const onic_trace_rec_t *r, size_t off)
{
    if (t->nrecs == *cap) {
        size_t ncap = *cap == 0 ? 1024 : 2 * *cap;
        onic_trace_rec_t *recs = onic_realloc(t->recs, ncap * sizeof(*recs));
        uint64_t *offs = onic_realloc(t->offsets, ncap * sizeof(*offs));
        if (recs != NULL)
            t->recs = recs;
        if (offs != NULL)
            t->offsets = offs;
        if (recs == NULL || offs == NULL)
            return -1;
        *cap = ncap;
    }
    t->offsets[t->nrecs] = off;
    t->recs[t->nrecs++] = *r;
    return 0;
}

static void trace_damage(onic_trace_t *t, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void trace_damage(onic_trace_t *t, size_t off, const char *fmt, ...)
{
    va_list ap;

    t->damaged = 1;
    t->error_offset = off;
    va_start(ap, fmt);
    vsnprintf(t->error, sizeof(t->error), fmt, ap);
    va_end(ap);
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
        snprintf(err, errlen, "trace version %u at offset 8; this reader knows version %d%s",
                 t.hdr.version, ONIC_TRACE_VERSION, t.hdr.version < ONIC_TRACE_VERSION ?
                 " (an older onic wrote it: its records are laid out differently)" : "");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (t.hdr.hdr_size != ONIC_TRACE_HDR_SIZE || t.hdr.chunk_hdr != ONIC_TRACE_CHUNK_HDR) {
        snprintf(err, errlen, "header size %u or chunk header size %u at offset 10 is not "
                 "%d / %d", t.hdr.hdr_size, t.hdr.chunk_hdr, ONIC_TRACE_HDR_SIZE,
                 ONIC_TRACE_CHUNK_HDR);
        return ONIC_ERR_INVALID_PARAM;
    }
    t.hdr.clock[sizeof(t.hdr.clock) - 1] = '\0';
    t.hdr.engine[sizeof(t.hdr.engine) - 1] = '\0';
    t.hdr.job[sizeof(t.hdr.job) - 1] = '\0';
    t.file_size = len;
    cap = 0;
    for (off = ONIC_TRACE_HDR_SIZE; off < len && !t.damaged;) {
        onic_trace_chunk_t ch;
        const unsigned char *q, *end;
        trace_prev_t pv;
        uint32_t n = 0;

        if (len - off < ONIC_TRACE_CHUNK_HDR) {
            trace_damage(&t, off, "truncated chunk header at offset %zu: %zu of %d bytes", off,
                         len - off, ONIC_TRACE_CHUNK_HDR);
            break;
        }
        memcpy(&ch, p + off, sizeof(ch));
        if (ch.bytes <= ONIC_TRACE_CHUNK_HDR || ch.bytes > ONIC_TRACE_CHUNK_BYTES ||
            ch.nrecs == 0 || ch.nrecs > ch.bytes - ONIC_TRACE_CHUNK_HDR || ch.queue == 0 ||
            ch.kind >= ONIC_TRACE_QUEUE_KINDS ||
            (ch.reserved[0] | ch.reserved[1] | ch.reserved[2]) != 0) {
            trace_damage(&t, off, "bad chunk header at offset %zu (%u bytes, %u records, "
                         "queue %u, kind %u)", off, ch.bytes, ch.nrecs, ch.queue, ch.kind);
            break;
        }
        memset(&pv, 0, sizeof(pv));
        pv.kind = ch.kind;
        q = p + off + ONIC_TRACE_CHUNK_HDR;
        end = p + off + (len - off < ch.bytes ? len - off : ch.bytes);
        while (q < end) {
            onic_trace_rec_t r;
            const char *why;
            size_t roff = (size_t)(q - p);
            const unsigned char *next = trace_rec_decode(q, end, &pv, ch.queue, &r, &why);

            if (next == NULL) {
                if (strcmp(why, "truncated") != 0)
                    trace_damage(&t, roff, "bad record at offset %zu: %s", roff, why);
                else if (end == p + len && len - off < ch.bytes)
                    trace_damage(&t, roff, "truncated record at offset %zu (the file ends "
                                 "%zu bytes into a chunk of %u)", roff, len - off, ch.bytes);
                else
                    trace_damage(&t, roff, "bad record at offset %zu: runs past the end of "
                                 "its chunk at offset %zu", roff, off);
                break;
            }
            if (++n > ch.nrecs) {
                trace_damage(&t, roff, "bad record at offset %zu: beyond the %u records of "
                             "its chunk at offset %zu", roff, ch.nrecs, off);
                break;
            }
            if (trace_keep(&t, &cap, &r, roff) != 0) {
                onic_trace_free(&t);
                snprintf(err, errlen, "no memory for %zu records", 2 * cap);
                return ONIC_ERR_NO_MEMORY;
            }
            q = next;
        }
        if (t.damaged)
            break;
        if (len - off < ch.bytes) {
            trace_damage(&t, len, "truncated record at offset %zu (the file ends %zu bytes "
                         "into a chunk of %u)", len, len - off, ch.bytes);
            break;
        }
        if (n != ch.nrecs) {
            trace_damage(&t, off, "bad chunk at offset %zu: %u records, its header says %u",
                         off, n, ch.nrecs);
            break;
        }
        t.nchunks++;
        off += ch.bytes;
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
