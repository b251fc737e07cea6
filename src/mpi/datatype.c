/* Datatypes: the predefined C types, the derived types of MPI 3.1 chapter 4
 * (contiguous, vector, hvector, indexed, hindexed, indexed and hindexed
 * block, struct, subarray, resized, dup) built from any type, and
 * pack/unpack through each type's list of blocks (one element's data in
 * type-map order, adjacent pieces merged, so a type without gaps is one
 * block and moves with one memcpy, and a type of equal small blocks moves
 * without a call per block). */
#include "mpi/mpi_impl.h"
#include "base/copy.h"
#include "base/mem.h"

#include <stdbool.h>
#include <stdio.h>
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
    size_t           align;    /* where it is not the size (complex types); else 0 */
} type_predef_t;

#define PAIR(_n, _t, _b) {_n, sizeof(((_t *)0)->v), sizeof(_t), _b, offsetof(_t, i), 0}
static const type_predef_t type_predefs[ONIC_MPI_TYPE_NPREDEF] = {
    {"MPI_CHAR", 1, 1, ONIC_MPI_B_CHAR, 0, 0},
    {"MPI_SIGNED_CHAR", 1, 1, ONIC_MPI_B_SCHAR, 0, 0},
    {"MPI_UNSIGNED_CHAR", 1, 1, ONIC_MPI_B_UCHAR, 0, 0},
    {"MPI_BYTE", 1, 1, ONIC_MPI_B_BYTE, 0, 0},
    {"MPI_SHORT", sizeof(short), sizeof(short), ONIC_MPI_B_SHORT, 0, 0},
    {"MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short), ONIC_MPI_B_USHORT, 0, 0},
    {"MPI_INT", sizeof(int), sizeof(int), ONIC_MPI_B_INT, 0, 0},
    {"MPI_UNSIGNED", sizeof(int), sizeof(int), ONIC_MPI_B_UINT, 0, 0},
    {"MPI_LONG", sizeof(long), sizeof(long), ONIC_MPI_B_LONG, 0, 0},
    {"MPI_UNSIGNED_LONG", sizeof(long), sizeof(long), ONIC_MPI_B_ULONG, 0, 0},
    /* MPI_LONG_LONG is its synonym (MPI 3.1, 3.2.2): one type, this name. */
    {"MPI_LONG_LONG_INT", sizeof(long long), sizeof(long long), ONIC_MPI_B_LLONG, 0, 0},
    {"MPI_UNSIGNED_LONG_LONG", sizeof(long long), sizeof(long long), ONIC_MPI_B_ULLONG, 0, 0},
    {"MPI_FLOAT", sizeof(float), sizeof(float), ONIC_MPI_B_FLOAT, 0, 0},
    {"MPI_DOUBLE", sizeof(double), sizeof(double), ONIC_MPI_B_DOUBLE, 0, 0},
    {"MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), ONIC_MPI_B_LDOUBLE, 0, 0},
    {"MPI_INT8_T", 1, 1, ONIC_MPI_B_INT8, 0, 0},
    {"MPI_INT16_T", 2, 2, ONIC_MPI_B_INT16, 0, 0},
    {"MPI_INT32_T", 4, 4, ONIC_MPI_B_INT32, 0, 0},
    {"MPI_INT64_T", 8, 8, ONIC_MPI_B_INT64, 0, 0},
    {"MPI_UINT8_T", 1, 1, ONIC_MPI_B_UINT8, 0, 0},
    {"MPI_UINT16_T", 2, 2, ONIC_MPI_B_UINT16, 0, 0},
    {"MPI_UINT32_T", 4, 4, ONIC_MPI_B_UINT32, 0, 0},
    {"MPI_UINT64_T", 8, 8, ONIC_MPI_B_UINT64, 0, 0},
    PAIR("MPI_FLOAT_INT", type_float_int_t, ONIC_MPI_B_FLOAT_INT),
    PAIR("MPI_DOUBLE_INT", type_double_int_t, ONIC_MPI_B_DOUBLE_INT),
    PAIR("MPI_LONG_INT", type_long_int_t, ONIC_MPI_B_LONG_INT),
    PAIR("MPI_2INT", type_2int_t, ONIC_MPI_B_2INT),
    PAIR("MPI_SHORT_INT", type_short_int_t, ONIC_MPI_B_SHORT_INT),
    PAIR("MPI_LONG_DOUBLE_INT", type_ldouble_int_t, ONIC_MPI_B_LDOUBLE_INT),
    {"MPI_C_BOOL", sizeof(bool), sizeof(bool), ONIC_MPI_B_BOOL, 0, 0},
    {"MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t), ONIC_MPI_B_WCHAR, 0, 0},
    {"MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint), ONIC_MPI_B_AINT, 0, 0},
    {"MPI_PACKED", 1, 1, ONIC_MPI_B_NONE, 0, 0},
    {"MPI_C_FLOAT_COMPLEX", sizeof(float _Complex), sizeof(float _Complex), ONIC_MPI_B_CFLOAT,
     0, _Alignof(float _Complex)},
    {"MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex), sizeof(double _Complex),
     ONIC_MPI_B_CDOUBLE, 0, _Alignof(double _Complex)},
    {"MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex), sizeof(long double _Complex),
     ONIC_MPI_B_CLDOUBLE, 0, _Alignof(long double _Complex)},
    /* MPI_Offset and MPI_Count are long long here: the same arithmetic. */
    {"MPI_OFFSET", sizeof(MPI_Offset), sizeof(MPI_Offset), ONIC_MPI_B_LLONG, 0, 0},
    {"MPI_COUNT", sizeof(MPI_Count), sizeof(MPI_Count), ONIC_MPI_B_LLONG, 0, 0},
    /* C++'s bool and std::complex are laid out as C's bool and _Complex. */
    {"MPI_CXX_BOOL", sizeof(bool), sizeof(bool), ONIC_MPI_B_BOOL, 0, 0},
    {"MPI_CXX_FLOAT_COMPLEX", sizeof(float _Complex), sizeof(float _Complex),
     ONIC_MPI_B_CFLOAT, 0, _Alignof(float _Complex)},
    {"MPI_CXX_DOUBLE_COMPLEX", sizeof(double _Complex), sizeof(double _Complex),
     ONIC_MPI_B_CDOUBLE, 0, _Alignof(double _Complex)},
    {"MPI_CXX_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex), sizeof(long double _Complex),
     ONIC_MPI_B_CLDOUBLE, 0, _Alignof(long double _Complex)},
    /* Fortran's named types, for Fortran data handled from C: INTEGER,
     * REAL, DOUBLE PRECISION and LOGICAL as gfortran lays them out (int,
     * float, double, int); CHARACTER, the 16-byte REAL16 (a quad, not
     * C's long double), COMPLEX32 and INTEGER16 move but do not reduce. */
    {"MPI_INTEGER", sizeof(int), sizeof(int), ONIC_MPI_B_INT, 0, 0},
    {"MPI_REAL", sizeof(float), sizeof(float), ONIC_MPI_B_FLOAT, 0, 0},
    {"MPI_DOUBLE_PRECISION", sizeof(double), sizeof(double), ONIC_MPI_B_DOUBLE, 0, 0},
    {"MPI_COMPLEX", sizeof(float _Complex), sizeof(float _Complex), ONIC_MPI_B_CFLOAT, 0,
     _Alignof(float _Complex)},
    {"MPI_DOUBLE_COMPLEX", sizeof(double _Complex), sizeof(double _Complex), ONIC_MPI_B_CDOUBLE,
     0, _Alignof(double _Complex)},
    {"MPI_LOGICAL", sizeof(int), sizeof(int), ONIC_MPI_B_INT, 0, 0},
    {"MPI_CHARACTER", 1, 1, ONIC_MPI_B_NONE, 0, 0},
    {"MPI_REAL4", 4, 4, ONIC_MPI_B_FLOAT, 0, 0},
    {"MPI_REAL8", 8, 8, ONIC_MPI_B_DOUBLE, 0, 0},
    {"MPI_REAL16", 16, 16, ONIC_MPI_B_NONE, 0, 16},
    {"MPI_COMPLEX8", sizeof(float _Complex), sizeof(float _Complex), ONIC_MPI_B_CFLOAT, 0,
     _Alignof(float _Complex)},
    {"MPI_COMPLEX16", sizeof(double _Complex), sizeof(double _Complex), ONIC_MPI_B_CDOUBLE, 0,
     _Alignof(double _Complex)},
    {"MPI_COMPLEX32", 32, 32, ONIC_MPI_B_NONE, 0, 16},
    {"MPI_INTEGER1", 1, 1, ONIC_MPI_B_INT8, 0, 0},
    {"MPI_INTEGER2", 2, 2, ONIC_MPI_B_INT16, 0, 0},
    {"MPI_INTEGER4", 4, 4, ONIC_MPI_B_INT32, 0, 0},
    {"MPI_INTEGER8", 8, 8, ONIC_MPI_B_INT64, 0, 0},
    {"MPI_INTEGER16", 16, 16, ONIC_MPI_B_NONE, 0, 16},
    /* A type of its own, as the standard names it, laid out as
     * MPI_C_FLOAT_COMPLEX. */
    {"MPI_C_COMPLEX", sizeof(float _Complex), sizeof(float _Complex), ONIC_MPI_B_CFLOAT, 0,
     _Alignof(float _Complex)},
};

onic_mpi_type_t onic_mpi_type_predef[ONIC_MPI_TYPE_NPREDEF];
static onic_mpi_block_t type_predef_blocks[ONIC_MPI_TYPE_NPREDEF][2];
static onic_mpi_sigrun_t type_predef_sig[ONIC_MPI_TYPE_NPREDEF][2];
static char type_predef_names[ONIC_MPI_TYPE_NPREDEF][MPI_MAX_OBJECT_NAME];

static void type_env_free(struct onic_mpi_envelope *e);

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
        t->true_lb = 0;
        t->true_extent = t->extent;
        /* A pair is aligned as its value or its int, whichever is larger. */
        t->align = p->align != 0 ? p->align
                   : p->int_off != 0 && p->size < sizeof(int) ? sizeof(int) : p->size;
        if (t->align > 16)
            t->align = 16;
        t->blen = t->nblocks == 1 ? t->blocks[0].len : 0;
        /* Elements: a pair is two (the value and the int). */
        t->sig = type_predef_sig[i];
        t->sig[0] = (onic_mpi_sigrun_t){p->size, 1};
        t->nsig = 1;
        if (p->int_off != 0) {
            t->sig[1] = (onic_mpi_sigrun_t){sizeof(int), 1};
            t->nsig = 2;
        }
        t->nelems = t->nsig;
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

    /* First what each type was made of (a freed type a live one was made
     * from goes with it), then every type still behind a handle. */
    for (int i = ONIC_MPI_TYPE_NPREDEF; i < tab->used; i++) {
        onic_mpi_type_t *t = tab->obj[i];
        if (t != NULL && t->env != NULL) {
            type_env_free(t->env);
            t->env = NULL;
        }
    }
    for (int i = ONIC_MPI_TYPE_NPREDEF; i < tab->used; i++) {
        onic_mpi_type_t *t = tab->obj[i];
        if (t != NULL) {
            t->refs = 1;
            onic_mpi_type_unref(t);
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

/* Copy one element's blocks: a type whose blocks are all 4, 8 or 16 bytes
 * long (a column of doubles, an array of ints with gaps) copies each with
 * a few moves, no call; the rest with memcpy per block. */
#define TYPE_PACK_LOOP(_len) \
    do { \
        for (int i = 0; i < count; i++, base += t->extent) \
            for (size_t b = 0; b < nb; b++, flat += (_len)) \
                memcpy(flat, base + blocks[b].off, (_len)); \
    } while (0)
#define TYPE_UNPACK_LOOP(_len) \
    do { \
        for (int i = 0; i < count; i++, base += t->extent) \
            for (size_t b = 0; b < nb; b++, flat += (_len)) \
                memcpy(base + blocks[b].off, flat, (_len)); \
    } while (0)

__attribute__((noinline)) void onic_mpi_type_pack(const onic_mpi_type_t *t, const void *buf, int count, void *out)
{
    const onic_mpi_block_t *blocks = t->blocks;
    const size_t nb = t->nblocks;
    const char *base = buf;
    char *flat = out;

    if (t->size == 0 || count == 0)
        return;
    if (t->contig) {
        onic_copy(flat, base + blocks[0].off, t->size * (size_t)count);
        return;
    }
    switch (t->blen) {
    case 4: TYPE_PACK_LOOP(4); return;
    case 8: TYPE_PACK_LOOP(8); return;
    case 16: TYPE_PACK_LOOP(16); return;
    default: break;
    }
    for (int i = 0; i < count; i++, base += t->extent)
        for (size_t b = 0; b < nb; b++) {
            onic_copy(flat, base + blocks[b].off, blocks[b].len);
            flat += blocks[b].len;
        }
}

__attribute__((noinline)) void onic_mpi_type_unpack(const onic_mpi_type_t *t, const void *in, size_t bytes, void *buf,
                          int count)
{
    const onic_mpi_block_t *blocks = t->blocks;
    size_t nb = t->nblocks;
    const char *flat = in;
    char *base = buf;

    if (t->size == 0 || count == 0)
        return;
    if (t->contig) {
        size_t n = t->size * (size_t)count;
        onic_copy(base + blocks[0].off, flat, bytes < n ? bytes : n);
        return;
    }
    /* Whole elements on the fast paths, then the cut-short rest. */
    if (t->blen == 4 || t->blen == 8 || t->blen == 16) {
        int whole = (int)(bytes / t->size < (size_t)count ? bytes / t->size : (size_t)count);
        int n = count;
        count = whole;
        switch (t->blen) {
        case 4: TYPE_UNPACK_LOOP(4); break;
        case 8: TYPE_UNPACK_LOOP(8); break;
        default: TYPE_UNPACK_LOOP(16); break;
        }
        bytes -= (size_t)whole * t->size;
        count = n - whole;
    }
    for (int i = 0; i < count && bytes > 0; i++, base += t->extent)
        for (size_t b = 0; b < nb && bytes > 0; b++) {
            size_t n = blocks[b].len < bytes ? blocks[b].len : bytes;
            onic_copy(base + blocks[b].off, flat, n);
            flat += n;
            bytes -= n;
        }
}

/* --- Derived types -----------------------------------------------------------------
 * Every constructor comes down to one builder: a list of parts, each
 * `count` copies of an old type laid one old extent apart from a byte
 * displacement. The builder flattens them into the new type's blocks (in
 * type-map order, adjacent pieces merged), its signature runs, its bounds
 * and its data's true bounds; pack and unpack then walk the blocks only. */
typedef struct type_part {
    ptrdiff_t        disp;  /* bytes */
    size_t           count;
    onic_mpi_type_t *old;
} type_part_t;

/* How a type was made, for MPI_Type_get_envelope and get_contents; it
 * holds a reference to each type it names. */
struct onic_mpi_envelope {
    int              combiner;
    int              ni, na, nt;
    int             *ints;
    MPI_Aint        *aints;
    onic_mpi_type_t **types;
};

#define TYPE_SIG_MAX 4096 /* runs kept for MPI_Get_elements */

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

/* Append n copies of runs to t's signature (NULL: given up). */
static void type_add_sig(onic_mpi_type_t *t, const onic_mpi_sigrun_t *runs, size_t nruns,
                         size_t n)
{
    if (t->sig == NULL || runs == NULL)
        goto give_up;
    for (size_t k = 0; k < n; k++) {
        for (size_t r = 0; r < nruns; r++) {
            onic_mpi_sigrun_t *last = t->nsig > 0 ? &t->sig[t->nsig - 1] : NULL;
            if (last != NULL && last->esize == runs[r].esize) {
                /* A single run repeated: all n copies at once. */
                if (nruns == 1) {
                    last->n += runs[r].n * (n - k);
                    return;
                }
                last->n += runs[r].n;
                continue;
            }
            if (t->nsig == TYPE_SIG_MAX)
                goto give_up;
            t->sig[t->nsig++] = runs[r];
        }
    }
    return;

give_up:
    onic_free(t->sig);
    t->sig = NULL;
    t->nsig = 0;
}

void onic_mpi_type_ref(onic_mpi_type_t *t)
{
    if (!t->predefined)
        t->refs++;
}

static void type_env_free(struct onic_mpi_envelope *e)
{
    if (e == NULL)
        return;
    for (int i = 0; i < e->nt; i++)
        if (e->types[i] != NULL)
            onic_mpi_type_unref(e->types[i]);
    onic_free(e);
}

__attribute__((noinline)) void onic_mpi_type_unref(onic_mpi_type_t *t)
{
    if (t->predefined || --t->refs > 0)
        return;
    type_env_free(t->env);
    onic_free((char *)(uintptr_t)t->name); /* a derived type's name is its own copy */
    onic_free(t->sig);
    onic_free(t->blocks);
    onic_free(t);
}

static onic_mpi_type_t *type_alive(MPI_Datatype h)
{
    return onic_mpi_type_get(h);
}

/* The new type of the parts, published in *newtype; MPI_SUCCESS or the
 * error reported. The envelope (taken over) is freed on failure. */
static int type_build(const char *call, const type_part_t *parts, size_t nparts,
                      struct onic_mpi_envelope *env, MPI_Datatype *newtype)
{
    onic_mpi_type_t *t;
    size_t nb = 0, cap = 0, size = 0, nelems = 0, copies = 0;
    ptrdiff_t lo = 0, hi = 0, tlo = 0, thi = 0;
    int any = 0, tany = 0, bounded = 0, basic_set = 0;

    for (size_t p = 0; p < nparts; p++) {
        const onic_mpi_type_t *o = parts[p].old;
        if (parts[p].count == 0)
            continue;
        if (o->size > 0 && parts[p].count > ((size_t)1 << 42) / o->size) {
            type_env_free(env);
            return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "%zu elements of %zu bytes is more "
                                "than onic moves in one message (2^42 bytes)", parts[p].count,
                                o->size);
        }
        cap += o->contig ? 1 : parts[p].count * o->nblocks;
        size += parts[p].count * o->size;
        copies += parts[p].count;
        if (copies > (size_t)1 << 40) {
            type_env_free(env);
            return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "more than 2^40 elements of the old "
                                "types in one element of the new one");
        }
        if (size > (size_t)1 << 42 || cap > (size_t)1 << 32) {
            type_env_free(env);
            return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "the new type holds %zu bytes in "
                                "%zu pieces, more than onic keeps in one type", size, cap);
        }
    }
    t = onic_calloc(1, sizeof(*t));
    if (t == NULL || (cap > 0 && (t->blocks = onic_calloc(cap, sizeof(*t->blocks))) == NULL) ||
        (t->sig = onic_calloc(TYPE_SIG_MAX, sizeof(*t->sig))) == NULL) {
        if (t != NULL) {
            onic_free(t->blocks);
            onic_free(t);
        }
        type_env_free(env);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for the new datatype");
    }
    t->align = 1;
    for (size_t p = 0; p < nparts; p++) {
        const onic_mpi_type_t *o = parts[p].old;
        size_t n = parts[p].count;
        ptrdiff_t d = parts[p].disp, ext = o->extent, a, b;
        if (n == 0)
            continue;
        /* Blocks: one run of n elements if the old type has no gaps. */
        if (o->contig) {
            if (o->size > 0)
                type_add_block(t->blocks, &nb, d + o->blocks[0].off, n * o->size);
        } else {
            for (size_t j = 0; j < n; j++)
                for (size_t k = 0; k < o->nblocks; k++)
                    type_add_block(t->blocks, &nb, d + (ptrdiff_t)j * ext + o->blocks[k].off,
                                   o->blocks[k].len);
        }
        type_add_sig(t, o->sig, o->nsig, n);
        nelems += n * o->nelems;
        /* Bounds: the old type's [lb, lb + extent) at each copy. */
        a = d + o->lb + (ext < 0 ? (ptrdiff_t)(n - 1) * ext : 0);
        b = d + o->lb + ext + (ext > 0 ? (ptrdiff_t)(n - 1) * ext : 0);
        lo = any && lo < a ? lo : a;
        hi = any && hi > b ? hi : b;
        any = 1;
        if (o->size > 0) {
            a = d + o->true_lb + (ext < 0 ? (ptrdiff_t)(n - 1) * ext : 0);
            b = d + o->true_lb + o->true_extent + (ext > 0 ? (ptrdiff_t)(n - 1) * ext : 0);
            tlo = tany && tlo < a ? tlo : a;
            thi = tany && thi > b ? thi : b;
            tany = 1;
        }
        bounded |= o->bounded;
        if (o->align > t->align)
            t->align = o->align;
        /* One basic kind throughout, or none (reductions refuse a mix). */
        if (!basic_set) {
            t->basic = o->basic;
            t->basic_size = o->basic_size;
            basic_set = 1;
        } else if (t->basic != o->basic) {
            t->basic = ONIC_MPI_B_NONE;
            t->basic_size = 0;
        }
    }
    t->nblocks = nb;
    t->size = size;
    t->nelems = nelems;
    t->lb = lo;
    t->extent = hi - lo;
    t->true_lb = tany ? tlo : lo;
    t->true_extent = tany ? thi - tlo : 0;
    t->bounded = bounded;
    t->env = env;
    t->refs = 1;
    if (nb == 0)
        t->contig = 1;
    else
        t->contig = nb == 1 && (ptrdiff_t)t->size == t->extent && t->blocks[0].off == t->lb;
    t->blen = nb > 0 ? t->blocks[0].len : 0;
    for (size_t k = 1; k < nb && t->blen != 0; k++)
        if (t->blocks[k].len != t->blen)
            t->blen = 0;
    if (onic_mpi_htab_add(&onic_mpi_g.types, t, &t->handle) != 0) {
        t->env = NULL;
        onic_mpi_type_unref(t);
        type_env_free(env);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for another datatype handle");
    }
    /* What it was made of stays alive as long as it does. */
    if (env != NULL)
        for (int i = 0; i < env->nt; i++)
            onic_mpi_type_ref(env->types[i]);
    *newtype = t->handle;
    return MPI_SUCCESS;
}

/* An envelope with room for ni ints, na addresses and nt types, or NULL. */
static struct onic_mpi_envelope *type_env_new(int combiner, int ni, int na, int nt)
{
    struct onic_mpi_envelope *e;
    size_t bytes = sizeof(*e) + (size_t)na * sizeof(MPI_Aint) +
                   (size_t)nt * sizeof(onic_mpi_type_t *) + (size_t)ni * sizeof(int);

    if ((e = onic_calloc(1, bytes)) == NULL)
        return NULL;
    e->combiner = combiner;
    e->ni = ni;
    e->na = na;
    e->nt = nt;
    e->aints = (MPI_Aint *)(e + 1);
    e->types = (onic_mpi_type_t **)(e->aints + na);
    e->ints = (int *)(e->types + nt);
    return e;
}

/* A copy of e, with a reference to each type it names; NULL for no memory. */
static struct onic_mpi_envelope *type_env_copy(const struct onic_mpi_envelope *e)
{
    struct onic_mpi_envelope *c = type_env_new(e->combiner, e->ni, e->na, e->nt);

    if (c == NULL)
        return NULL;
    memcpy(c->ints, e->ints, (size_t)e->ni * sizeof(int));
    memcpy(c->aints, e->aints, (size_t)e->na * sizeof(MPI_Aint));
    for (int i = 0; i < e->nt; i++) {
        c->types[i] = e->types[i];
        onic_mpi_type_ref(c->types[i]);
    }
    return c;
}

/* The checks every constructor makes: initialized, newtype given, count
 * not negative. */
#define TYPE_CHECK_ARGS(_call, _count, _newtype) \
    do { \
        ONIC_MPI_CHECK_INIT(_call); \
        if ((_newtype) == NULL) \
            return onic_mpi_err(NULL, MPI_ERR_ARG, _call, "newtype is NULL; pass where to " \
                                "store the new type"); \
        if ((_count) < 0) \
            return onic_mpi_err(NULL, MPI_ERR_COUNT, _call, "count %d is negative", (_count)); \
    } while (0)

static int type_old(const char *call, MPI_Datatype h, onic_mpi_type_t **t_p)
{
    if ((*t_p = type_alive(h)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "oldtype %#x is not a datatype (null, "
                            "freed or never made)", (unsigned)h);
    return MPI_SUCCESS;
}

/* The shared body of the vector and indexed families: count blocks of
 * bl[i] (or blocklen for all) old elements at disp[i] (in old extents or,
 * bytes, in bytes). */
static int type_blocks(const char *call, int combiner, int count, const int *bls, int blocklen,
                       const int *idisp, const MPI_Aint *adisp, ptrdiff_t stride, int bytes,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    onic_mpi_type_t *old;
    type_part_t *parts;
    struct onic_mpi_envelope *env;
    int rc, ni, na;

    TYPE_CHECK_ARGS(call, count, newtype);
    if ((rc = type_old(call, oldtype, &old)) != MPI_SUCCESS)
        return rc;
    if (count > 0 && bls == NULL && blocklen < 0)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "blocklength %d is negative", blocklen);
    if (count > 0 && ((combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED) &&
                      bls == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_blocklengths is NULL");
    if (count > 0 && (combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_INDEXED_BLOCK
                          ? idisp == NULL
                          : (combiner == MPI_COMBINER_HINDEXED ||
                             combiner == MPI_COMBINER_HINDEXED_BLOCK) && adisp == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_displacements is NULL");
    for (int i = 0; bls != NULL && i < count; i++)
        if (bls[i] < 0)
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_blocklengths[%d] = %d is "
                                "negative", i, bls[i]);
    /* The envelope, as MPI 3.1, 4.1.13 lists each combiner's arguments. */
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS: ni = 1; na = 0; break;
    case MPI_COMBINER_VECTOR: ni = 3; na = 0; break;
    case MPI_COMBINER_HVECTOR: ni = 2; na = 1; break;
    case MPI_COMBINER_INDEXED: ni = 2 * count + 1; na = 0; break;
    case MPI_COMBINER_HINDEXED: ni = count + 1; na = count; break;
    case MPI_COMBINER_INDEXED_BLOCK: ni = count + 2; na = 0; break;
    default: /* HINDEXED_BLOCK */ ni = 2; na = count; break;
    }
    /* Contiguous is one part, however long. */
    parts = onic_calloc(combiner == MPI_COMBINER_CONTIGUOUS ? 1 : (size_t)count + 1,
                        sizeof(*parts));
    env = type_env_new(combiner, ni, na, 1);
    if (parts == NULL || env == NULL) {
        onic_free(parts);
        onic_free(env);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %d blocks", count);
    }
    env->types[0] = old;
    env->ints[0] = count;
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS: break;
    case MPI_COMBINER_VECTOR: env->ints[1] = blocklen; env->ints[2] = (int)stride; break;
    case MPI_COMBINER_HVECTOR: env->ints[1] = blocklen; env->aints[0] = stride; break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < count; i++) {
            env->ints[1 + i] = bls[i];
            env->ints[1 + count + i] = idisp[i];
        }
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < count; i++) {
            env->ints[1 + i] = bls[i];
            env->aints[i] = adisp[i];
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        env->ints[1] = blocklen;
        for (int i = 0; i < count; i++)
            env->ints[2 + i] = idisp[i];
        break;
    default:
        env->ints[1] = blocklen;
        for (int i = 0; i < count; i++)
            env->aints[i] = adisp[i];
        break;
    }
    if (combiner == MPI_COMBINER_CONTIGUOUS) {
        /* One part: count elements back to back. */
        parts[0] = (type_part_t){0, (size_t)count, old};
        count = count > 0 ? 1 : 0;
    } else {
        for (int i = 0; i < count; i++) {
            ptrdiff_t d = idisp != NULL ? idisp[i] : adisp != NULL ? adisp[i]
                                                                  : (ptrdiff_t)i * stride;
            parts[i].disp = bytes ? d : d * old->extent;
            parts[i].count = (size_t)(bls != NULL ? bls[i] : blocklen);
            parts[i].old = old;
        }
    }
    rc = type_build(call, parts, (size_t)count, env, newtype);
    onic_free(parts);
    return rc;
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, count, NULL, 1, NULL, NULL,
                       1, 0, oldtype, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_vector", MPI_COMBINER_VECTOR, count, NULL, blocklength, NULL,
                       NULL, stride, 0, oldtype, newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count, NULL, blocklength,
                       NULL, NULL, stride, 1, oldtype, newtype);
}

/* MPI-1's names, removed in MPI 3.0 and still called by older programs
 * (MPICH's test harness among them): the same as the create_ forms. */
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_hvector", MPI_COMBINER_HVECTOR, count, NULL, blocklength,
                       NULL, NULL, stride, 1, oldtype, newtype);
}

int MPI_Type_hindexed(int count, const int array_of_blocklengths[],
                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                       0, NULL, array_of_displacements, 0, 1, oldtype, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                       array_of_displacements, NULL, 0, 0, oldtype, newtype);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                       array_of_blocklengths, 0, NULL, array_of_displacements, 0, 1, oldtype,
                       newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength,
                                  const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                       blocklength, array_of_displacements, NULL, 0, 0, oldtype, newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    return type_blocks("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                       NULL, blocklength, NULL, array_of_displacements, 0, 1, oldtype, newtype);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_create_struct";
    type_part_t *parts;
    struct onic_mpi_envelope *env;
    MPI_Datatype h;
    onic_mpi_type_t *t;
    int rc;

    TYPE_CHECK_ARGS(call, count, newtype);
    if (count > 0 && (array_of_blocklengths == NULL || array_of_displacements == NULL ||
                      array_of_types == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL with count %d",
                            array_of_blocklengths == NULL ? "array_of_blocklengths"
                            : array_of_displacements == NULL ? "array_of_displacements"
                                                             : "array_of_types", count);
    for (int i = 0; i < count; i++) {
        if (array_of_blocklengths[i] < 0)
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_blocklengths[%d] = %d is "
                                "negative", i, array_of_blocklengths[i]);
        if (type_alive(array_of_types[i]) == NULL)
            return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "array_of_types[%d] = %#x is not a "
                                "datatype", i, (unsigned)array_of_types[i]);
    }
    parts = onic_calloc((size_t)count + 1, sizeof(*parts));
    env = type_env_new(MPI_COMBINER_STRUCT, count + 1, count, count);
    if (parts == NULL || env == NULL) {
        onic_free(parts);
        onic_free(env);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %d blocks", count);
    }
    env->ints[0] = count;
    for (int i = 0; i < count; i++) {
        parts[i] = (type_part_t){array_of_displacements[i], (size_t)array_of_blocklengths[i],
                                 type_alive(array_of_types[i])};
        env->ints[1 + i] = array_of_blocklengths[i];
        env->aints[i] = array_of_displacements[i];
        env->types[i] = parts[i].old;
    }
    rc = type_build(call, parts, (size_t)count, env, &h);
    onic_free(parts);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The extent is padded to the alignment of the largest basic type in
     * it, as a C struct is, unless a member has bounds set on purpose. */
    t = type_alive(h);
    if (!t->bounded && t->align > 1 && t->extent % (ptrdiff_t)t->align != 0) {
        t->extent += (ptrdiff_t)t->align - t->extent % (ptrdiff_t)t->align;
        t->contig = t->nblocks == 0 ||
                    (t->nblocks == 1 && (ptrdiff_t)t->size == t->extent &&
                     t->blocks[0].off == t->lb);
    }
    *newtype = h;
    return MPI_SUCCESS;
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_create_resized";
    onic_mpi_type_t *old, *t;
    struct onic_mpi_envelope *env;
    type_part_t part;
    MPI_Datatype h;
    int rc;

    TYPE_CHECK_ARGS(call, 0, newtype);
    if ((rc = type_old(call, oldtype, &old)) != MPI_SUCCESS)
        return rc;
    if ((env = type_env_new(MPI_COMBINER_RESIZED, 0, 2, 1)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for the new datatype");
    env->aints[0] = lb;
    env->aints[1] = extent;
    env->types[0] = old;
    part = (type_part_t){0, 1, old};
    if ((rc = type_build(call, &part, 1, env, &h)) != MPI_SUCCESS)
        return rc;
    t = type_alive(h);
    t->lb = lb;
    t->extent = extent;
    t->bounded = 1;
    t->contig = t->nblocks == 0 ||
                (t->nblocks == 1 && (ptrdiff_t)t->size == t->extent && t->blocks[0].off == t->lb);
    *newtype = h;
    return MPI_SUCCESS;
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_dup";
    onic_mpi_type_t *old, *t;
    struct onic_mpi_envelope *env;
    type_part_t part;
    MPI_Datatype h;
    int rc;

    TYPE_CHECK_ARGS(call, 0, newtype);
    if ((rc = type_old(call, oldtype, &old)) != MPI_SUCCESS)
        return rc;
    if ((env = type_env_new(MPI_COMBINER_DUP, 0, 0, 1)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for the new datatype");
    env->types[0] = old;
    part = (type_part_t){0, 1, old};
    if ((rc = type_build(call, &part, 1, env, &h)) != MPI_SUCCESS)
        return rc;
    /* The same type: bounds and committed state too. */
    t = type_alive(h);
    t->lb = old->lb;
    t->extent = old->extent;
    t->bounded = old->bounded;
    t->contig = old->contig;
    t->committed = old->committed;
    t->basic = old->basic;
    t->basic_size = old->basic_size;
    *newtype = h;
    return MPI_SUCCESS;
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                             const int array_of_subsizes[], const int array_of_starts[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_create_subarray";
    onic_mpi_type_t *old, *t;
    struct onic_mpi_envelope *env;
    type_part_t *parts;
    size_t rows = 1, whole = 1;
    int rc, *idx, fast;
    MPI_Datatype h;

    TYPE_CHECK_ARGS(call, 0, newtype);
    if ((rc = type_old(call, oldtype, &old)) != MPI_SUCCESS)
        return rc;
    if (ndims <= 0)
        return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "ndims %d; a subarray has 1 or more "
                            "dimensions", ndims);
    if (array_of_sizes == NULL || array_of_subsizes == NULL || array_of_starts == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_%s is NULL",
                            array_of_sizes == NULL ? "sizes"
                            : array_of_subsizes == NULL ? "subsizes" : "starts");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "order %d; use MPI_ORDER_C or "
                            "MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        if (array_of_sizes[i] <= 0 || array_of_subsizes[i] <= 0 ||
            array_of_subsizes[i] > array_of_sizes[i] || array_of_starts[i] < 0 ||
            array_of_starts[i] > array_of_sizes[i] - array_of_subsizes[i])
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dimension %d: size %d, subsize %d, "
                                "start %d; need 1 <= subsize <= size and 0 <= start <= size - "
                                "subsize", i, array_of_sizes[i], array_of_subsizes[i],
                                array_of_starts[i]);
        whole *= (size_t)array_of_sizes[i];
        if (whole > ((size_t)1 << 42))
            return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "the array has more than 2^42 "
                                "elements");
    }
    /* The dimension that varies fastest in memory, and the rows along it. */
    fast = order == MPI_ORDER_C ? ndims - 1 : 0;
    for (int i = 0; i < ndims; i++)
        if (i != fast)
            rows *= (size_t)array_of_subsizes[i];
    parts = onic_calloc(rows, sizeof(*parts));
    idx = onic_calloc((size_t)ndims, sizeof(int));
    env = type_env_new(MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1);
    if (parts == NULL || idx == NULL || env == NULL) {
        onic_free(parts);
        onic_free(idx);
        onic_free(env);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %zu rows", rows);
    }
    env->ints[0] = ndims;
    for (int i = 0; i < ndims; i++) {
        env->ints[1 + i] = array_of_sizes[i];
        env->ints[1 + ndims + i] = array_of_subsizes[i];
        env->ints[1 + 2 * ndims + i] = array_of_starts[i];
    }
    env->ints[1 + 3 * ndims] = order;
    env->types[0] = old;
    /* Each row: subsizes[fast] elements, at the element offset of its
     * index (idx counts through the other dimensions, the fast one 0). */
    for (size_t r = 0; r < rows; r++) {
        ptrdiff_t off = 0, mul = 1;
        for (int k = 0; k < ndims; k++) {
            int i = order == MPI_ORDER_C ? ndims - 1 - k : k; /* fastest first */
            off += (ptrdiff_t)(array_of_starts[i] + (i == fast ? 0 : idx[i])) * mul;
            mul *= array_of_sizes[i];
        }
        parts[r] = (type_part_t){off * old->extent, (size_t)array_of_subsizes[fast], old};
        /* Next index: the slowest dimension last. */
        for (int k = 0; k < ndims; k++) {
            int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
            if (i == fast)
                continue;
            if (++idx[i] < array_of_subsizes[i])
                break;
            idx[i] = 0;
        }
    }
    onic_free(idx);
    rc = type_build(call, parts, rows, env, &h);
    onic_free(parts);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Bounds: the whole array (MPI 3.1, 4.1.3). */
    t = type_alive(h);
    t->lb = old->lb;
    t->extent = (ptrdiff_t)whole * old->extent;
    t->bounded = 1;
    t->contig = t->nblocks == 0 ||
                (t->nblocks == 1 && (ptrdiff_t)t->size == t->extent && t->blocks[0].off == t->lb);
    *newtype = h;
    return MPI_SUCCESS;
}

/* One dimension of a distributed array: the runs [from, from + len) of
 * the indices that coordinate c of p owns (MPI 4.0, 5.1.4); their count. */
static int darray_runs(int g, int distrib, int darg, int p, int c, int *from, int *len)
{
    int n = 0, k;

    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        from[0] = 0;
        len[0] = g;
        return 1;
    case MPI_DISTRIBUTE_BLOCK:
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        if ((long long)c * k >= g)
            return 0;
        from[0] = c * k;
        len[0] = g - from[0] < k ? g - from[0] : k;
        return 1;
    default: /* MPI_DISTRIBUTE_CYCLIC */
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (long long j = (long long)c * k; j < g; j += (long long)p * k) {
            from[n] = (int)j;
            len[n++] = g - (int)j < k ? g - (int)j : k;
        }
        return n;
    }
}

/* The part of a global array (gsizes, in order) that process rank of a
 * grid of psizes (row-major, as a Cartesian topology's) owns, each
 * dimension distributed by block, cyclically in blocks of darg, or not at
 * all; its bounds are the whole array's, as a subarray's. */
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_create_darray";
    const int *gs = array_of_gsizes, *ds = array_of_distribs, *da = array_of_dargs,
              *ps = array_of_psizes;
    onic_mpi_type_t *old, *t;
    struct onic_mpi_envelope *env = NULL;
    type_part_t *parts = NULL;
    int **from = NULL, **len = NULL, *nruns = NULL, *idx = NULL, *run = NULL, *coord = NULL;
    size_t nparts = 0, whole = 1, grid = 1, rows = 1;
    int rc = MPI_SUCCESS, fast;
    MPI_Datatype h;

    TYPE_CHECK_ARGS(call, 0, newtype);
    if ((rc = type_old(call, oldtype, &old)) != MPI_SUCCESS)
        return rc;
    if (ndims <= 0)
        return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "ndims %d; a distributed array has 1 or "
                            "more dimensions", ndims);
    if (gs == NULL || ds == NULL || da == NULL || ps == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_%s is NULL",
                            gs == NULL ? "gsizes" : ds == NULL ? "distribs"
                                                  : da == NULL ? "dargs" : "psizes");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "order %d; use MPI_ORDER_C or "
                            "MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        int d = ds[i], g = gs[i], p = ps[i], k = da[i];
        if (g <= 0 || p <= 0)
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dimension %d: gsize %d over psize %d; "
                                "both must be positive", i, g, p);
        if (d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC && d != MPI_DISTRIBUTE_NONE)
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dimension %d: distribution %d; use "
                                "MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE", i, d);
        if (d == MPI_DISTRIBUTE_NONE && p != 1)
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dimension %d is not distributed "
                                "(MPI_DISTRIBUTE_NONE) but spread over %d processes", i, p);
        if (d != MPI_DISTRIBUTE_NONE && k != MPI_DISTRIBUTE_DFLT_DARG &&
            (k <= 0 || (d == MPI_DISTRIBUTE_BLOCK && (long long)k * p < g)))
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dimension %d: darg %d%s", i, k,
                                k <= 0 ? " must be positive or MPI_DISTRIBUTE_DFLT_DARG"
                                       : " times the processes does not cover the dimension");
        whole *= (size_t)g;
        grid *= (size_t)p;
        if (whole > ((size_t)1 << 42) || grid > (size_t)INT32_MAX)
            return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "the array has more than 2^42 "
                                "elements, or the grid more than 2^31 processes");
    }
    if ((size_t)size != grid || rank < 0 || rank >= size)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "rank %d of size %d on a grid of %zu "
                            "processes; the grid's product must be size, and rank below it",
                            rank, size, grid);
    fast = order == MPI_ORDER_C ? ndims - 1 : 0;
    from = onic_calloc((size_t)ndims, sizeof(*from));
    len = onic_calloc((size_t)ndims, sizeof(*len));
    nruns = onic_calloc((size_t)ndims, sizeof(int));
    idx = onic_calloc((size_t)ndims, sizeof(int));
    run = onic_calloc((size_t)ndims, sizeof(int));
    coord = onic_calloc((size_t)ndims, sizeof(int));
    env = type_env_new(MPI_COMBINER_DARRAY, 4 * ndims + 4, 0, 1);
    if (from == NULL || len == NULL || nruns == NULL || idx == NULL || run == NULL ||
        coord == NULL || env == NULL)
        goto nomem;
    /* The process's coordinates: the grid is row-major whatever the order. */
    for (int i = ndims - 1, rest = rank; i >= 0; i--) {
        coord[i] = rest % ps[i];
        rest /= ps[i];
    }
    for (int i = 0; i < ndims; i++) {
        size_t most = ds[i] == MPI_DISTRIBUTE_CYCLIC ? (size_t)gs[i] : 1;
        if ((from[i] = onic_calloc(most, sizeof(int))) == NULL ||
            (len[i] = onic_calloc(most, sizeof(int))) == NULL)
            goto nomem;
        nruns[i] = darray_runs(gs[i], ds[i], da[i], ps[i], coord[i], from[i], len[i]);
        if (i != fast) {
            size_t owned = 0;
            for (int k = 0; k < nruns[i]; k++)
                owned += (size_t)len[i][k];
            rows *= owned;
        }
    }
    nparts = nruns[fast] == 0 ? 0 : rows * (size_t)nruns[fast];
    if (nparts > 0 && (parts = onic_calloc(nparts, sizeof(*parts))) == NULL)
        goto nomem;
    /* Rows over the other dimensions' owned indices (idx: the run, and
     * run[]: the index within it), the fast dimension's runs in each. */
    for (size_t p = 0; p < nparts;) {
        ptrdiff_t off = 0, mul = 1;
        for (int k = 0; k < ndims; k++) {
            int i = order == MPI_ORDER_C ? ndims - 1 - k : k; /* fastest first */
            if (i != fast)
                off += (ptrdiff_t)(from[i][idx[i]] + run[i]) * mul;
            mul *= gs[i];
        }
        for (int k = 0; k < nruns[fast]; k++)
            parts[p++] = (type_part_t){(off + from[fast][k]) * old->extent,
                                       (size_t)len[fast][k], old};
        for (int k = 0; k < ndims; k++) {
            int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
            if (i == fast)
                continue;
            if (++run[i] < len[i][idx[i]])
                break;
            run[i] = 0;
            if (++idx[i] < nruns[i])
                break;
            idx[i] = 0;
        }
    }
    env->ints[0] = size;
    env->ints[1] = rank;
    env->ints[2] = ndims;
    for (int i = 0; i < ndims; i++) {
        env->ints[3 + i] = gs[i];
        env->ints[3 + ndims + i] = ds[i];
        env->ints[3 + 2 * ndims + i] = da[i];
        env->ints[3 + 3 * ndims + i] = ps[i];
    }
    env->ints[3 + 4 * ndims] = order;
    env->types[0] = old;
    rc = type_build(call, parts, nparts, env, &h);
    env = NULL; /* type_build's now, made or not */
    if (rc == MPI_SUCCESS) {
        t = type_alive(h);
        t->lb = old->lb;
        t->extent = (ptrdiff_t)whole * old->extent;
        t->bounded = 1;
        t->contig = t->nblocks == 0 || (t->nblocks == 1 && (ptrdiff_t)t->size == t->extent &&
                                        t->blocks[0].off == t->lb);
        *newtype = h;
    }
    goto out;
nomem:
    rc = onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for the distribution of %d "
                      "dimensions", ndims);
out:
    for (int i = 0; from != NULL && len != NULL && i < ndims; i++) {
        onic_free(from[i]);
        onic_free(len[i]);
    }
    onic_free(from);
    onic_free(len);
    onic_free(nruns);
    onic_free(idx);
    onic_free(run);
    onic_free(coord);
    onic_free(parts);
    onic_free(env);
    return rc;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    ONIC_MPI_LOCKED;
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
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Type_free");
    if (datatype == NULL || (t = onic_mpi_type_get(*datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_free", "%s",
                            datatype == NULL ? "datatype is NULL; pass the address of the "
                                               "handle" : "the handle names no datatype");
    if (t->predefined)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Type_free", "%s is predefined and cannot "
                            "be freed", t->name);
    /* Types built from it hold a reference (their envelope names it), and
     * so do operations under way: the last of them frees it. */
    onic_mpi_htab_del(&onic_mpi_g.types, t->handle);
    onic_mpi_type_unref(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* --- Queries ------------------------------------------------------------------------- */
static onic_mpi_type_t *type_query(const char *call, MPI_Datatype h, const void *out, int *rc_p)
{
    onic_mpi_type_t *t;

    if ((t = onic_mpi_type_get(h)) == NULL) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_TYPE, call, "datatype %#x names no datatype",
                             (unsigned)h);
        return NULL;
    }
    if (out == NULL) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_ARG, call, "an output argument is NULL");
        return NULL;
    }
    return t;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_size");
    if ((t = type_query("MPI_Type_size", datatype, size, &rc)) == NULL)
        return rc;
    *size = t->size > INT32_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_size_x");
    if ((t = type_query("MPI_Type_size_x", datatype, size, &rc)) == NULL)
        return rc;
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

/* The predefined type of a class and size (MPI 4.0, 19.1.9): C's types,
 * which are the Fortran kinds' layouts here. The type is predefined: not
 * to be freed. */
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    ONIC_MPI_LOCKED;
    static const struct {
        int          typeclass;
        size_t       size;
        MPI_Datatype type;
    } match[] = {
        {MPI_TYPECLASS_REAL, sizeof(float), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, sizeof(double), MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_INTEGER, 1, MPI_INT8_T},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INT16_T},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT32_T},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INT64_T},
        {MPI_TYPECLASS_COMPLEX, sizeof(float _Complex), MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, sizeof(double _Complex), MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, sizeof(long double _Complex), MPI_C_LONG_DOUBLE_COMPLEX},
    };
    const char *call = "MPI_Type_match_size";

    ONIC_MPI_CHECK_INIT(call);
    if (datatype == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "datatype is NULL");
    if (typeclass < MPI_TYPECLASS_REAL || typeclass > MPI_TYPECLASS_COMPLEX)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "typeclass %d is none of "
                            "MPI_TYPECLASS_REAL, _INTEGER and _COMPLEX", typeclass);
    for (size_t i = 0; i < sizeof(match) / sizeof(match[0]); i++)
        if (match[i].typeclass == typeclass && (int)match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    return onic_mpi_err(NULL, MPI_ERR_ARG, call, "no %s type of %d bytes",
                        typeclass == MPI_TYPECLASS_REAL      ? "real"
                        : typeclass == MPI_TYPECLASS_INTEGER ? "integer"
                                                             : "complex",
                        size);
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_get_extent");
    if ((t = type_query("MPI_Type_get_extent", datatype, lb == NULL ? NULL : extent, &rc)) ==
        NULL)
        return rc;
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_get_extent_x");
    if ((t = type_query("MPI_Type_get_extent_x", datatype, lb == NULL ? NULL : extent, &rc)) ==
        NULL)
        return rc;
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_get_true_extent");
    if ((t = type_query("MPI_Type_get_true_extent", datatype,
                        true_lb == NULL ? NULL : true_extent, &rc)) == NULL)
        return rc;
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                               MPI_Count *true_extent)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Type_get_true_extent_x");
    if ((t = type_query("MPI_Type_get_true_extent_x", datatype,
                        true_lb == NULL ? NULL : true_extent, &rc)) == NULL)
        return rc;
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_get_envelope";
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_query(call, datatype, num_integers, &rc)) == NULL)
        return rc;
    if (num_addresses == NULL || num_datatypes == NULL || combiner == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "an output argument is NULL");
    if (t->env == NULL) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    *num_integers = t->env->ni;
    *num_addresses = t->env->na;
    *num_datatypes = t->env->nt;
    *combiner = t->env->combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[],
                          MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_get_contents";
    const struct onic_mpi_envelope *e;
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "datatype %#x names no datatype",
                            (unsigned)datatype);
    if ((e = t->env) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "%s is predefined: it has no contents "
                            "(MPI_Type_get_envelope says MPI_COMBINER_NAMED)", t->name);
    if (max_integers < e->ni || max_addresses < e->na || max_datatypes < e->nt)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "room for %d ints, %d addresses and %d "
                            "types; the type has %d, %d and %d (MPI_Type_get_envelope)",
                            max_integers, max_addresses, max_datatypes, e->ni, e->na, e->nt);
    if ((e->ni > 0 && array_of_integers == NULL) || (e->na > 0 && array_of_addresses == NULL) ||
        (e->nt > 0 && array_of_datatypes == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "an output array is NULL");
    for (int i = 0; i < e->ni; i++)
        array_of_integers[i] = e->ints[i];
    for (int i = 0; i < e->na; i++)
        array_of_addresses[i] = e->aints[i];
    /* Each derived type named is a new handle the caller frees (MPI 3.1,
     * 4.1.13); a type since freed gets a handle again. */
    for (int i = 0; i < e->nt; i++) {
        onic_mpi_type_t *o = e->types[i];
        if (o->predefined) {
            array_of_datatypes[i] = o->handle;
            continue;
        }
        if (onic_mpi_type_get(o->handle) == o) {
            /* Live: an equal type of its own (MPI_Type_dup's), whose
             * envelope is o's, not MPI_COMBINER_DUP: the caller decodes
             * the type it named, as MPI 3.1, 4.1.13 has it. */
            struct onic_mpi_envelope *copy = type_env_copy(o->env);
            MPI_Datatype d;
            int rc;
            if (copy == NULL)
                return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a datatype");
            if ((rc = MPI_Type_dup(o->handle, &d)) != MPI_SUCCESS) {
                type_env_free(copy);
                return rc;
            }
            type_env_free(type_alive(d)->env);
            type_alive(d)->env = copy;
            array_of_datatypes[i] = d;
            continue;
        }
        /* Freed by the program, kept alive by this type: a new handle. */
        if (onic_mpi_htab_add(&onic_mpi_g.types, o, &o->handle) != 0)
            return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for a datatype handle");
        o->refs++;
        array_of_datatypes[i] = o->handle;
    }
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_set_name";
    onic_mpi_type_t *t;
    char *n;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_query(call, datatype, type_name, &rc)) == NULL)
        return rc;
    if (t->predefined) {
        /* A predefined type's name may change too (its default is its
         * own name, MPI 4.0, 6.8); until MPI_Finalize, in a fixed place. */
        n = type_predef_names[(unsigned)t->handle - (unsigned)MPI_CHAR];
        snprintf(n, MPI_MAX_OBJECT_NAME, "%s", type_name);
        t->name = n;
        return MPI_SUCCESS;
    }
    if ((n = onic_malloc(MPI_MAX_OBJECT_NAME)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a name");
    /* Longer names are cut to MPI_MAX_OBJECT_NAME - 1 characters. */
    snprintf(n, MPI_MAX_OBJECT_NAME, "%s", type_name);
    onic_free((char *)(uintptr_t)t->name);
    t->name = n;
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Type_get_name";
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_query(call, datatype, resultlen == NULL ? NULL : type_name, &rc)) == NULL)
        return rc;
    *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", t->name != NULL ? t->name : "");
    return MPI_SUCCESS;
}

/* --- Addresses, elements, pack and unpack ---------------------------------------- */
int MPI_Get_address(const void *location, MPI_Aint *address)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Get_address");
    if (address == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* Basic elements in the first `bytes` of a message of type t, or -1 if
 * the bytes end inside a basic element (or the signature is not kept). */
static long long type_elements(const onic_mpi_type_t *t, long long bytes)
{
    long long whole, n;

    if (t->size == 0)
        return 0;
    whole = bytes / (long long)t->size;
    n = whole * (long long)t->nelems;
    bytes -= whole * (long long)t->size;
    if (bytes == 0)
        return n;
    if (t->sig == NULL)
        return -1;
    for (size_t r = 0; r < t->nsig && bytes > 0; r++) {
        long long run = (long long)(t->sig[r].esize * t->sig[r].n);
        if (bytes >= run) {
            n += (long long)t->sig[r].n;
            bytes -= run;
            continue;
        }
        if (bytes % (long long)t->sig[r].esize != 0)
            return -1;
        return n + bytes / (long long)t->sig[r].esize;
    }
    return n;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Get_elements";
    onic_mpi_type_t *t;
    long long n;

    ONIC_MPI_CHECK_INIT(call);
    if (status == NULL || status == MPI_STATUS_IGNORE || count == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s", count == NULL ? "count is NULL"
                            : "status must be a real status, not NULL or MPI_STATUS_IGNORE");
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "datatype %#x is not a datatype",
                            (unsigned)datatype);
    n = type_elements(t, status->onic_count);
    *count = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    ONIC_MPI_LOCKED;
    MPI_Count n;
    int rc;

    if (count == NULL)
        return MPI_Get_elements_x(status, datatype, NULL);
    if ((rc = MPI_Get_elements_x(status, datatype, &n)) != MPI_SUCCESS)
        return rc;
    *count = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Pack_size";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if ((t = type_query(call, datatype, size, &rc)) == NULL)
        return rc;
    if (incount < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "incount %d is negative", incount);
    if (t->size * (size_t)incount > INT32_MAX)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%d elements of %zu bytes do not fit in an "
                            "int", incount, t->size);
    *size = (int)(t->size * (size_t)incount);
    return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Pack";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    size_t bytes;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL ||
        (t = onic_mpi_type_check(datatype, c, call, &rc)) == NULL)
        return rc;
    if (incount < 0 || outsize < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "incount %d / outsize %d: neither may be "
                            "negative", incount, outsize);
    if (position == NULL || *position < 0 || *position > outsize)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "position %s; it must point to an offset "
                            "from 0 to outsize %d", position == NULL ? "is NULL" : "is outside "
                            "the buffer", outsize);
    bytes = t->size * (size_t)incount;
    if (bytes > (size_t)(outsize - *position))
        return onic_mpi_err(c, MPI_ERR_TRUNCATE, call, "%zu bytes do not fit in the %d left "
                            "of outbuf (outsize %d, position %d)", bytes, outsize - *position,
                            outsize, *position);
    if (bytes > 0 && (inbuf == NULL || outbuf == NULL))
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%s is NULL",
                            inbuf == NULL ? "inbuf" : "outbuf");
    onic_mpi_type_pack(t, inbuf, incount, (char *)outbuf + *position);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Unpack";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    size_t bytes;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL ||
        (t = onic_mpi_type_check(datatype, c, call, &rc)) == NULL)
        return rc;
    if (outcount < 0 || insize < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "outcount %d / insize %d: neither may be "
                            "negative", outcount, insize);
    if (position == NULL || *position < 0 || *position > insize)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "position %s; it must point to an offset "
                            "from 0 to insize %d", position == NULL ? "is NULL" : "is outside "
                            "the buffer", insize);
    bytes = t->size * (size_t)outcount;
    if (bytes > (size_t)(insize - *position))
        return onic_mpi_err(c, MPI_ERR_TRUNCATE, call, "%d elements need %zu bytes but only %d "
                            "are left in inbuf (insize %d, position %d)", outcount, bytes,
                            insize - *position, insize, *position);
    if (bytes > 0 && (inbuf == NULL || outbuf == NULL))
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%s is NULL",
                            inbuf == NULL ? "inbuf" : "outbuf");
    onic_mpi_type_unpack(t, (const char *)inbuf + *position, bytes, outbuf, outcount);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

/* --- external32 -------------------------------------------------------------------------- */
/* How the elements of t are made big-endian: swapped whole (1), as two
 * halves (2: the complex kinds), or not at all here (0: a kind whose
 * external32 size differs from its size, or a type of several kinds,
 * whose elements' kinds are not kept). */
static int type_ext32_parts(const onic_mpi_type_t *t)
{
    if (t->sig == NULL)
        return 0;
    switch (t->basic) {
    case ONIC_MPI_B_NONE: case ONIC_MPI_B_LONG: case ONIC_MPI_B_ULONG:
    case ONIC_MPI_B_LDOUBLE: case ONIC_MPI_B_LONG_INT: case ONIC_MPI_B_LDOUBLE_INT:
    case ONIC_MPI_B_CLDOUBLE:
        /* Packed bytes carry no kind: moved as they are. */
        return t->handle == MPI_PACKED || t->handle == MPI_BYTE || t->handle == MPI_CHARACTER ? 1
                                                                                           : 0;
    case ONIC_MPI_B_CFLOAT: case ONIC_MPI_B_CDOUBLE:
        return 2;
    default:
        return 1;
    }
}

/* Reverse the bytes of every element of count packed elements of t. */
static void type_ext32_swap(const onic_mpi_type_t *t, char *p, size_t count, int parts)
{
    for (size_t c = 0; c < count; c++)
        for (size_t r = 0; r < t->nsig; r++) {
            size_t unit = t->sig[r].esize / (size_t)parts, n = t->sig[r].n * (size_t)parts;
            for (size_t e = 0; e < n; e++, p += unit)
                for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
                    char x = p[a];
                    p[a] = p[b];
                    p[b] = x;
                }
        }
}

/* The checks the three calls share: datarep, the type and its kind. */
static onic_mpi_type_t *type_ext32(const char *call, const char *datarep, MPI_Datatype datatype,
                                   int count, int *parts_p, int *rc_p)
{
    onic_mpi_type_t *t;

    if (datarep == NULL || strcmp(datarep, "external32") != 0) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_ARG, call, "datarep \"%s\": onic knows \"external32\" "
                             "only", datarep == NULL ? "(NULL)" : datarep);
        return NULL;
    }
    if ((t = onic_mpi_type_check(datatype, NULL, call, rc_p)) == NULL)
        return NULL;
    if (count < 0) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_COUNT, call, "count %d is negative", count);
        return NULL;
    }
    if ((*parts_p = type_ext32_parts(t)) == 0) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_TYPE, call, "external32 of %s: onic converts types "
                             "of one basic kind whose external32 size is its own (not long, "
                             "unsigned long, long double, nor a mix of kinds)",
                             t->name != NULL && t->name[0] != '\0' ? t->name : "this type");
        return NULL;
    }
    return t;
}

/* The packed buffer's checks, both ways: position inside its size, count
 * elements fitting after it (*bytes_p), inbuf and outbuf given. */
static int type_ext32_room(const char *call, const onic_mpi_type_t *t, int count, MPI_Aint size,
                           const MPI_Aint *position, const void *inbuf, const void *outbuf,
                           size_t *bytes_p)
{
    if (size < 0 || position == NULL || *position < 0 || *position > size)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "position %s; it must point to an offset "
                            "from 0 to the packed buffer's size %ld",
                            position == NULL ? "is NULL" : "is outside the buffer", (long)size);
    *bytes_p = t->size * (size_t)count;
    if (*bytes_p > (size_t)(size - *position))
        return onic_mpi_err(NULL, MPI_ERR_TRUNCATE, call, "%d elements need %zu bytes but only "
                            "%ld are left in the packed buffer", count, *bytes_p,
                            (long)(size - *position));
    if (*bytes_p > 0 && (inbuf == NULL || outbuf == NULL))
        return onic_mpi_err(NULL, MPI_ERR_BUFFER, call, "%s is NULL",
                            inbuf == NULL ? "inbuf" : "outbuf");
    return MPI_SUCCESS;
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Pack_external_size";
    onic_mpi_type_t *t;
    int rc, parts;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_ext32(call, datarep, datatype, incount, &parts, &rc)) == NULL)
        return rc;
    if (size == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "size is NULL");
    *size = (MPI_Aint)(t->size * (size_t)incount);
    return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                      MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Pack_external";
    onic_mpi_type_t *t;
    size_t bytes;
    int rc, parts;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_ext32(call, datarep, datatype, incount, &parts, &rc)) == NULL)
        return rc;
    if ((rc = type_ext32_room(call, t, incount, outsize, position, inbuf, outbuf, &bytes)) !=
        MPI_SUCCESS)
        return rc;
    onic_mpi_type_pack(t, inbuf, incount, (char *)outbuf + *position);
    type_ext32_swap(t, (char *)outbuf + *position, (size_t)incount, parts);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Unpack_external";
    onic_mpi_type_t *t;
    size_t bytes;
    char *native;
    int rc, parts;

    ONIC_MPI_CHECK_INIT(call);
    if ((t = type_ext32(call, datarep, datatype, outcount, &parts, &rc)) == NULL)
        return rc;
    if ((rc = type_ext32_room(call, t, outcount, insize, position, inbuf, outbuf, &bytes)) !=
        MPI_SUCCESS)
        return rc;
    /* inbuf is the caller's and const: converted in a copy. */
    if ((native = onic_malloc(bytes + 1)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    memcpy(native, (const char *)inbuf + *position, bytes);
    type_ext32_swap(t, native, (size_t)outcount, parts);
    onic_mpi_type_unpack(t, native, bytes, outbuf, outcount);
    onic_free(native);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}
