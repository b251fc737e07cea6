/* MPI datatypes in one process (a job of one, no onicrun): count > 1 of
 * types with gaps sent to ourselves, and MPI_Get_count of byte counts that
 * are and are not whole elements. Every expected value is written from the
 * standard's type map (element i of a type starts i extents after the
 * buffer), not computed by the library. Deterministic. */
#include "check.h"

#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <mpi.h>
#include <string.h>

/* vector(3, 2, 5) of MPI_INT: blocks of 2 ints every 5, extent 12 ints. */
static void test_vector_count2(void)
{
    MPI_Datatype vec;
    MPI_Aint lb, ext;
    MPI_Status st;
    int sz, cnt, src[24], packed[12], back[24];
    /* The standard's type map, two elements, the second 12 ints on. */
    static const int map[12] = {0, 1, 5, 6, 10, 11, 12, 13, 17, 18, 22, 23};

    CHECK_EQ(MPI_Type_vector(3, 2, 5, MPI_INT, &vec), MPI_SUCCESS);
    CHECK_EQ(MPI_Type_commit(&vec), MPI_SUCCESS);
    MPI_Type_size(vec, &sz);
    CHECK_EQ(sz, 6 * (int)sizeof(int));
    MPI_Type_get_extent(vec, &lb, &ext);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, 12 * (MPI_Aint)sizeof(int));
    for (int i = 0; i < 24; i++)
        src[i] = 100 + i;
    memset(packed, 0xff, sizeof(packed));
    /* Out as two vectors, in as 12 ints: the ints in type-map order. */
    CHECK_EQ(MPI_Sendrecv(src, 2, vec, 0, 1, packed, 12, MPI_INT, 0, 1, MPI_COMM_SELF, &st),
             MPI_SUCCESS);
    for (int i = 0; i < 12; i++)
        CHECK_EQ(packed[i], 100 + map[i]);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 12);
    MPI_Get_count(&st, vec, &cnt);
    CHECK_EQ(cnt, 2);
    /* Out as 12 ints, in as two vectors: the gaps keep what they held. */
    for (int i = 0; i < 24; i++)
        back[i] = -1;
    CHECK_EQ(MPI_Sendrecv(packed, 12, MPI_INT, 0, 2, back, 2, vec, 0, 2, MPI_COMM_SELF, &st),
             MPI_SUCCESS);
    for (int i = 0, k = 0; i < 24; i++) {
        if (k < 12 && map[k] == i)
            CHECK_EQ(back[i], 100 + map[k++]);
        else
            CHECK_EQ(back[i], -1);
    }
    /* One element and a half: count 2 of which only 9 ints arrive. */
    for (int i = 0; i < 24; i++)
        back[i] = -1;
    CHECK_EQ(MPI_Sendrecv(packed, 9, MPI_INT, 0, 3, back, 2, vec, 0, 3, MPI_COMM_SELF, &st),
             MPI_SUCCESS);
    for (int k = 0; k < 12; k++)
        CHECK_EQ(back[map[k]], k < 9 ? 100 + map[k] : -1);
    MPI_Get_count(&st, vec, &cnt);
    CHECK_EQ(cnt, MPI_UNDEFINED);
    MPI_Type_free(&vec);
}

/* A predefined pair whose value and int leave a gap (size 6, extent 8 on
 * this ABI): count 3 arrives as sent. */
static void test_pair_count3(void)
{
    struct { short v; int i; } out[3], in[3];
    MPI_Aint lb, ext;
    MPI_Status st;
    int sz, cnt;

    MPI_Type_size(MPI_SHORT_INT, &sz);
    CHECK_EQ(sz, (int)(sizeof(short) + sizeof(int)));
    MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext);
    CHECK_EQ(ext, (MPI_Aint)sizeof(out[0]));
    for (int k = 0; k < 3; k++) {
        out[k].v = (short)(7 + k);
        out[k].i = 1000 * (k + 1);
    }
    memset(in, 0, sizeof(in));
    CHECK_EQ(MPI_Sendrecv(out, 3, MPI_SHORT_INT, 0, 4, in, 3, MPI_SHORT_INT, 0, 4, MPI_COMM_SELF,
                          &st), MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(in[k].v, 7 + k);
        CHECK_EQ(in[k].i, 1000 * (k + 1));
    }
    MPI_Get_count(&st, MPI_SHORT_INT, &cnt);
    CHECK_EQ(cnt, 3);
}

/* MPI_Get_count: a byte count that is not a whole number of elements is
 * MPI_UNDEFINED (MPI 4.0, 3.2.5), never a rounded-down count. */
static void test_get_count(void)
{
    MPI_Status st;
    MPI_Datatype vec;
    int cnt;
    char bytes[10] = {0};
    int ints[3];

    memset(&st, 0, sizeof(st));
    st.onic_count = 12;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 3);
    st.onic_count = 10;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, MPI_UNDEFINED);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK_EQ(cnt, 10);
    MPI_Get_count(&st, MPI_SHORT, &cnt);
    CHECK_EQ(cnt, 5);
    st.onic_count = 1;
    MPI_Get_count(&st, MPI_SHORT, &cnt);
    CHECK_EQ(cnt, MPI_UNDEFINED);
    st.onic_count = 0;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK_EQ(cnt, 0);
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* size 8 */
    MPI_Type_commit(&vec);
    st.onic_count = 16;
    MPI_Get_count(&st, vec, &cnt);
    CHECK_EQ(cnt, 2);
    st.onic_count = 12;
    MPI_Get_count(&st, vec, &cnt);
    CHECK_EQ(cnt, MPI_UNDEFINED);
    MPI_Type_free(&vec);
    /* The same through a real receive: 10 bytes into room for 3 ints. */
    CHECK_EQ(MPI_Sendrecv(bytes, 10, MPI_BYTE, 0, 5, ints, 3, MPI_INT, 0, 5, MPI_COMM_SELF, &st),
             MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, MPI_UNDEFINED);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK_EQ(cnt, 10);
}

/* Arguments and limits, under MPI_ERRORS_RETURN: a NULL lb or extent is
 * MPI_ERR_ARG (not a crash); a type of 2^40 elements, or of 2^42 bytes,
 * is the largest onic takes, one more block is MPI_ERR_COUNT. */
static void test_type_args(void)
{
    MPI_Datatype big = MPI_DATATYPE_NULL, bigger = MPI_DATATYPE_NULL;
    MPI_Aint lb = -7, ext = -7;
    int sz;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Type_get_extent(MPI_INT, NULL, &ext), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_get_extent(MPI_INT, &lb, NULL), MPI_ERR_ARG);
    CHECK(lb == -7 && ext == -7); /* nothing written on an error */
    CHECK_EQ(MPI_Type_get_extent(MPI_INT, &lb, &ext), MPI_SUCCESS);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int));
    CHECK_EQ(MPI_Type_vector(1 << 20, 1 << 20, 1 << 20, MPI_BYTE, &big), MPI_SUCCESS);
    if (big != MPI_DATATYPE_NULL) {
        MPI_Type_get_extent(big, &lb, &ext);
        CHECK_EQ(ext, (MPI_Aint)1 << 40);
        MPI_Type_size(big, &sz);
        CHECK_EQ(sz, MPI_UNDEFINED); /* more than an int holds */
        MPI_Type_free(&big);
    }
    CHECK_EQ(MPI_Type_vector((1 << 20) + 1, 1 << 20, 1 << 20, MPI_BYTE, &bigger), MPI_ERR_COUNT);
    CHECK(bigger == MPI_DATATYPE_NULL);
    /* And 2^42 bytes, the most one message moves, of 8-byte elements. */
    big = MPI_DATATYPE_NULL;
    CHECK_EQ(MPI_Type_vector(1 << 20, 1 << 19, 1 << 19, MPI_DOUBLE, &big), MPI_SUCCESS);
    if (big != MPI_DATATYPE_NULL) {
        MPI_Type_get_extent(big, &lb, &ext);
        CHECK_EQ(ext, (MPI_Aint)1 << 42);
        MPI_Type_free(&big);
    }
    CHECK_EQ(MPI_Type_vector((1 << 20) + 1, 1 << 19, 1 << 19, MPI_DOUBLE, &bigger), MPI_ERR_COUNT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Types made until the table of types is full to its capacity exactly (a
 * power of two, from 64: the last index made is one less), and left for
 * MPI_Finalize to free: its walk of the table must stop at the last slot
 * used (under AddressSanitizer a read one past it is an error). */
static void test_table_full_at_finalize(void)
{
    MPI_Datatype t;
    int index = 0, made = 0;

    do {
        CHECK_EQ(MPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
        index = t & (ONIC_MPI_HANDLE_INDEX_MAX - 1);
        made++;
    } while (made < 10000 && !(index >= 63 && ((index + 1) & index) == 0));
    CHECK(((index + 1) & index) == 0);
}

/* MPI_Type_create_darray gives back its working memory: made and freed,
 * twice (the first may grow the table of types), the second leaves the
 * count of allocations where it began. */
static void test_darray_frees(void)
{
    int gsizes[2] = {8, 6}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {1, 1}, size = 0;
    MPI_Datatype t;

    for (int round = 0; round < 2; round++) {
        onic_mem_count_start();
        CHECK_EQ(MPI_Type_create_darray(1, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                        MPI_INT, &t), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_size(t, &size), MPI_SUCCESS);
        CHECK_EQ(size, 8 * 6 * (int)sizeof(int));
        CHECK_EQ(MPI_Type_free(&t), MPI_SUCCESS);
        if (round == 1)
            CHECK_EQ(onic_mem_count_net(), 0);
    }
}

/* MPI_Pack_size answers in an int: INT32_MAX bytes fit, one element
 * more of two bytes does not (MPI_ERR_COUNT). */
static void test_pack_size_limit(void)
{
    int size = 0;

    CHECK_EQ(MPI_Pack_size(INT32_MAX, MPI_BYTE, MPI_COMM_WORLD, &size), MPI_SUCCESS);
    CHECK_EQ(size, INT32_MAX);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    size = 0;
    CHECK_EQ(MPI_Pack_size(INT32_MAX / 2 + 1, MPI_SHORT, MPI_COMM_WORLD, &size), MPI_ERR_COUNT);
    CHECK_EQ(size, 0);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL), MPI_SUCCESS);
}

/* A type made from a derived one holds it until it goes: both freed, in
 * either order, everything is given back (second round: the first may
 * grow the table of types). */
static void test_derived_of_derived_frees(void)
{
    MPI_Datatype v, c;

    for (int round = 0; round < 2; round++) {
        onic_mem_count_start();
        CHECK_EQ(MPI_Type_vector(3, 2, 5, MPI_INT, &v), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_contiguous(2, v, &c), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_free(&v), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_free(&c), MPI_SUCCESS);
        if (round == 1)
            CHECK_EQ(onic_mem_count_net(), 0);
    }
}

/* struct {int; char}: one block of 5 bytes, its extent padded to 8 by the
 * int's alignment, so not contiguous: two elements pack as bytes 0-4 and
 * 8-12 of the buffer. */
static void test_struct_padded_not_contig(void)
{
    int blens[2] = {1, 1}, pos = 0;
    MPI_Aint disps[2] = {0, 4}, lb = -1, extent = 0;
    MPI_Datatype types[2] = {MPI_INT, MPI_CHAR}, t;
    unsigned char in[16], out[16];

    for (int i = 0; i < 16; i++)
        in[i] = (unsigned char)(i + 1);
    memset(out, 0, sizeof(out));
    CHECK_EQ(MPI_Type_create_struct(2, blens, disps, types, &t), MPI_SUCCESS);
    CHECK_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
    CHECK_EQ(MPI_Type_get_extent(t, &lb, &extent), MPI_SUCCESS);
    CHECK_EQ(lb, 0);
    CHECK_EQ(extent, 8);
    CHECK_EQ(MPI_Pack(in, 2, t, out, sizeof(out), &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, 10);
    CHECK(memcmp(out, in, 5) == 0 && memcmp(out + 5, in + 8, 5) == 0);
    CHECK_EQ(MPI_Type_free(&t), MPI_SUCCESS);
}

/* The blocking reductions' packed copies come from a cache that keeps the
 * four largest buffers given back (coll.c): the smallest kept that fits
 * is handed out again, a smaller one than all four is not kept, and a
 * reduction's result is right through reused buffers of other sizes. */
static void test_reduce_scratch(void)
{
    void *p[5], *q, *big;
    enum { N = 40000 };
    static double a[N], b[N];

    onic_mpi_scratch_fini();
    for (int i = 0; i < 5; i++)
        p[i] = onic_mpi_scratch_get((size_t)(i + 1) << 10);
    for (int i = 0; i < 5; i++)
        onic_mpi_scratch_put(p[i]);
    /* Four kept (2 to 5 KiB), the smallest that fits handed out; one
     * smaller than all of them is not kept. */
    q = onic_mpi_scratch_get(1 << 10);
    CHECK(q == p[1]); /* 2 KiB: the 1 KiB one was not kept */
    onic_mpi_scratch_put(q);
    for (int i = 4; i >= 1; i--)
        CHECK(onic_mpi_scratch_get((size_t)(i + 1) << 10) == p[i]);
    q = onic_mpi_scratch_get(1 << 9); /* none kept: a new one */
    for (int i = 1; i <= 4; i++)
        onic_mpi_scratch_put(p[i]);
    onic_mpi_scratch_put(q);
    CHECK(onic_mpi_scratch_get(1500) == p[1]);
    CHECK(onic_mpi_scratch_get(5 << 10) == p[4]);
    big = onic_mpi_scratch_get(10 << 10);
    CHECK(big != p[2] && big != p[3]);
    onic_mpi_scratch_put(p[4]);
    onic_mpi_scratch_put(p[1]);
    onic_mpi_scratch_put(big);
    for (int round = 0; round < 3; round++) {
        int n = round == 1 ? 100 : N, bad = 0;
        for (int i = 0; i < n; i++) {
            a[i] = i + round;
            b[i] = 2.0 * i;
        }
        CHECK(MPI_Reduce_local(a, b, n, MPI_DOUBLE, MPI_SUM) == MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            bad += b[i] != 3.0 * i + round;
        CHECK(bad == 0);
    }
    onic_mpi_scratch_fini();
}

/* A reduction over n elements touches those n and no more: the element
 * after them in the in-out buffer keeps its value, though the input's is
 * one the operation would take (each kind of loop: arithmetic, bits,
 * value-index pairs, complex, bool). */
static void test_apply_bounds(void)
{
    static const struct {
        MPI_Datatype type;
        MPI_Op       op;
    } cases[] = {{MPI_DOUBLE, MPI_MAX}, {MPI_INT, MPI_BOR}, {MPI_DOUBLE_INT, MPI_MAXLOC},
                 {MPI_C_DOUBLE_COMPLEX, MPI_SUM}, {MPI_C_BOOL, MPI_LOR}};
    enum { N = 5 };

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        onic_mpi_type_t *t = onic_mpi_type_get(cases[k].type);
        onic_mpi_opd_t op;
        unsigned char in[(N + 1) * 32], io[(N + 1) * 32], want;

        REQUIRE(t != NULL && t->size <= 32);
        CHECK(onic_mpi_coll_op_check(cases[k].op, t, NULL, "test", &op) == MPI_SUCCESS);
        memset(in, 0x01, sizeof(in)); /* every input above the in-out's */
        memset(io, 0x00, sizeof(io));
        want = io[N * t->size];
        onic_mpi_coll_apply(&op, t, (const char *)in, (char *)io, N * t->size);
        for (size_t b = N * t->size; b < (N + 1) * t->size; b++)
            CHECK(io[b] == want);
        CHECK(memcmp(io, in, t->size) == 0 || cases[k].op == MPI_SUM); /* took the first */
    }
}

int main(int argc, char **argv)
{
    int size;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size == 1);
    test_vector_count2();
    test_pair_count3();
    test_get_count();
    test_type_args();
    test_darray_frees();
    test_pack_size_limit();
    test_derived_of_derived_frees();
    test_struct_padded_not_contig();
    test_reduce_scratch();
    test_apply_bounds();
    test_table_full_at_finalize(); /* last: MPI_Finalize frees them */
    MPI_Finalize();
    return check_summary("test_mpi_types");
}
