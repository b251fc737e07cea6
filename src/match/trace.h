/* Match traces: what a process's queues did, recorded for onic-replay.
 *
 * ONIC_TRACE=DIR makes every matcher of a process record its operations in
 * one file per process, DIR/onic-<job>-r<rank>-p<pid>.trace.
 *
 * File format, version 5 (little-endian, as written by x86-64 and arm64):
 *   a header (onic_trace_hdr_t, 128 bytes), then chunks. A chunk is a
 *   16-byte onic_trace_chunk_t (its length in bytes, header included; its
 *   record count; the queue's number and kind) and then that many records,
 *   each a few bytes (70 at most):
 *     byte 0   bits 0-2 the operation (onic_trace_op_t, 1-6), bit 3 HIT,
 *              bit 4 ACCEPT, bit 5 KEY_SAME (the key is the previous
 *              record's of its class), bit 6 IGN_SAME (the ignore bits
 *              are), bit 7 TIME (the record ends with a time);
 *     kind     LABEL only: one byte, the queue's new kind;
 *     key      unless KEY_SAME: bits, then id, each a zigzag varint of its
 *              difference from the previous record's of its class (0 at a
 *              chunk's start): the classes are lookups (MATCH, PEEK) and
 *              the rest (LABEL, APPEND, INSERT, REMOVE), each with its own
 *              previous key and ignore words (version 5: a queue's appends
 *              and lookups alternate, and each repeats its own kind's);
 *     ignore   unless IGN_SAME: the same;
 *     entry    APPEND, INSERT, REMOVE and lookups with HIT: zigzag varint
 *              of its difference from the previous entry in the chunk, in
 *              units of 8 bytes (ONIC_TRACE_ENTRY_SHIFT: entries are
 *              8-byte aligned, and neighbours then differ by one byte);
 *     INSERT   then a byte, the position (HEAD, BEFORE, AFTER), and unless
 *              HEAD the anchor: zigzag varint of (anchor - entry) / 8;
 *     lookups  then the entries inspected: varint;
 *     time     TIME only, last: varint, ticks since the previous time in
 *              the chunk (the first: since the file was opened), modulo
 *              2^64, read as the record was written (after a lookup,
 *              before an append's link). The writer reads the clock for a
 *              chunk's first record, every LABEL, and a record that ends
 *              at least ONIC_TRACE_TIME_BYTES past the end of the last
 *              record that carries one; a record without a time has the
 *              time before it (at most about 128 bytes of records earlier
 *              in its queue, some 40 records). A reader needs only the
 *              TIME bit, not the spacing: the spacing can change without a
 *              new version. At the end, the writer's test for it is the
 *              one it makes anyway for a full buffer.
 *   A varint is 7 bits a byte, low first, the top bit set on every byte but
 *   the last; zigzag maps d to 2d (d >= 0) or -2d-1. Every chunk decodes
 *   alone (its previous values start at 0), so a bad chunk costs only
 *   itself and those after it.
 *
 * Each queue encodes into a buffer of ONIC_TRACE_CHUNK_BYTES and writes it
 * as one chunk, with one pwrite under the file's lock at the file's end,
 * when it is full, when the queue is destroyed and at exit. Records of one
 * queue are in file order; different queues' chunks interleave. A killed
 * process's file is readable up to its last complete record, but its last
 * record is the last one of a chunk it wrote: a kill loses what each queue
 * had not yet written (at most ONIC_TRACE_CHUNK_BYTES of records a queue,
 * some 7000 records). A write cut short by the kill leaves a truncated last
 * chunk whose complete records are read and whose cut is reported.
 *
 * Entries are named by their address while queued (unique among the live
 * entries of a queue, reused after), which is what a replay needs to follow
 * removals and inserts next to an anchor.
 *
 * Tracing wraps a traced matcher's ops table: a matcher without a trace
 * runs the engine's table directly, so tracing off adds to the hot path
 * only the front end's test of m->traced at a hit on the first entry. */
#ifndef ONIC_MATCH_TRACE_H
#define ONIC_MATCH_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <onic/match.h>
#include <onic/status.h>

#define ONIC_TRACE_MAGIC      "ONICTRC"   /* 8 bytes with its NUL */
#define ONIC_TRACE_VERSION    5
#define ONIC_TRACE_HDR_SIZE   128
#define ONIC_TRACE_CHUNK_HDR  16
#define ONIC_TRACE_CHUNK_BYTES 65536      /* a queue's buffer: the most a chunk holds */
#define ONIC_TRACE_REC_MAX    80          /* the most bytes a record takes (70) */
/* The writer reads the clock for a record that ends ONIC_TRACE_TIME_BYTES
 * past the last timed one (and a chunk's first, and every label): a clock
 * read costs more than encoding a record, and no reader needs a finer
 * time. */
#define ONIC_TRACE_TIME_BYTES 128u
/* Entries are named by their address over 8 (their alignment). */
#define ONIC_TRACE_ENTRY_SHIFT 3

typedef enum onic_trace_op {
    ONIC_TRACE_OP_LABEL  = 1,  /* the queue's kind and index: key.bits = index */
    ONIC_TRACE_OP_APPEND = 2,  /* entry linked at the tail */
    ONIC_TRACE_OP_INSERT = 3,  /* entry linked at pos next to aux (anchor), or at the head */
    ONIC_TRACE_OP_MATCH  = 4,  /* lookup that removes what it finds */
    ONIC_TRACE_OP_PEEK   = 5,  /* lookup that keeps what it finds */
    ONIC_TRACE_OP_REMOVE = 6,  /* a queued entry unlinked (cancel, unlink) */
    ONIC_TRACE_OP_MAX    = 6
} onic_trace_op_t;

/* flags */
#define ONIC_TRACE_HIT    0x01u  /* a lookup found entry */
#define ONIC_TRACE_ACCEPT 0x02u  /* a lookup with an accept callback (Portals MD checks) */
#define ONIC_TRACE_FLAGS  0x03u

/* A record's first byte (format above). */
#define ONIC_TRACE_B_OP       0x07u
#define ONIC_TRACE_B_FLAGS_SHIFT 3
#define ONIC_TRACE_B_KEY_SAME 0x20u
#define ONIC_TRACE_B_IGN_SAME 0x40u
#define ONIC_TRACE_B_TIME     0x80u

/* Queue kinds (onic_matcher_label). */
#define ONIC_TRACE_QUEUE_KINDS 4
extern const char *const onic_trace_queue_names[ONIC_TRACE_QUEUE_KINDS];

/* A record as read (onic_trace_read), not as stored. */
typedef struct onic_trace_rec {
    uint8_t     op;        /* onic_trace_op_t */
    uint8_t     kind;      /* onic_match_queue_t */
    uint8_t     flags;
    uint8_t     pos;       /* INSERT: onic_match_pos_t (HEAD, BEFORE, AFTER) */
    uint32_t    queue;     /* the queue's number in this process, from 1 */
    uint64_t    time;      /* clock ticks since the file was opened, as this operation or one
                              at most ONIC_TRACE_TIME_BYTES of records before it in its
                              queue was recorded (format above; header: clock, tick_hz) */
    onic_mkey_t key;       /* APPEND, INSERT: the entry's; lookups: the query's */
    onic_mkey_t ignore;
    uint64_t    entry;     /* the entry appended, found or removed; 0 for a miss */
    uint64_t    aux;       /* lookups: entries inspected; INSERT: the anchor (0: head) */
} onic_trace_rec_t;

typedef struct onic_trace_hdr {
    char     magic[8];     /* ONIC_TRACE_MAGIC */
    uint16_t version;      /* ONIC_TRACE_VERSION */
    uint16_t hdr_size;     /* ONIC_TRACE_HDR_SIZE */
    uint16_t chunk_hdr;    /* ONIC_TRACE_CHUNK_HDR */
    uint16_t reserved;
    uint32_t rank;         /* ONIC_RANK */
    uint32_t size;         /* ONIC_SIZE */
    uint32_t pid;
    uint32_t reserved2;
    uint64_t start_ns;     /* CLOCK_MONOTONIC at open */
    uint64_t start_unix_ns;  /* CLOCK_REALTIME at open, for people */
    uint64_t tick_hz;      /* record time ticks per second, as measured by the writer
                              against CLOCK_MONOTONIC (updated as it writes) */
    char     clock[8];     /* what record times count: "tsc" or "ns" */
    char     engine[16];   /* ONIC_MATCH's engine when the file was opened */
    char     job[48];      /* ONIC_JOBID, "" outside a job */
} onic_trace_hdr_t;

typedef struct onic_trace_chunk {
    uint32_t bytes;        /* the chunk's length, this header included */
    uint32_t nrecs;        /* records in it, at least 1 */
    uint32_t queue;        /* the queue's number in this process, from 1 */
    uint8_t  kind;         /* the queue's kind at the chunk's first record */
    uint8_t  reserved[3];  /* zero */
} onic_trace_chunk_t;

_Static_assert(sizeof(onic_trace_hdr_t) == ONIC_TRACE_HDR_SIZE, "a trace header is 128 bytes");
_Static_assert(sizeof(onic_trace_chunk_t) == ONIC_TRACE_CHUNK_HDR, "a chunk header is 16 bytes");

/* --- writing (match.c) --- */
typedef struct onic_matcher onic_matcher_t;
/* Trace m into the process's file in dir (opened on first use): 1 when
 * it is. On any failure the matcher stays untraced (0) and a warning says
 * why: a trace is never a reason for a queue to fail. */
int  onic_match_trace_attach(onic_matcher_t *m, const char *dir);
/* Record m's kind and index (no-op for an untraced matcher). */
void onic_match_trace_label(onic_matcher_t *m, unsigned kind, uint32_t index);

/* --- reading (trace_read.c) ---
 * A whole file decoded into memory, checked: onic_trace_read fails (with a
 * message in err naming the byte offset) on a bad header; chunks and their
 * records are checked one by one and the first bad one ends the usable
 * part, its offset and reason kept in `error` and `error_offset` -- the
 * records before it stay usable. A partial chunk or record at the end (a
 * killed writer, a short copy) is reported the same way, its complete
 * records kept. */
typedef struct onic_trace {
    onic_trace_hdr_t  hdr;
    onic_trace_rec_t *recs;     /* the complete, valid records, in file order */
    uint64_t         *offsets;  /* each record's byte offset in the file */
    size_t            nchunks;
    size_t            nrecs;
    size_t            file_size;
    int               damaged;        /* 1 if something after the header was bad */
    uint64_t          error_offset;   /* where, when damaged */
    char              error[160];
} onic_trace_t;

/* From a buffer (the fuzzer's entry) or a file. */
onic_status_t onic_trace_parse(const void *buf, size_t len, onic_trace_t *t_p,
                               char *err, size_t errlen);
onic_status_t onic_trace_read(const char *path, onic_trace_t *t_p, char *err, size_t errlen);
void          onic_trace_free(onic_trace_t *t);

#endif
