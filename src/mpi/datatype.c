/* Datatypes: the predefined C types, contiguous and vector types built from
 * any committed or predefined type, and pack/unpack through each type's
 * list of blocks (one element's data, adjacent pieces merged, so a type
 * without gaps is one block and moves with one memcpy). */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <stdbool.h>
#include <string.h>
#include <wchar.h>

typedef struct { float v; int i; } type_float_int_t;
typedef struct { double v; int i; } type_double_int_t;
typedef struct { long v; int i; } type_long_int_t;
typedef struct { int v; int i; } type_2int_t;
typedef struct { short v; int i; } type_short_int_t;
typedef struct { long double v; int i; } type_ldouble_int_t;

/* Predefined types: name, element size, extent, basic kind; pairs are two
 * blocks (the value and the int after it). */
typedef struct type_predef {
    const char      *name;
    size_t           size;     /* for pairs: the value's size */
    size_t           extent;
    onic_mpi_basic_t basic;
    ptrdiff_t        int_off;  /* pairs: where the int is; else 0 */
} type_predef_t;

#define PAIR(_n, _t, _b) {_n, sizeof(((_t *)0)->v), sizeof(_t), _b, offsetof(_t, i)}
static const type_predef_t type_predefs[ONIC_MPI_TYPE_NPREDEF] = {
    {"MPI_CHAR", 1, 1, ONIC_MPI_B_CHAR, 0},
    {"MPI_SIGNED_CHAR", 1, 1, ONIC_MPI_B_SCHAR, 0},
    {"MPI_UNSIGNED_CHAR", 1, 1, ONIC_MPI_B_UCHAR, 0},
    {"MPI_BYTE", 1, 1, ONIC_MPI_B_BYTE, 0},
    {"MPI_SHORT", sizeof(short), sizeof(short), ONIC_MPI_B_SHORT, 0},
    {"MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short), ONIC_MPI_B_USHORT, 0},
    {"MPI_INT", sizeof(int), sizeof(int), ONIC_MPI_B_INT, 0},
    {"MPI_UNSIGNED", sizeof(int), sizeof(int), ONIC_MPI_B_UINT, 0},
    {"MPI_LONG", sizeof(long), sizeof(long), ONIC_MPI_B_LONG, 0},
    {"MPI_UNSIGNED_LONG", sizeof(long), sizeof(long), ONIC_MPI_B_ULONG, 0},
    {"MPI_LONG_LONG", sizeof(long long), sizeof(long long), ONIC_MPI_B_LLONG, 0},
    {"MPI_UNSIGNED_LONG_LONG", sizeof(long long), sizeof(long long), ONIC_MPI_B_ULLONG, 0},
    {"MPI_FLOAT", sizeof(float), sizeof(float), ONIC_MPI_B_FLOAT, 0},
    {"MPI_DOUBLE", sizeof(double), sizeof(double), ONIC_MPI_B_DOUBLE, 0},
    {"MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), ONIC_MPI_B_LDOUBLE, 0},
    {"MPI_INT8_T", 1, 1, ONIC_MPI_B_INT8, 0},
    {"MPI_INT16_T", 2, 2, ONIC_MPI_B_INT16, 0},
    {"MPI_INT32_T", 4, 4, ONIC_MPI_B_INT32, 0},
    {"MPI_INT64_T", 8, 8, ONIC_MPI_B_INT64, 0},
    {"MPI_UINT8_T", 1, 1, ONIC_MPI_B_UINT8, 0},
    {"MPI_UINT16_T", 2, 2, ONIC_MPI_B_UINT16, 0},
    {"MPI_UINT32_T", 4, 4, ONIC_MPI_B_UINT32, 0},
    {"MPI_UINT64_T", 8, 8, ONIC_MPI_B_UINT64, 0},
    PAIR("MPI_FLOAT_INT", type_float_int_t, ONIC_MPI_B_FLOAT_INT),
    PAIR("MPI_DOUBLE_INT", type_double_int_t, ONIC_MPI_B_DOUBLE_INT),
    PAIR("MPI_LONG_INT", type_long_int_t, ONIC_MPI_B_LONG_INT),
    PAIR("MPI_2INT", type_2int_t, ONIC_MPI_B_2INT),
    PAIR("MPI_SHORT_INT", type_short_int_t, ONIC_MPI_B_SHORT_INT),
    PAIR("MPI_LONG_DOUBLE_INT", type_ldouble_int_t, ONIC_MPI_B_LDOUBLE_INT),
    {"MPI_C_BOOL", sizeof(bool), sizeof(bool), ONIC_MPI_B_BOOL, 0},
    {"MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t), ONIC_MPI_B_WCHAR, 0},
    {"MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint), ONIC_MPI_B_AINT, 0},
};

onic_mpi_type_t onic_mpi_type_predef[ONIC_MPI_TYPE_NPREDEF];
static onic_mpi_block_t type_predef_blocks[ONIC_MPI_TYPE_NPREDEF][2];

int onic_mpi_type_init(void)
{
    for (int i = 0; i < ONIC_MPI_TYPE_NPREDEF; i++) {
        const type_predef_t *p = &type_predefs[i];
        onic_mpi_type_t *t = &onic_mpi_type_predef[i];

        memset(t, 0, sizeof(*t));
        t->handle = MPI_CHAR + i;
        t->name = p->name;
        t->extent = (ptrdiff_t)p->extent;
        t->blocks = type_predef_blocks[i];
        t->blocks[0] = (onic_mpi_block_t){0, p->size};
        t->nblocks = 1;
        t->size = p->size;
        if (p->int_off != 0) {
            if ((size_t)p->int_off == p->size) {
                t->blocks[0].len += sizeof(int);  /* adjacent: one block */
            } else {
                t->blocks[1] = (onic_mpi_block_t){p->int_off, sizeof(int)};
                t->nblocks = 2;
            }
            t->size = p->size + sizeof(int);
        }
        t->contig = t->nblocks == 1 && (ptrdiff_t)t->size == t->extent;
        t->committed = 1;
        t->predefined = 1;
        t->basic = p->basic;
        t->basic_size = t->size;
        t->refs = 1;
        if (onic_mpi_htab_set(&onic_mpi_g.types, i, t) != 0)
            return -1;
    }
    return 0;
}

void onic_mpi_type_fini(void)
{
    onic_mpi_htab_t *tab = &onic_mpi_g.types;

    for (int i = ONIC_MPI_TYPE_NPREDEF; i < tab->used; i++) {
        onic_mpi_type_t *t = tab->obj[i];
        if (t != NULL) {
            onic_free(t->blocks);
            onic_free(t);
        }
    }
}

onic_mpi_type_t *onic_mpi_type_get(MPI_Datatype h)
{
    return onic_mpi_htab_get(&onic_mpi_g.types, h);
}

onic_mpi_type_t *onic_mpi_type_check(MPI_Datatype h, onic_mpi_comm_t *comm, const char *call,
                                     int *rc_p)
{
    onic_mpi_type_t *t = onic_mpi_type_get(h);

    if (t == NULL) {
        *rc_p = onic_mpi_err(comm, MPI_ERR_TYPE, call, "datatype %#x is not a datatype (null, "
                             "freed or never created); use MPI_INT and friends or a committed "
                             "derived type", (unsigned)h);
        return NULL;
    }
    if (!t->committed) {
        *rc_p = onic_mpi_err(comm, MPI_ERR_TYPE, call, "datatype %#x is not committed; call "
                             "MPI_Type_commit before communicating with it", (unsigned)h);
        return NULL;
    }
    return t;
}

__attribute__((noinline)) void onic_mpi_type_pack(const onic_mpi_type_t *t, const void *buf, int count, void *out)
{
    const char *in = buf;
    char *o = out;

    if (t->size == 0 || count == 0)
        return;
    if (t->contig) {
        memcpy(o, in + t->blocks[0].off, t->size * (size_t)count);
        return;
    }
    for (int i = 0; i < count; i++, in += t->extent)
        for (size_t b = 0; b < t->nblocks; b++) {
            memcpy(o, in + t->blocks[b].off, t->blocks[b].len);
            o += t->blocks[b].len;
        }
}

__attribute__((noinline)) void onic_mpi_type_unpack(const onic_mpi_type_t *t, const void *in, size_t bytes, void *buf,
                          int count)
{
    const char *i8 = in;
    char *out = buf;

    if (t->size == 0 || count == 0)
        return;
    if (t->contig) {
        size_t n = t->size * (size_t)count;
        memcpy(out + t->blocks[0].off, i8, bytes < n ? bytes : n);
        return;
    }
    for (int i = 0; i < count && bytes > 0; i++, out += t->extent)
        for (size_t b = 0; b < t->nblocks && bytes > 0; b++) {
            size_t n = t->blocks[b].len < bytes ? t->blocks[b].len : bytes;
            memcpy(out + t->blocks[b].off, i8, n);
            i8 += n;
            bytes -= n;
        }
}

/* --- Derived types ---------------------------------------------------------------- */
static void type_add_block(onic_mpi_block_t *blocks, size_t *nb_p, ptrdiff_t off, size_t len)
{
    size_t nb = *nb_p;

    if (len == 0)
        return;
    if (nb > 0 && blocks[nb - 1].off + (ptrdiff_t)blocks[nb - 1].len == off) {
        blocks[nb - 1].len += len;
        return;
    }
    blocks[nb].off = off;
    blocks[nb].len = len;
    *nb_p = nb + 1;
}

void onic_mpi_type_ref(onic_mpi_type_t *t)
{
    if (!t->predefined)
        t->refs++;
}

__attribute__((noinline)) void onic_mpi_type_unref(onic_mpi_type_t *t)
{
    if (t->predefined || --t->refs > 0)
        return;
    onic_free(t->blocks);
    onic_free(t);
}

/* A new type of `count` blocks of `blocklen` old elements, `stride` old
 * extents apart (contiguous: stride == blocklen). */
static int type_make(const char *call, int count, int blocklen, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    onic_mpi_type_t *old, *t;
    size_t nb = 0, cap, inner;
    ptrdiff_t lo, hi, ext;

    ONIC_MPI_CHECK_INIT(call);
    if ((old = onic_mpi_type_get(oldtype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "oldtype %#x is not a datatype",
                            (unsigned)oldtype);
    if (count < 0 || blocklen < 0)
        return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "count %d / blocklength %d: neither "
                            "may be negative", count, blocklen);
    if (newtype == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "newtype is NULL; pass where to store it");
    ext = old->extent;
    if ((size_t)count * (size_t)blocklen > (size_t)1 << 40 ||
        (old->size > 0 && (size_t)count * (size_t)blocklen > ((size_t)1 << 42) / old->size))
        return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "%d blocks of %d elements of %zu bytes "
                            "is more than onic moves in one message (2^42 bytes)", count,
                            blocklen, old->size);
    t = onic_calloc(1, sizeof(*t));
    /* Blocks of one run of blocklen old elements: one if the old type has no
     * gaps, so a long contiguous type costs one block, not one per element. */
    inner = blocklen == 0 ? 0 : old->contig ? 1 : (size_t)blocklen * old->nblocks;
    cap = (size_t)count * inner;
    if (t == NULL || (cap > 0 && (t->blocks = onic_calloc(cap, sizeof(*t->blocks))) == NULL)) {
        onic_free(t);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for the new datatype");
    }
    for (int i = 0; i < count && inner > 0; i++) {
        ptrdiff_t start = (ptrdiff_t)i * stride * ext;
        if (old->contig) {
            type_add_block(t->blocks, &nb, start + old->blocks[0].off,
                           (size_t)blocklen * old->size);
            continue;
        }
        for (int j = 0; j < blocklen; j++)
            for (size_t b = 0; b < old->nblocks; b++)
                type_add_block(t->blocks, &nb, start + (ptrdiff_t)j * ext + old->blocks[b].off,
                               old->blocks[b].len);
    }
    t->nblocks = nb;
    t->size = (size_t)count * (size_t)blocklen * old->size;
    /* Bounds: the old type's [lb, lb + extent) at each element's place. */
    lo = 0;
    hi = 0;
    if (count > 0 && blocklen > 0) {
        ptrdiff_t first = old->lb, last = ((ptrdiff_t)(count - 1) * stride) * ext + old->lb;
        lo = first < last ? first : last;
        hi = (first > last ? first : last) + (ptrdiff_t)blocklen * ext;
    }
    t->lb = lo;
    t->extent = hi - lo;
    t->contig = nb == 1 && (ptrdiff_t)t->size == t->extent && t->blocks[0].off == t->lb;
    if (nb == 0)
        t->contig = 1;
    t->basic = old->basic;
    t->basic_size = old->basic_size;
    t->refs = 1;
    if (onic_mpi_htab_add(&onic_mpi_g.types, t, &t->handle) != 0) {
        onic_free(t->blocks);
        onic_free(t);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for another datatype handle");
    }
    *newtype = t->handle;
    return MPI_SUCCESS;
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return type_make("MPI_Type_contiguous", 1, count, count, oldtype, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    return type_make("MPI_Type_vector", count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Type_commit");
    if (datatype == NULL || (t = onic_mpi_type_get(*datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_commit", "%s",
                            datatype == NULL ? "datatype is NULL; pass the address of the "
                                               "handle" : "the handle names no datatype");
    t->committed = 1;
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Type_free");
    if (datatype == NULL || (t = onic_mpi_type_get(*datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_free", "%s",
                            datatype == NULL ? "datatype is NULL; pass the address of the "
                                               "handle" : "the handle names no datatype");
    if (t->predefined)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_free", "%s is predefined and cannot "
                            "be freed", t->name);
    /* Types built from it copied its blocks; operations under way hold a
     * reference and the last of them frees it. */
    onic_mpi_htab_del(&onic_mpi_g.types, t->handle);
    onic_mpi_type_unref(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Type_size");
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_size", "datatype %#x names no "
                            "datatype", (unsigned)datatype);
    if (size == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
    *size = t->size > INT32_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Type_get_extent");
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_extent", "datatype %#x names no "
                            "datatype", (unsigned)datatype);
    if (lb == NULL || extent == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Type_get_extent", "%s is NULL",
                            lb == NULL ? "lb" : "extent");
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}
