/* Writing one match-trace record (format in trace.h): the tracer a traced
 * matcher carries and the encoder, inline, for trace.c's wrappers and for
 * engines that record their hot operations in their own frame.
 *
 * A traced matcher's m->ops points at its tracer, whose first member is
 * the ops table it runs: the engine's traced table where the engine has
 * one (ops->traced), with trace.c's wrappers for the operations that table
 * leaves NULL, or the engine's table wrapped whole. A wrapper is a frame
 * around the engine's call: for a lookup, that frame (its saved registers,
 * the engine's seven arguments passed again, the call) cost as much as the
 * record, which is why the default engine writes its lookups' records
 * itself, and why the front end writes the record of a hit on the first
 * entry, which it answers itself (match.c). Untraced matchers run the
 * engine's plain table: one test of m->traced at a front-end hit, nothing
 * else. */
#ifndef ONIC_MATCH_TRACE_REC_H
#define ONIC_MATCH_TRACE_REC_H

#include "match/trace.h"
#include "match/engine.h"
#include "base/clock.h"
#include "base/list.h"

#include <string.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define ONIC_TRACE_CLOCK "tsc"
static inline uint64_t onic_trace_ticks(void)
{
    return __rdtsc();
}
#else
#define ONIC_TRACE_CLOCK "ns"
static inline uint64_t onic_trace_ticks(void)
{
    return onic_time_ns();
}
#endif

typedef struct onic_match_tracer {
    onic_match_ops_t        ops;   /* first: m->ops points here */
    const onic_match_ops_t *real;  /* the engine's plain table */
    uint8_t                *cur;   /* where the next record goes */
    uint8_t                *next;  /* a lookup's record: where its part after the call goes */
    uint8_t                *lim;   /* past it, a record may not fit: write the chunk */
    size_t                  time_at; /* a record ending at or past buf + time_at carries a
                                        time (an offset: it may lie past the buffer) */
    uint8_t                *mark;  /* the nearer of buf + time_at and lim + 1: one test a
                                      record */
    uint8_t                *buf;   /* the chunk: its header, then records */
    uint32_t                nrecs; /* in the chunk */
    uint32_t                queue;
    uint64_t                prev_time;   /* the previous record's, in ticks */
    uint64_t                prev_entry;  /* over 8 (ONIC_TRACE_ENTRY_SHIFT) */
    /* The previous record's key and ignore words, one pair for the
     * entries' records ([0]: LABEL, APPEND, INSERT, REMOVE) and one for
     * lookups' ([1]): a queue's lookups repeat each other's query, its
     * appends each other's entry, and the two alternate. */
    onic_mkey_t             prev_key[2], prev_ign[2];
    uint64_t                start_ticks;  /* the file's */
    onic_dlist_t            link;       /* in the file's list of tracers */
    uint8_t                 kind;
    uint8_t                 chunk_kind; /* the kind when the chunk began */
    int                     broken;     /* a write failed: records stop */
} onic_match_tracer_t;

static inline onic_match_tracer_t *onic_match_tracer_of(const onic_matcher_t *m)
{
    return (onic_match_tracer_t *)(uintptr_t)m->ops;
}

/* Write t's full buffer as one chunk and start the next (trace.c). */
void onic_match_trace_flush(onic_match_tracer_t *t);
/* After an append's record filled the buffer: write it, then the engine's
 * plain append (a function of its own, so that the append's own path
 * makes no call and saves no register). */
void onic_match_trace_full_append(onic_matcher_t *m, onic_mentry_t *e);

_Static_assert(_Alignof(onic_mentry_t) >= (1 << ONIC_TRACE_ENTRY_SHIFT),
               "entries are named by their address over their alignment");
_Static_assert(ONIC_TRACE_HIT == 1, "a lookup's HIT flag is whether it found an entry");

/* Keep a lookup's key words in registers (as scalars): left to itself,
 * gcc stores them as four words and reloads them as two vectors, a
 * store-forwarding stall that cost more than the record. */
#define ONIC_TRACE_SCALARS(a, b, c, d) __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d))

/* A varint, without a loop when it takes one or two bytes (entries'
 * differences and entries inspected nearly always do). */
static inline __attribute__((always_inline)) uint8_t *onic_trace_varint(uint8_t *p, uint64_t v)
{
    if (__builtin_expect(v < 0x80, 1)) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (__builtin_expect(v < 0x4000, 1)) {
        p[0] = (uint8_t)(v | 0x80);
        p[1] = (uint8_t)(v >> 7);
        return p + 2;
    }
    /* A loop, not a call: a call on any path makes the record's frame save
     * registers on every path. */
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* The difference a - b, zigzag coded. */
static inline __attribute__((always_inline)) uint8_t *onic_trace_zigzag(uint8_t *p, uint64_t a,
                                                                        uint64_t b)
{
    uint64_t d = a - b;
    return onic_trace_varint(p, (d << 1) ^ (0 - (d >> 63)));
}

/* One of a record's two key pairs (key, then ignore bits): the bit saying
 * it repeats the previous record's, tested for both words at once (they
 * nearly always repeat), or its two differences. */
static inline __attribute__((always_inline)) uint8_t *
onic_trace_rec_pair(uint8_t *p, uint64_t a, uint64_t b, onic_mkey_t *prev, unsigned same_bit,
                    unsigned *head)
{
    if (((a ^ prev->bits) | (b ^ prev->id)) == 0) {
        *head |= same_bit;
    } else {
        p = onic_trace_zigzag(p, a, prev->bits);
        p = onic_trace_zigzag(p, b, prev->id);
        prev->bits = a;
        prev->id = b;
    }
    return p;
}

/* A record's first part: a label's kind, the key and ignore bits, told
 * from the previous lookup's (lookup: 1) or the previous entry record's
 * (0). Returns where the rest goes; *head_p gets the first byte's bits so
 * far. */
static inline __attribute__((always_inline)) uint8_t *
onic_trace_rec_begin(onic_match_tracer_t *t, int label, int lookup, uint64_t kb, uint64_t ki,
                     uint64_t ib, uint64_t ii, unsigned *head_p)
{
    unsigned head = 0;
    uint8_t *p = t->cur + 1;

    if (label)
        *p++ = t->kind;
    p = onic_trace_rec_pair(p, kb, ki, &t->prev_key[lookup], ONIC_TRACE_B_KEY_SAME, &head);
    p = onic_trace_rec_pair(p, ib, ii, &t->prev_ign[lookup], ONIC_TRACE_B_IGN_SAME, &head);
    *head_p = head;
    return p;
}

/* A record that reaches t->mark: its time when one is due (reading the TSC
 * costs this VM about 12 ns, more than encoding a record) and the next
 * mark. Inline, not a call: a call on any path makes the record's frame
 * save registers on every path. Returns where the record ends. */
static inline __attribute__((always_inline)) uint8_t *
onic_trace_rec_mark(onic_match_tracer_t *t, uint8_t *p, unsigned *head, int label)
{
    if (label || (size_t)(p - t->buf) >= t->time_at) {
        uint64_t now = onic_trace_ticks();

        p = onic_trace_varint(p, now - t->prev_time);
        t->prev_time = now;
        *head |= ONIC_TRACE_B_TIME;
        t->time_at = (size_t)(p - t->buf) + ONIC_TRACE_TIME_BYTES;
    }
    t->mark = t->time_at <= (size_t)(t->lim - t->buf) ? t->buf + t->time_at : t->lim + 1;
    return p;
}

/* The rest of the record at p: the entry, an insert's position and anchor,
 * a lookup's entries inspected; then the first byte at rec (t->cur, passed
 * in: read again after the bytes stored, which may alias it, it costs a
 * load), and the time when one is due (op is a constant wherever this is
 * inlined, so only its own fields' code remains). Returns whether the
 * buffer is full now. */
static inline __attribute__((always_inline)) int
onic_trace_rec_end(onic_match_tracer_t *t, uint8_t *rec, uint8_t *p, unsigned head, unsigned op,
                   unsigned flags, unsigned pos, uint64_t ent, uint64_t aux)
{
    uint64_t unit = ent >> ONIC_TRACE_ENTRY_SHIFT;
    int full = 0;

    if (op != ONIC_TRACE_OP_LABEL && (ent != 0 || (op != ONIC_TRACE_OP_MATCH &&
                                                   op != ONIC_TRACE_OP_PEEK))) {
        p = onic_trace_zigzag(p, unit, t->prev_entry);
        t->prev_entry = unit;
    }
    if (op == ONIC_TRACE_OP_INSERT) {
        *p++ = (uint8_t)pos;
        if (pos != ONIC_MATCH_HEAD)
            p = onic_trace_zigzag(p, aux >> ONIC_TRACE_ENTRY_SHIFT, unit);
    }
    if (op == ONIC_TRACE_OP_MATCH || op == ONIC_TRACE_OP_PEEK)
        p = onic_trace_varint(p, aux);
    head |= op | flags << ONIC_TRACE_B_FLAGS_SHIFT;
    /* p < mark: no time due and the buffer not full, one test for both */
    if (__builtin_expect(op == ONIC_TRACE_OP_LABEL || p >= t->mark, 0)) {
        p = onic_trace_rec_mark(t, p, &head, op == ONIC_TRACE_OP_LABEL);
        full = p > t->lim;
    }
    rec[0] = (uint8_t)head;
    t->cur = p;
    t->nrecs++;
    return full;
}

/* A whole lookup's record, written by an engine after its lookup, in its
 * own frame: the query's key and ignore words, the entry found (NULL:
 * none), whether it was removed, ONIC_TRACE_ACCEPT for find_accept, the
 * entries inspected. */
static inline __attribute__((always_inline)) void
onic_trace_rec_lookup(onic_matcher_t *m, uint64_t kb, uint64_t ki, uint64_t ib, uint64_t ii,
                      onic_mentry_t *e, int removed, unsigned flags, uint64_t inspected)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);
    uint8_t *rec = t->cur;
    unsigned head;
    uint8_t *p = onic_trace_rec_begin(t, 0, 1, kb, ki, ib, ii, &head);
    int full;

    flags |= e != NULL;
    if (removed)
        full = onic_trace_rec_end(t, rec, p, head, ONIC_TRACE_OP_MATCH, flags, 0,
                                  (uint64_t)(uintptr_t)e, inspected);
    else
        full = onic_trace_rec_end(t, rec, p, head, ONIC_TRACE_OP_PEEK, flags, 0,
                                  (uint64_t)(uintptr_t)e, inspected);
    if (full)
        onic_match_trace_flush(t);
}

/* An entry's record (APPEND or REMOVE), written before the engine links
 * or unlinks it: whether the buffer is full now (the caller writes it out,
 * onic_match_trace_flush, where that costs its hot path nothing). */
static inline __attribute__((always_inline)) int
onic_trace_rec_entry(onic_matcher_t *m, const onic_mentry_t *e, unsigned op)
{
    onic_match_tracer_t *t = onic_match_tracer_of(m);
    uint8_t *rec = t->cur;
    unsigned head;
    uint8_t *p = onic_trace_rec_begin(t, 0, 0, e->key.bits, e->key.id, e->ignore.bits,
                                      e->ignore.id, &head);

    return onic_trace_rec_end(t, rec, p, head, op, 0, 0, (uint64_t)(uintptr_t)e, 0);
}

#endif
