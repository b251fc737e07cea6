/* Collectives, simple and correct, on point-to-point over the
 * communicator's collective context (so they never match the program's own
 * messages): a dissemination barrier, binomial-tree broadcast and reduce,
 * allreduce by recursive doubling (by halves for long data), linear
 * gather and scatter, and allgather and alltoall with every transfer
 * posted at once. Each collective uses its own tag; MPI has every process call a
 * communicator's collectives in the same order, and messages between two
 * processes on one tag never overtake each other, so that is enough.
 *
 * Reductions work on packed data: each element is unpacked from
 * its basic kind (int, double, a value-index pair ...), combined, and the
 * root unpacks the result into the receive buffer's layout. */
#include "mpi/mpi_impl.h"
#include "base/log.h"
#include "base/mem.h"

#include <stdbool.h>
#include <string.h>
#include <wchar.h>

enum {
    COLL_TAG_BARRIER = 1,
    COLL_TAG_BCAST,
    COLL_TAG_REDUCE,
    COLL_TAG_GATHER,
    COLL_TAG_SCATTER,
    COLL_TAG_ALLTOALL,
    COLL_TAG_CTX,
    COLL_TAG_ALLREDUCE,
};

/* --- Reduction operations ----------------------------------------------------------------- */
typedef enum { OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR,
               OP_BXOR, OP_MAXLOC, OP_MINLOC, OP_COUNT } coll_op_t;
static_assert(OP_COUNT < ONIC_MPI_OP_USER, "the user operations' code is no predefined one's");

static const char *const coll_op_names[OP_COUNT] = {
    "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR", "MPI_BOR",
    "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC"};

/* Which family a basic kind is in, for the op/type rules of MPI 3.1, 5.9.2. */
enum { FAM_NONE, FAM_INT, FAM_FLOAT, FAM_BYTE, FAM_PAIR, FAM_BOOL, FAM_COMPLEX };

static int coll_family(onic_mpi_basic_t b)
{
    switch (b) {
    case ONIC_MPI_B_CHAR: case ONIC_MPI_B_SCHAR: case ONIC_MPI_B_UCHAR: case ONIC_MPI_B_SHORT:
    case ONIC_MPI_B_USHORT: case ONIC_MPI_B_INT: case ONIC_MPI_B_UINT: case ONIC_MPI_B_LONG:
    case ONIC_MPI_B_ULONG: case ONIC_MPI_B_LLONG: case ONIC_MPI_B_ULLONG: case ONIC_MPI_B_INT8:
    case ONIC_MPI_B_INT16: case ONIC_MPI_B_INT32: case ONIC_MPI_B_INT64: case ONIC_MPI_B_UINT8:
    case ONIC_MPI_B_UINT16: case ONIC_MPI_B_UINT32: case ONIC_MPI_B_UINT64: case ONIC_MPI_B_WCHAR:
    case ONIC_MPI_B_AINT:
        return FAM_INT;
    case ONIC_MPI_B_FLOAT: case ONIC_MPI_B_DOUBLE: case ONIC_MPI_B_LDOUBLE:
        return FAM_FLOAT;
    case ONIC_MPI_B_BYTE:
        return FAM_BYTE;
    case ONIC_MPI_B_BOOL:
        return FAM_BOOL;
    case ONIC_MPI_B_CFLOAT: case ONIC_MPI_B_CDOUBLE: case ONIC_MPI_B_CLDOUBLE:
        return FAM_COMPLEX;
    case ONIC_MPI_B_FLOAT_INT: case ONIC_MPI_B_DOUBLE_INT: case ONIC_MPI_B_LONG_INT:
    case ONIC_MPI_B_2INT: case ONIC_MPI_B_SHORT_INT: case ONIC_MPI_B_LDOUBLE_INT:
        return FAM_PAIR;
    default:
        return FAM_NONE;
    }
}

static int coll_op_allowed(coll_op_t op, int fam)
{
    switch (op) {
    case OP_MAX: case OP_MIN:
        return fam == FAM_INT || fam == FAM_FLOAT;
    case OP_SUM: case OP_PROD:
        return fam == FAM_INT || fam == FAM_FLOAT || fam == FAM_COMPLEX;
    case OP_LAND: case OP_LOR: case OP_LXOR:
        return fam == FAM_INT || fam == FAM_BOOL;
    case OP_BAND: case OP_BOR: case OP_BXOR:
        return fam == FAM_INT || fam == FAM_BYTE;
    case OP_MAXLOC: case OP_MINLOC:
        return fam == FAM_PAIR;
    default:
        return 0;
    }
}

/* inout[i] = in[i] op inout[i] over n packed elements of one C type. The
 * element loads go through memcpy: packed data need not be aligned. One
 * loop per operation, the switch outside, over buffers that do not
 * overlap (restrict): a loop gcc vectorizes. A 32768-double
 * MPI_Reduce_local took 285 us (MPICH: 41): 88 went with the switch out
 * of the loop, 141 with the page faults (onic_mpi_scratch_get), 9 with
 * restrict; it takes 47. */
#define COLL_LOOP(_T, _expr) \
    for (size_t i = 0; i < n; i++) { \
        _T a, b; \
        memcpy(&a, in + i * sizeof(_T), sizeof(_T)); \
        memcpy(&b, io + i * sizeof(_T), sizeof(_T)); \
        b = (_T)(_expr); \
        memcpy(io + i * sizeof(_T), &b, sizeof(_T)); \
    }

#define COLL_ARITH(_T) \
    static void coll_arith_##_T(coll_op_t op, const char *restrict in, char *restrict io, \
                                size_t n) \
    { \
        switch (op) { \
        case OP_MAX: COLL_LOOP(_T, a > b ? a : b) break; \
        case OP_MIN: COLL_LOOP(_T, a < b ? a : b) break; \
        case OP_SUM: COLL_LOOP(_T, a + b) break; \
        case OP_PROD: COLL_LOOP(_T, a * b) break; \
        case OP_LAND: COLL_LOOP(_T, a && b) break; \
        case OP_LOR: COLL_LOOP(_T, a || b) break; \
        case OP_LXOR: COLL_LOOP(_T, !a != !b) break; \
        default: break; \
        } \
    }

#define COLL_BITS(_T) \
    static void coll_bits_##_T(coll_op_t op, const char *restrict in, char *restrict io, \
                               size_t n) \
    { \
        switch (op) { \
        case OP_BAND: COLL_LOOP(_T, a & b) break; \
        case OP_BOR: COLL_LOOP(_T, a | b) break; \
        case OP_BXOR: COLL_LOOP(_T, a ^ b) break; \
        default: break; \
        } \
    }

/* Value-index pairs, packed as the value then the int. MPI 3.1, 5.9.4:
 * the better value wins; on a tie, the smaller index. */
#define COLL_LOC(_T) \
    static void coll_loc_##_T(coll_op_t op, const char *in, char *io, size_t n) \
    { \
        const size_t sz = sizeof(_T) + sizeof(int); \
        for (size_t i = 0; i < n; i++) { \
            _T a, b; \
            int ia, ib; \
            memcpy(&a, in + i * sz, sizeof(_T)); \
            memcpy(&ia, in + i * sz + sizeof(_T), sizeof(int)); \
            memcpy(&b, io + i * sz, sizeof(_T)); \
            memcpy(&ib, io + i * sz + sizeof(_T), sizeof(int)); \
            if ((op == OP_MAXLOC ? a > b : a < b) || (a == b && ia < ib)) { \
                memcpy(io + i * sz, &a, sizeof(_T)); \
                memcpy(io + i * sz + sizeof(_T), &ia, sizeof(int)); \
            } \
        } \
    }

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;

COLL_ARITH(char) COLL_ARITH(schar) COLL_ARITH(uchar) COLL_ARITH(short) COLL_ARITH(ushort)
COLL_ARITH(int) COLL_ARITH(uint) COLL_ARITH(long) COLL_ARITH(ulong) COLL_ARITH(llong)
COLL_ARITH(ullong) COLL_ARITH(float) COLL_ARITH(double) COLL_ARITH(ldouble)
COLL_ARITH(int8_t) COLL_ARITH(int16_t) COLL_ARITH(int32_t) COLL_ARITH(int64_t)
COLL_ARITH(uint8_t) COLL_ARITH(uint16_t) COLL_ARITH(uint32_t) COLL_ARITH(uint64_t)
COLL_ARITH(wchar_t) COLL_ARITH(intptr_t)
COLL_BITS(char) COLL_BITS(schar) COLL_BITS(uchar) COLL_BITS(short) COLL_BITS(ushort)
COLL_BITS(int) COLL_BITS(uint) COLL_BITS(long) COLL_BITS(ulong) COLL_BITS(llong)
COLL_BITS(ullong) COLL_BITS(int8_t) COLL_BITS(int16_t) COLL_BITS(int32_t) COLL_BITS(int64_t)
COLL_BITS(uint8_t) COLL_BITS(uint16_t) COLL_BITS(uint32_t) COLL_BITS(uint64_t)
COLL_BITS(wchar_t) COLL_BITS(intptr_t)
COLL_LOC(float) COLL_LOC(double) COLL_LOC(long) COLL_LOC(int) COLL_LOC(short) COLL_LOC(ldouble)

/* Complex numbers take MPI_SUM and MPI_PROD only (MPI 3.1, 5.9.2). */
#define COLL_CPLX(_N, _T) \
    static void coll_cplx_##_N(coll_op_t op, const char *in, char *io, size_t n) \
    { \
        for (size_t i = 0; i < n; i++) { \
            _T _Complex a, b; \
            memcpy(&a, in + i * sizeof(a), sizeof(a)); \
            memcpy(&b, io + i * sizeof(b), sizeof(b)); \
            b = op == OP_SUM ? a + b : a * b; \
            memcpy(io + i * sizeof(b), &b, sizeof(b)); \
        } \
    }

COLL_CPLX(float, float) COLL_CPLX(double, double) COLL_CPLX(ldouble, long double)

/* C _Bool takes the logical operations only (MPI 3.1, 5.9.2). */
static void coll_logic_bool(coll_op_t op, const char *in, char *io, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool a, b;
        memcpy(&a, in + i, 1);
        memcpy(&b, io + i, 1);
        b = op == OP_LAND ? (a && b) : op == OP_LOR ? (a || b) : (a != b);
        memcpy(io + i, &b, 1);
    }
}

typedef void (*coll_fn_t)(coll_op_t op, const char *in, char *io, size_t n);

typedef struct coll_kind_fns {
    coll_fn_t arith, bits, loc;
} coll_kind_fns_t;

static const coll_kind_fns_t coll_fns[ONIC_MPI_B_COUNT] = {
    [ONIC_MPI_B_CHAR] = {coll_arith_char, coll_bits_char, NULL},
    [ONIC_MPI_B_SCHAR] = {coll_arith_schar, coll_bits_schar, NULL},
    [ONIC_MPI_B_UCHAR] = {coll_arith_uchar, coll_bits_uchar, NULL},
    [ONIC_MPI_B_BYTE] = {NULL, coll_bits_uchar, NULL},
    [ONIC_MPI_B_SHORT] = {coll_arith_short, coll_bits_short, NULL},
    [ONIC_MPI_B_USHORT] = {coll_arith_ushort, coll_bits_ushort, NULL},
    [ONIC_MPI_B_INT] = {coll_arith_int, coll_bits_int, NULL},
    [ONIC_MPI_B_UINT] = {coll_arith_uint, coll_bits_uint, NULL},
    [ONIC_MPI_B_LONG] = {coll_arith_long, coll_bits_long, NULL},
    [ONIC_MPI_B_ULONG] = {coll_arith_ulong, coll_bits_ulong, NULL},
    [ONIC_MPI_B_LLONG] = {coll_arith_llong, coll_bits_llong, NULL},
    [ONIC_MPI_B_ULLONG] = {coll_arith_ullong, coll_bits_ullong, NULL},
    [ONIC_MPI_B_FLOAT] = {coll_arith_float, NULL, NULL},
    [ONIC_MPI_B_DOUBLE] = {coll_arith_double, NULL, NULL},
    [ONIC_MPI_B_LDOUBLE] = {coll_arith_ldouble, NULL, NULL},
    [ONIC_MPI_B_INT8] = {coll_arith_int8_t, coll_bits_int8_t, NULL},
    [ONIC_MPI_B_INT16] = {coll_arith_int16_t, coll_bits_int16_t, NULL},
    [ONIC_MPI_B_INT32] = {coll_arith_int32_t, coll_bits_int32_t, NULL},
    [ONIC_MPI_B_INT64] = {coll_arith_int64_t, coll_bits_int64_t, NULL},
    [ONIC_MPI_B_UINT8] = {coll_arith_uint8_t, coll_bits_uint8_t, NULL},
    [ONIC_MPI_B_UINT16] = {coll_arith_uint16_t, coll_bits_uint16_t, NULL},
    [ONIC_MPI_B_UINT32] = {coll_arith_uint32_t, coll_bits_uint32_t, NULL},
    [ONIC_MPI_B_UINT64] = {coll_arith_uint64_t, coll_bits_uint64_t, NULL},
    [ONIC_MPI_B_FLOAT_INT] = {NULL, NULL, coll_loc_float},
    [ONIC_MPI_B_DOUBLE_INT] = {NULL, NULL, coll_loc_double},
    [ONIC_MPI_B_LONG_INT] = {NULL, NULL, coll_loc_long},
    [ONIC_MPI_B_2INT] = {NULL, NULL, coll_loc_int},
    [ONIC_MPI_B_SHORT_INT] = {NULL, NULL, coll_loc_short},
    [ONIC_MPI_B_LDOUBLE_INT] = {NULL, NULL, coll_loc_ldouble},
    [ONIC_MPI_B_BOOL] = {coll_logic_bool, NULL, NULL},
    [ONIC_MPI_B_WCHAR] = {coll_arith_wchar_t, coll_bits_wchar_t, NULL},
    [ONIC_MPI_B_AINT] = {coll_arith_intptr_t, coll_bits_intptr_t, NULL},
    [ONIC_MPI_B_CFLOAT] = {coll_cplx_float, NULL, NULL},
    [ONIC_MPI_B_CDOUBLE] = {coll_cplx_double, NULL, NULL},
    [ONIC_MPI_B_CLDOUBLE] = {coll_cplx_ldouble, NULL, NULL},
};

/* A user operation on count elements of type t, packed in in and io:
 * called on them directly where the packed data is the type's own layout,
 * else on typed copies (the function reads the type's layout). */
static void coll_apply_user(const onic_mpi_opd_t *op, const onic_mpi_type_t *t, const char *in,
                            char *io, size_t bytes)
{
    int n = (int)(bytes / t->size);
    MPI_Datatype h = t->handle;
    size_t span;
    char *a, *b;

    if (t->contig) {
        ptrdiff_t off = t->nblocks > 0 ? t->blocks[0].off : 0;
        op->fn((void *)(uintptr_t)(in - off), io - off, &n, &h);
        return;
    }
    /* From the first element's data to the last's. */
    span = (size_t)((ptrdiff_t)(n - 1) * t->extent + t->true_extent);
    a = onic_malloc(span + 1);
    b = onic_malloc(span + 1);
    if (a != NULL && b != NULL) {
        onic_mpi_type_unpack(t, in, bytes, a - t->true_lb, n);
        onic_mpi_type_unpack(t, io, bytes, b - t->true_lb, n);
        op->fn(a - t->true_lb, b - t->true_lb, &n, &h);
        onic_mpi_type_pack(t, b - t->true_lb, n, io);
    } else {
        onic_error("mpi: no memory (%zu bytes) to apply a user operation to a "
                   "non-contiguous datatype; the result is wrong", span);
    }
    onic_free(a);
    onic_free(b);
}

void onic_mpi_coll_apply(const onic_mpi_opd_t *op, const onic_mpi_type_t *t, const char *in,
                         char *io, size_t bytes)
{
    const coll_kind_fns_t *f;
    size_t n;

    if (bytes == 0)
        return;
    if (op->code == ONIC_MPI_OP_USER) {
        coll_apply_user(op, t, in, io, bytes);
        return;
    }
    f = &coll_fns[t->basic];
    n = bytes / t->basic_size;
    if (op->code == OP_MAXLOC || op->code == OP_MINLOC)
        f->loc((coll_op_t)op->code, in, io, n);
    else if (op->code == OP_BAND || op->code == OP_BOR || op->code == OP_BXOR)
        f->bits((coll_op_t)op->code, in, io, n);
    else
        f->arith((coll_op_t)op->code, in, io, n);
}

int onic_mpi_coll_op_check(MPI_Op h, onic_mpi_type_t *t, onic_mpi_comm_t *c, const char *call,
                           onic_mpi_opd_t *op_p)
{
    int fam = coll_family(t->basic);
    coll_op_t op;

    if (h < MPI_MAX || h > MPI_MINLOC) {
        const onic_mpi_op_t *u = onic_mpi_htab_get(&onic_mpi_g.ops, h);
        if (u == NULL)
            return onic_mpi_err(c, MPI_ERR_OP, call, "op %#x is not an operation; use MPI_SUM, "
                                "MPI_MAX and the other predefined ones, or one from "
                                "MPI_Op_create", (unsigned)h);
        *op_p = (onic_mpi_opd_t){ONIC_MPI_OP_USER, u->fn, u->commute};
        return MPI_SUCCESS;
    }
    op = (coll_op_t)(h - MPI_MAX);
    if (!coll_op_allowed(op, fam))
        return onic_mpi_err(c, MPI_ERR_OP, call, "%s is not defined on this datatype (%s); see "
                            "MPI 3.1 section 5.9.2 for which types each operation takes",
                            coll_op_names[op], t->predefined ? t->name : "a derived type");
    *op_p = (onic_mpi_opd_t){(int)op, NULL, 1};
    return MPI_SUCCESS;
}

/* The same operations for one-sided accumulates (rma.c): op is the index
 * onic_mpi_op_check returns. */
int onic_mpi_op_check(MPI_Op h, onic_mpi_type_t *t, onic_mpi_comm_t *c, const char *call,
                      int *op_p)
{
    onic_mpi_opd_t op;
    int rc;

    if (h < MPI_MAX || h > MPI_MINLOC)
        return onic_mpi_err(c, MPI_ERR_OP, call, "op %#x is not a predefined operation: "
                            "one-sided accumulates take MPI_SUM, MPI_MAX and the other "
                            "predefined ones, MPI_REPLACE and MPI_NO_OP only", (unsigned)h);
    rc = onic_mpi_coll_op_check(h, t, c, call, &op);
    if (rc == MPI_SUCCESS)
        *op_p = op.code;
    return rc;
}

void onic_mpi_op_apply(int op, const onic_mpi_type_t *t, const void *in, void *io, size_t bytes)
{
    const onic_mpi_opd_t d = {op, NULL, 1};

    onic_mpi_coll_apply(&d, t, in, io, bytes);
}

/* --- Shared checks ------------------------------------------------------------------------ */
int onic_mpi_coll_comm(MPI_Comm comm, const char *call, onic_mpi_comm_t **c_p)
{
    onic_mpi_comm_t *c;
    int rc;

    *c_p = NULL;
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return onic_mpi_err(c, MPI_ERR_COMM, call, "communicator %#x is an "
                            "intercommunicator; %s takes intracommunicators only (in onic, "
                            "or in MPI 3.1 for the scans): merge it with "
                            "MPI_Intercomm_merge first", (unsigned)comm, call);
    *c_p = c;
    return MPI_SUCCESS;
}

int onic_mpi_coll_buf(onic_mpi_comm_t *c, const char *call, const char *what, const void *buf,
                      int count, MPI_Datatype type, onic_mpi_type_t **t_p)
{
    int rc;

    if (count < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%scount %d is negative", what, count);
    if ((*t_p = onic_mpi_type_check(type, c, call, &rc)) == NULL)
        return rc;
    if (buf == NULL && count > 0 && (*t_p)->size > 0)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is NULL with count %d", what, count);
    return MPI_SUCCESS;
}

int onic_mpi_coll_root(onic_mpi_comm_t *c, const char *call, int root)
{
    if (root < 0 || root >= c->size)
        return onic_mpi_err(c, MPI_ERR_ROOT, call, "root %d is not a rank of the communicator "
                            "(0 to %d)", root, c->size - 1);
    return MPI_SUCCESS;
}

static onic_mpi_type_t *coll_bytes(void)
{
    return onic_mpi_type_get(MPI_BYTE);
}

/* --- Barrier ------------------------------------------------------------------------------- */
int onic_mpi_coll_barrier(onic_mpi_comm_t *c, const char *call)
{
    onic_mpi_req_t *r[2];
    int rc;

    /* Dissemination: in round k, send to rank + 2^k and hear from rank - 2^k. */
    for (int dist = 1; dist < c->size; dist *= 2) {
        int to = (c->rank + dist) % c->size, from = (c->rank - dist + c->size) % c->size;
        r[0] = r[1] = NULL;
        if ((rc = onic_mpi_coll_irecv(NULL, 0, coll_bytes(), from, COLL_TAG_BARRIER, c,
                                      &r[0])) != MPI_SUCCESS ||
            (rc = onic_mpi_coll_isend(NULL, 0, coll_bytes(), to, COLL_TAG_BARRIER, c, &r[1])) !=
                MPI_SUCCESS) {
            onic_mpi_coll_waitall(2, r, call);
            return rc;
        }
        if ((rc = onic_mpi_coll_waitall(2, r, call)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    int rc;

    if (c != NULL)
        return onic_mpi_inter_barrier(c, "MPI_Barrier");
    rc = onic_mpi_coll_comm(comm, "MPI_Barrier", &c);

    return rc != MPI_SUCCESS ? rc : onic_mpi_coll_barrier(c, "MPI_Barrier");
}

/* --- Broadcast ----------------------------------------------------------------------------- */
int onic_mpi_coll_bcast(onic_mpi_comm_t *c, void *buf, int count, onic_mpi_type_t *t, int root,
                        const char *call)
{
    int rel = (c->rank - root + c->size) % c->size, mask, rc;
    onic_mpi_req_t *r = NULL;

    /* Binomial tree: receive from the parent (the rank that differs in the
     * lowest set bit), then send to the children below that bit. */
    for (mask = 1; mask < c->size; mask <<= 1)
        if (rel & mask) {
            int parent = (rel - mask + root) % c->size;
            if ((rc = onic_mpi_coll_irecv(buf, count, t, parent, COLL_TAG_BCAST, c, &r)) !=
                    MPI_SUCCESS ||
                (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS)
                return rc;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < c->size) {
            int child = (rel + mask + root) % c->size;
            if ((rc = onic_mpi_coll_isend(buf, count, t, child, COLL_TAG_BCAST, c, &r)) !=
                    MPI_SUCCESS ||
                (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Bcast";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    int rc;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_inter_bcast(c, buffer, count, datatype, root, call);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(c, call, "", buffer, count, datatype, &t)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    return onic_mpi_coll_bcast(c, buffer, count, t, root, call);
}

/* --- Reduce -------------------------------------------------------------------------------- */
/* acc = (the lower ranks' part) op (the higher ranks'): tmp holds the
 * other part, from ranks below this process's if lower. */
static void coll_combine(const onic_mpi_opd_t *op, onic_mpi_type_t *t, char *acc, char *tmp,
                         size_t bytes, int lower)
{
    if (lower) {
        onic_mpi_coll_apply(op, t, tmp, acc, bytes);
    } else {
        onic_mpi_coll_apply(op, t, acc, tmp, bytes);
        memcpy(acc, tmp, bytes);
    }
}

/* Reduce count elements (packed in acc, which is overwritten) to root; the
 * root's acc holds the result. */
int onic_mpi_coll_reduce(onic_mpi_comm_t *c, char *acc, size_t bytes, onic_mpi_type_t *t,
                         const onic_mpi_opd_t *op, int root, const char *call)
{
    /* An operation that does not commute combines in rank order: the tree
     * is rooted at rank 0 (each node's children hold the ranks right after
     * its own), and rank 0 hands the result to the root. */
    int tree_root = op->commute ? root : 0;
    int rel = (c->rank - tree_root + c->size) % c->size, rc = MPI_SUCCESS;
    onic_mpi_req_t *r = NULL;
    char *tmp = onic_mpi_scratch_get(bytes + 1);

    if (tmp == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    /* Binomial tree toward the root: take the children's partial results,
     * then pass ours to the parent. */
    for (int mask = 1; mask < c->size; mask <<= 1) {
        if (rel & mask) {
            int parent = (rel - mask + tree_root) % c->size;
            if ((rc = onic_mpi_coll_isend(acc, (int)bytes, coll_bytes(), parent,
                                          COLL_TAG_REDUCE, c, &r)) == MPI_SUCCESS)
                rc = onic_mpi_coll_waitall(1, &r, call);
            break;
        }
        if (rel + mask < c->size) {
            int child = (rel + mask + tree_root) % c->size;
            if ((rc = onic_mpi_coll_irecv(tmp, (int)bytes, coll_bytes(), child, COLL_TAG_REDUCE,
                                          c, &r)) != MPI_SUCCESS ||
                (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS)
                break;
            /* acc = acc op child's, the child's ranks coming after ours;
             * an operation that commutes takes it either way round, the
             * one without a copy. */
            coll_combine(op, t, acc, tmp, bytes, op->commute);
        }
    }
    if (rc == MPI_SUCCESS && tree_root != root && (c->rank == 0 || c->rank == root)) {
        if (c->rank == 0)
            rc = onic_mpi_coll_isend(acc, (int)bytes, coll_bytes(), root, COLL_TAG_REDUCE, c, &r);
        else
            rc = onic_mpi_coll_irecv(acc, (int)bytes, coll_bytes(), 0, COLL_TAG_REDUCE, c, &r);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
    }
    onic_mpi_scratch_put(tmp);
    return rc;
}

/* --- Scratch buffers ---------------------------------------------------------------------- */
/* The blocking reductions' packed copies, kept from one call to the next:
 * glibc gives a buffer of 128 KiB or more back to the kernel when it is
 * freed (mmap, or the heap's top trimmed), and its next use then takes a
 * page fault per 4 KiB -- 145 us of a 256 KiB MPI_Reduce_local's 197.
 * The largest few are kept, each at most SCRATCH_MAX (64 MiB in all at
 * most, until MPI_Finalize); from the cache allocator, whose buffers the
 * tests' leak counts leave out. */
#define SCRATCH_SLOTS 4
#define SCRATCH_MAX   ((size_t)16 << 20)
#define SCRATCH_HDR   64 /* the capacity, and the data aligned as malloc's */

static char *scratch_kept[SCRATCH_SLOTS];

static size_t scratch_cap(const char *base)
{
    size_t cap;

    memcpy(&cap, base, sizeof(cap));
    return cap;
}

void *onic_mpi_scratch_get(size_t size)
{
    int best = -1;
    char *base;

    for (int i = 0; i < SCRATCH_SLOTS; i++)
        if (scratch_kept[i] != NULL && scratch_cap(scratch_kept[i]) >= size &&
            (best < 0 || scratch_cap(scratch_kept[i]) < scratch_cap(scratch_kept[best])))
            best = i;
    if (best >= 0) {
        base = scratch_kept[best];
        scratch_kept[best] = NULL;
        return base + SCRATCH_HDR;
    }
    if (size > SIZE_MAX - SCRATCH_HDR - 64 ||
        (base = onic_cache_alloc(64, SCRATCH_HDR + size)) == NULL)
        return NULL;
    memcpy(base, &size, sizeof(size));
    return base + SCRATCH_HDR;
}

void onic_mpi_scratch_put(void *p)
{
    char *base = p != NULL ? (char *)p - SCRATCH_HDR : NULL;
    int low = 0;

    if (base == NULL)
        return;
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        if (scratch_kept[i] == NULL) {
            low = i;
            break;
        }
        if (scratch_cap(scratch_kept[i]) < scratch_cap(scratch_kept[low]))
            low = i;
    }
    /* Kept in a free slot, or in place of a smaller one. */
    if (scratch_cap(base) <= SCRATCH_MAX &&
        (scratch_kept[low] == NULL || scratch_cap(scratch_kept[low]) < scratch_cap(base))) {
        onic_cache_free(scratch_kept[low]);
        scratch_kept[low] = base;
        return;
    }
    onic_cache_free(base);
}

void onic_mpi_scratch_fini(void)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        onic_cache_free(scratch_kept[i]);
        scratch_kept[i] = NULL;
    }
}

/* --- Allreduce ---------------------------------------------------------------------------- */
/* Send sbytes at sbuf to peer and take rbytes from it into rbuf, on the
 * allreduce's tag. */
static int coll_sendrecv(onic_mpi_comm_t *c, const char *sbuf, size_t sbytes, char *rbuf,
                         size_t rbytes, int peer, const char *call)
{
    onic_mpi_req_t *r[2] = {NULL, NULL};
    int rc, wrc;

    if ((rc = onic_mpi_coll_irecv(rbuf, (int)rbytes, coll_bytes(), peer, COLL_TAG_ALLREDUCE, c,
                                  &r[0])) == MPI_SUCCESS)
        rc = onic_mpi_coll_isend(sbuf, (int)sbytes, coll_bytes(), peer, COLL_TAG_ALLREDUCE, c,
                                 &r[1]);
    /* Whatever was started is waited for. */
    wrc = onic_mpi_coll_waitall(2, r, call);
    return rc != MPI_SUCCESS ? rc : wrc;
}

/* From this many bytes (and at least one element a process) the
 * allreduce reduces by halves then gathers (coll_rsag); below it, by
 * recursive doubling. */
#define COLL_RSAG_MIN ((size_t)32 << 10)

/* The allreduce of the pof2 processes of recursive doubling, for long
 * data: reduce-scatter by recursive halving, then allgather by recursive
 * doubling (Rabenseifner's). In the step of bit `mask` (1, 2, 4, ...) a
 * process keeps the lower half of its range of elements if that bit of its
 * rank is 0, else the upper, sends the other half to the process whose
 * rank differs in that bit only (which has the same range) and combines
 * what it gets for its half, the lower ranks' part first: the partial
 * results are over runs of consecutive ranks, so an operation that does
 * not commute is applied in rank order. Each element's result is made at
 * one process, and the allgather (the steps in reverse, each swapping the
 * halves straight into acc) gives everyone its bits. Each process sends
 * and combines about bytes / 2 + bytes / 4 + ..., where recursive doubling
 * sends and combines all bytes in each of log2(pof2) steps. */
static int coll_rsag(onic_mpi_comm_t *c, const char *src, char *acc, char *tmp,
                     size_t count, onic_mpi_type_t *t, const onic_mpi_opd_t *op, int vrank,
                     int pof2, int extra, const char *call)
{
    const size_t esize = t->size;
    size_t lo[32], hi[32], a = 0, b = count;
    int k = 0, rc = MPI_SUCCESS;

    for (int mask = 1; mask < pof2; mask <<= 1, k++) {
        int vpeer = vrank ^ mask, peer = vpeer < extra ? 2 * vpeer + 1 : vpeer + extra;
        size_t mid = a + (b - a) / 2, ka, kb, sa, sb, kbytes;
        /* Each element's result is made at one process: an operation that
         * commutes takes the partner's part either way round, without the
         * copy that puts it first. */
        int first = op->commute || vpeer < vrank;

        lo[k] = a;
        hi[k] = b;
        if (vrank & mask)
            ka = mid, kb = b, sa = a, sb = mid;
        else
            ka = a, kb = mid, sa = mid, sb = b;
        kbytes = (kb - ka) * esize;
        if ((rc = coll_sendrecv(c, (src != NULL ? src : acc) + sa * esize, (sb - sa) * esize,
                                tmp, kbytes, peer, call)) != MPI_SUCCESS)
            return rc;
        if (src == NULL) {
            coll_combine(op, t, acc + ka * esize, tmp, kbytes, first);
        } else if (first) {
            /* The first step from the send buffer: only the half kept is
             * copied into acc (the allgather fills the other). */
            memmove(acc + ka * esize, src + ka * esize, kbytes);
            onic_mpi_coll_apply(op, t, tmp, acc + ka * esize, kbytes);
        } else {
            onic_mpi_coll_apply(op, t, src + ka * esize, tmp, kbytes);
            memcpy(acc + ka * esize, tmp, kbytes);
        }
        src = NULL;
        a = ka;
        b = kb;
    }
    while (k-- > 0) {
        int mask = 1 << k, vpeer = vrank ^ mask;
        int peer = vpeer < extra ? 2 * vpeer + 1 : vpeer + extra;
        /* The partner's half of the step's range: the one not kept. */
        size_t oa = vrank & mask ? lo[k] : b, ob = vrank & mask ? a : hi[k];

        if ((rc = coll_sendrecv(c, acc + a * esize, (b - a) * esize, acc + oa * esize,
                                (ob - oa) * esize, peer, call)) != MPI_SUCCESS)
            return rc;
        a = lo[k];
        b = hi[k];
    }
    return rc;
}

/* Allreduce by recursive doubling: in each step a process swaps its part
 * (the reduction over a run of ranks) with the process holding the next
 * run up or down and combines the two, the lower ranks' first, so every
 * process combines in rank order and gets the same bits, whatever the
 * operation. log2(size) steps of one swap each way, where reduce then
 * broadcast made 2 log2(size) one-way transfers one after another (a
 * 16 KiB allreduce of 2 processes: two 16 KiB transfers in turn, now one
 * swap). Long data goes by halves instead (coll_rsag). Past the largest
 * power of two, the first 2 * extra ranks fold in pairs first: each even
 * one hands its part to the odd one after it and gets the result back at
 * the end. */
int onic_mpi_coll_allreduce_from(onic_mpi_comm_t *c, const char *src, char *acc, size_t bytes,
                                 onic_mpi_type_t *t, const onic_mpi_opd_t *op, const char *call)
{
    int n = c->size, pof2 = 1, extra, vrank, rc = MPI_SUCCESS;
    size_t count = t->size > 0 ? bytes / t->size : 0;
    int halves = bytes >= COLL_RSAG_MIN && count >= (size_t)n;
    onic_mpi_req_t *r = NULL;
    char *tmp;

    while (pof2 * 2 <= n)
        pof2 *= 2;
    extra = n - pof2;
    /* The input goes into acc whole, but by halves with no fold, where
     * the first step takes it from src (a single process has no step). */
    if (src != NULL && !(halves && extra == 0 && n > 1)) {
        memmove(acc, src, bytes);
        src = NULL;
    }
    if (n == 1)
        return MPI_SUCCESS;
    /* By halves, a step takes at most half of the elements (rounded up),
     * but the fold takes them all. */
    if ((tmp = onic_mpi_scratch_get(halves && extra == 0 ? (count + 1) / 2 * t->size + 1
                                                          : bytes + 1)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    vrank = c->rank < 2 * extra ? (c->rank % 2 == 0 ? -1 : c->rank / 2) : c->rank - extra;
    if (vrank < 0) {
        if ((rc = onic_mpi_coll_isend(acc, (int)bytes, coll_bytes(), c->rank + 1,
                                      COLL_TAG_ALLREDUCE, c, &r)) == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
    } else if (c->rank < 2 * extra) {
        if ((rc = onic_mpi_coll_irecv(tmp, (int)bytes, coll_bytes(), c->rank - 1,
                                      COLL_TAG_ALLREDUCE, c, &r)) == MPI_SUCCESS &&
            (rc = onic_mpi_coll_waitall(1, &r, call)) == MPI_SUCCESS)
            coll_combine(op, t, acc, tmp, bytes, 1);
    }
    if (rc == MPI_SUCCESS && vrank >= 0 && halves)
        rc = coll_rsag(c, src, acc, tmp, count, t, op, vrank, pof2, extra, call);
    for (int mask = 1; rc == MPI_SUCCESS && vrank >= 0 && !halves && mask < pof2; mask <<= 1) {
        int vpeer = vrank ^ mask, peer = vpeer < extra ? 2 * vpeer + 1 : vpeer + extra;
        if ((rc = coll_sendrecv(c, acc, bytes, tmp, bytes, peer, call)) == MPI_SUCCESS)
            coll_combine(op, t, acc, tmp, bytes, vpeer < vrank);
    }
    /* The folded ranks get the result. */
    if (rc == MPI_SUCCESS && c->rank < 2 * extra) {
        if (vrank < 0)
            rc = onic_mpi_coll_irecv(acc, (int)bytes, coll_bytes(), c->rank + 1,
                                     COLL_TAG_ALLREDUCE, c, &r);
        else
            rc = onic_mpi_coll_isend(acc, (int)bytes, coll_bytes(), c->rank - 1,
                                     COLL_TAG_ALLREDUCE, c, &r);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
    }
    onic_mpi_scratch_put(tmp);
    return rc;
}

/* Validate, pack the input into a fresh buffer; *acc_p is the caller's
 * (how: from onic_mpi_scratch_get, or onic_malloc), or the receive buffer
 * (how ONIC_MPI_ACC_RECVBUF, where it can be: see there). */
int onic_mpi_coll_reduce_begin(const char *call, MPI_Comm comm, const void *sendbuf,
                               void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               int root, int all, size_t max_bytes, onic_mpi_comm_t **c_p,
                               onic_mpi_type_t **t_p, onic_mpi_opd_t *op_p, char **acc_p,
                               size_t *bytes_p, int how)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    const void *in;
    int rc, is_root;

    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS)
        return rc;
    if (!all && (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    is_root = all || c->rank == root;
    in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (sendbuf == MPI_IN_PLACE && !is_root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if ((rc = onic_mpi_coll_buf(c, call, "send", in, count, datatype, &t)) != MPI_SUCCESS ||
        (is_root && (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, count, datatype, &t)) != MPI_SUCCESS))
        return rc;
    if ((rc = onic_mpi_coll_op_check(op, t, c, call, op_p)) != MPI_SUCCESS)
        return rc;
    *bytes_p = t->size * (size_t)count;
    /* Before anything is allocated or copied. */
    if (*bytes_p > max_bytes)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%d elements of %zu bytes: %s reduces at "
                            "most %zu bytes in one call", count, t->size, call, max_bytes);
    /* The receive buffer itself where its elements lie as packed ones do:
     * no packed copy in and none out (the caller takes the input from the
     * send buffer, unless in place). */
    if (how == ONIC_MPI_ACC_RECVBUF && onic_mpi_acc_in_recvbuf(t, *bytes_p)) {
        *acc_p = (char *)recvbuf + t->blocks[0].off;
    } else {
        if ((*acc_p = how != ONIC_MPI_ACC_MALLOC ? onic_mpi_scratch_get(*bytes_p + 1)
                                                 : onic_malloc(*bytes_p + 1)) == NULL)
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", *bytes_p);
        onic_mpi_type_pack(t, in, count, *acc_p);
    }
    *c_p = c;
    *t_p = t;
    return MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Reduce";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    char *acc;
    size_t bytes;
    int rc;

    if (c != NULL)
        return onic_mpi_inter_reduce(c, sendbuf, recvbuf, count, datatype, op, root, call);
    rc = onic_mpi_coll_reduce_begin(call, comm, sendbuf, recvbuf, count, datatype, op, root, 0,
                                    SIZE_MAX, &c, &t, &o, &acc, &bytes, ONIC_MPI_ACC_SCRATCH);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = onic_mpi_coll_reduce(c, acc, bytes, t, &o, root, call);
    if (rc == MPI_SUCCESS && c->rank == root)
        onic_mpi_type_unpack(t, acc, bytes, recvbuf, count);
    onic_mpi_scratch_put(acc);
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Allreduce";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    char *acc;
    size_t bytes;
    int rc;

    if (c != NULL)
        return onic_mpi_inter_allreduce(c, sendbuf, recvbuf, count, NULL, datatype, op, call);
    rc = onic_mpi_coll_reduce_begin(call, comm, sendbuf, recvbuf, count, datatype, op, 0, 1,
                                    SIZE_MAX, &c, &t, &o, &acc, &bytes, ONIC_MPI_ACC_RECVBUF);
    if (rc != MPI_SUCCESS)
        return rc;
    /* In the receive buffer, the input is read from the send buffer (MPI
     * makes the two overlapping erroneous; a copy is a memmove). */
    rc = onic_mpi_coll_allreduce_from(c,
                                      onic_mpi_acc_in_recvbuf(t, bytes) && sendbuf != MPI_IN_PLACE
                                          ? (const char *)sendbuf + t->blocks[0].off
                                          : NULL,
                                      acc, bytes, t, &o, call);
    if (!onic_mpi_acc_in_recvbuf(t, bytes)) {
        if (rc == MPI_SUCCESS)
            onic_mpi_type_unpack(t, acc, bytes, recvbuf, count);
        onic_mpi_scratch_put(acc);
    }
    return rc;
}

int onic_mpi_coll_allreduce(onic_mpi_comm_t *c, char *acc, size_t bytes, onic_mpi_type_t *t,
                            const onic_mpi_opd_t *op, const char *call)
{
    return onic_mpi_coll_allreduce_from(c, NULL, acc, bytes, t, op, call);
}

int onic_mpi_coll_band(onic_mpi_comm_t *c, uint64_t *mask, int nwords, const char *call)
{
    onic_mpi_type_t *t = onic_mpi_type_get(MPI_UINT64_T);
    const onic_mpi_opd_t band = {OP_BAND, NULL, 1};

    return onic_mpi_coll_allreduce(c, (char *)mask, (size_t)nwords * sizeof(uint64_t), t, &band,
                                   call);
}

/* --- Gather, scatter, allgather, alltoall ------------------------------------------------- */
static char *coll_at(void *buf, const onic_mpi_type_t *t, int count, int i)
{
    return (char *)buf + (ptrdiff_t)i * count * t->extent;
}

/* Copy between two typed buffers on this process (via a packed copy). */
int onic_mpi_coll_local_copy(onic_mpi_comm_t *c, const char *call, const void *src, int scount,
                             onic_mpi_type_t *st, void *dst, int rcount, onic_mpi_type_t *rt)
{
    size_t sb = st->size * (size_t)scount, rb = rt->size * (size_t)rcount;
    char *tmp;

    if (sb > rb)
        return onic_mpi_err(c, MPI_ERR_TRUNCATE, call, "this process's own block is %zu bytes "
                            "but its receive block only %zu", sb, rb);
    if ((tmp = onic_malloc(sb + 1)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", sb);
    onic_mpi_type_pack(st, src, scount, tmp);
    onic_mpi_type_unpack(rt, tmp, sb, dst, rcount);
    onic_free(tmp);
    return MPI_SUCCESS;
}

static int coll_gather(onic_mpi_comm_t *c, const void *sendbuf, int sendcount,
                       onic_mpi_type_t *st, void *recvbuf, int recvcount, onic_mpi_type_t *rt,
                       int root, const char *call)
{
    onic_mpi_req_t *one = NULL, **reqs;
    int rc;

    if (c->rank != root) {
        if ((rc = onic_mpi_coll_isend(sendbuf, sendcount, st, root, COLL_TAG_GATHER, c, &one)) !=
            MPI_SUCCESS)
            return rc;
        return onic_mpi_coll_waitall(1, &one, call);
    }
    if ((reqs = onic_calloc((size_t)c->size, sizeof(*reqs))) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests", c->size);
    rc = MPI_SUCCESS;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = onic_mpi_coll_irecv(coll_at(recvbuf, rt, recvcount, i), recvcount, rt, i,
                                     COLL_TAG_GATHER, c, &reqs[i]);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st,
                             coll_at(recvbuf, rt, recvcount, root), recvcount, rt);
    {
        int rc2 = onic_mpi_coll_waitall(c->size, reqs, call);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    onic_free(reqs);
    return rc;
}

/* Checks of the send and receive sides: at the root (or everywhere, for
 * the all- forms) the receive side, elsewhere the send side. */
int onic_mpi_coll_sides(onic_mpi_comm_t *c, const char *call, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, const void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int check_send, int check_recv,
                        onic_mpi_type_t **st_p, onic_mpi_type_t **rt_p)
{
    int rc;

    *st_p = *rt_p = NULL;
    if (check_send && (rc = onic_mpi_coll_buf(c, call, "send", sendbuf, sendcount, sendtype, st_p)) !=
        MPI_SUCCESS)
        return rc;
    if (check_recv && (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, recvcount, recvtype, rt_p)) !=
        MPI_SUCCESS)
        return rc;
    return MPI_SUCCESS;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Gather";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt;
    int rc, is_root;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_inter_gather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                                     NULL, recvtype, root, call, NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    is_root = c->rank == root;
    if (sendbuf == MPI_IN_PLACE && !is_root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if ((rc = onic_mpi_coll_sides(c, call, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, sendbuf != MPI_IN_PLACE, is_root, &st, &rt)) != MPI_SUCCESS)
        return rc;
    return coll_gather(c, sendbuf, sendcount, st, recvbuf, recvcount, rt, root, call);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Allgather";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt;
    int rc;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_coll_alltoall_any(c, call, 1, sendbuf, sendcount, NULL, NULL, sendtype,
                                          NULL, recvbuf, recvcount, NULL, NULL, recvtype, NULL,
                                          NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_sides(c, call, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, sendbuf != MPI_IN_PLACE, 1, &st, &rt)) != MPI_SUCCESS)
        return rc;
    if ((long long)recvcount * c->size > INT32_MAX)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "recvcount %d times %d processes is more "
                            "elements than an int counts", recvcount, c->size);
    return onic_mpi_coll_allgather_xchg(c, sendbuf, sendcount, st, recvbuf, recvcount, NULL,
                                        NULL, rt, call);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Scatter";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt;
    onic_mpi_req_t *one = NULL, **reqs;
    int rc, is_root;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_inter_scatter(c, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                                      recvcount, recvtype, root, call, NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    is_root = c->rank == root;
    if (recvbuf == MPI_IN_PLACE && !is_root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if ((rc = onic_mpi_coll_sides(c, call, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, is_root, recvbuf != MPI_IN_PLACE, &st, &rt)) != MPI_SUCCESS)
        return rc;
    if (!is_root) {
        if ((rc = onic_mpi_coll_irecv(recvbuf, recvcount, rt, root, COLL_TAG_SCATTER, c, &one)) !=
            MPI_SUCCESS)
            return rc;
        return onic_mpi_coll_waitall(1, &one, call);
    }
    if ((reqs = onic_calloc((size_t)c->size, sizeof(*reqs))) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests", c->size);
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = onic_mpi_coll_isend(coll_at((void *)sendbuf, st, sendcount, i), sendcount, st, i,
                                     COLL_TAG_SCATTER, c, &reqs[i]);
    if (rc == MPI_SUCCESS && recvbuf != MPI_IN_PLACE)
        rc = onic_mpi_coll_local_copy(c, call, coll_at((void *)sendbuf, st, sendcount, root), sendcount,
                             st, recvbuf, recvcount, rt);
    {
        int rc2 = onic_mpi_coll_waitall(c->size, reqs, call);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
    onic_free(reqs);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Alltoall";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt;
    onic_mpi_req_t **reqs;
    char *copy = NULL;
    int rc, rc2;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_coll_alltoall_any(c, call, 0, sendbuf, sendcount, NULL, NULL, sendtype,
                                          NULL, recvbuf, recvcount, NULL, NULL, recvtype, NULL,
                                          NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_sides(c, call, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, sendbuf != MPI_IN_PLACE, 1, &st, &rt)) != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE) {
        /* Send from a packed copy of the receive buffer. */
        size_t bytes = rt->size * (size_t)recvcount * (size_t)c->size;
        if ((copy = onic_malloc(bytes + 1)) == NULL)
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
        onic_mpi_type_pack(rt, recvbuf, recvcount * c->size, copy);
        sendbuf = copy;
        st = coll_bytes();
        sendcount = (int)(rt->size * (size_t)recvcount);
    }
    if ((reqs = onic_calloc(2 * (size_t)c->size, sizeof(*reqs))) == NULL) {
        onic_free(copy);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests", 2 * c->size);
    }
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        int peer = (c->rank + i) % c->size; /* spread the load: not all to rank 0 first */
        rc = onic_mpi_coll_irecv(coll_at(recvbuf, rt, recvcount, peer), recvcount, rt, peer,
                                 COLL_TAG_ALLTOALL, c, &reqs[2 * i]);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_isend(coll_at((void *)sendbuf, st, sendcount, peer), sendcount, st,
                                     peer, COLL_TAG_ALLTOALL, c, &reqs[2 * i + 1]);
    }
    rc2 = onic_mpi_coll_waitall(2 * c->size, reqs, call);
    onic_free(reqs);
    onic_free(copy);
    return rc != MPI_SUCCESS ? rc : rc2;
}
