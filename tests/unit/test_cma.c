/* Cross-memory attach (xport/cma.h) on this process itself. The probe
 * answers 1 only when the word read at the address is the one expected --
 * what proves that a pid names the process that published the word -- and
 * 0 for any other value; reads and writes move every byte asked, across
 * pages, and a range that is not mapped is an error. Whether the kernel
 * allows CMA here (a seccomp profile or Yama may refuse it) is asked of
 * the kernel directly, not of the code under test; where it refuses, only
 * the refusals are checked, and the test says so. Deterministic. */
#include "check.h"
#include "xport/cma.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile uint64_t word = 0x6f6e69632d636d61ull;

/* Whether process_vm_readv of one's own word works here. */
static int kernel_allows_cma(void)
{
    uint64_t copy = 0;
    struct iovec l = {&copy, sizeof(copy)};
    struct iovec r = {(void *)&word, sizeof(copy)};

    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof(copy) &&
           copy == word;
}

/* Three pages and a bit, from an odd offset: both ways, every byte. */
static void test_read_write(void)
{
    enum { LEN = 3 * 4096 + 123 };
    static uint8_t from[LEN + 64], to[LEN + 64];
    void *hole;
    size_t bad = 0;

    for (size_t i = 0; i < sizeof(from); i++)
        from[i] = (uint8_t)(i * 7 + 1);
    memset(to, 0, sizeof(to));
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 5, (uint64_t)(uintptr_t)(from + 3), LEN),
             ONIC_OK);
    for (size_t i = 0; i < LEN; i++)
        bad += to[5 + i] != from[3 + i];
    CHECK_EQ(bad, 0);
    CHECK(to[4] == 0 && to[5 + LEN] == 0);

    memset(to, 0, sizeof(to));
    CHECK_EQ(onic_xport_cma_write(getpid(), from + 3, (uint64_t)(uintptr_t)(to + 5), LEN),
             ONIC_OK);
    bad = 0;
    for (size_t i = 0; i < LEN; i++)
        bad += to[5 + i] != from[3 + i];
    CHECK_EQ(bad, 0);
    CHECK(to[4] == 0 && to[5 + LEN] == 0);

    /* A page that is not mapped: an error, not a loop. */
    hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(hole != MAP_FAILED);
    CHECK(onic_xport_cma_read(getpid(), to, (uint64_t)(uintptr_t)hole, 64) != ONIC_OK);
    munmap(hole, 4096);
}

/* A destination 16 bytes after its source modulo 4 KiB: the copy goes
 * through the staging buffer (counted), in parts when longer than it,
 * every byte in its place and the bytes around untouched, both ways; a
 * remote range that runs into an unmapped page is an error there too. */
static void test_staged(void)
{
    static const size_t lens[] = {2049, 4096, 256 * 1024 + 4096 + 7, 600 * 1024};
    enum { AREA = 640 * 1024 + 8192 };
    uint8_t *from = mmap(NULL, AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *to = mmap(NULL, AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t staged = onic_xport_cma_staged;

    REQUIRE(from != MAP_FAILED && to != MAP_FAILED);
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        size_t len = lens[k], bad = 0;
        int write = (int)(k % 2);

        for (size_t i = 0; i < AREA; i++)
            from[i] = (uint8_t)(i * 11 + k);
        memset(to, 0, AREA);
        if (write)
            CHECK_EQ(onic_xport_cma_write(getpid(), from + 4096,
                                          (uint64_t)(uintptr_t)(to + 16), len), ONIC_OK);
        else
            CHECK_EQ(onic_xport_cma_read(getpid(), to + 16, (uint64_t)(uintptr_t)(from + 4096),
                                         len), ONIC_OK);
        for (size_t i = 0; i < len; i++)
            bad += to[16 + i] != from[4096 + i];
        CHECK_EQ(bad, 0);
        CHECK(to[15] == 0 && to[16 + len] == 0);
    }
    CHECK_EQ(onic_xport_cma_staged - staged, sizeof(lens) / sizeof(lens[0]));
    /* Not staged: aligned alike, or too short to be slow. */
    staged = onic_xport_cma_staged;
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 4096, (uint64_t)(uintptr_t)from, 8192), ONIC_OK);
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 16, (uint64_t)(uintptr_t)from, 2048), ONIC_OK);
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 64, (uint64_t)(uintptr_t)from, 8192), ONIC_OK);
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 32, (uint64_t)(uintptr_t)from, 8192), ONIC_OK);
    CHECK_EQ(onic_xport_cma_write(getpid(), from + 48, (uint64_t)(uintptr_t)to + 96, 8192),
             ONIC_OK);
    CHECK_EQ(onic_xport_cma_staged, staged);
    /* The ends of the range: 1 and 31 bytes after. */
    CHECK_EQ(onic_xport_cma_read(getpid(), to + 4096 + 1, (uint64_t)(uintptr_t)from, 8192),
             ONIC_OK);
    CHECK_EQ(onic_xport_cma_write(getpid(), from, (uint64_t)(uintptr_t)to + 31, 8192), ONIC_OK);
    CHECK_EQ(onic_xport_cma_staged, staged + 2);
    staged = onic_xport_cma_staged;
    /* The second part of a staged read reaches an unmapped page. */
    REQUIRE(munmap(from + 300 * 1024, 4096) == 0);
    CHECK(onic_xport_cma_read(getpid(), to + 16, (uint64_t)(uintptr_t)from, 400 * 1024) !=
          ONIC_OK);
    CHECK_EQ(onic_xport_cma_staged, staged + 1);
    munmap(from, AREA);
    munmap(to, AREA);
}

/* Two threads copying aliased pairs at once: one holds the staging
 * buffer, the other copies directly meanwhile; neither gets the other's
 * bytes (both through one buffer would mix them). */
enum { RACE_LEN = 96 * 1024, RACE_ROUNDS = 200 };

typedef struct {
    uint8_t *from, *to;
    size_t   bad;
} race_t;

static void *race_run(void *arg)
{
    race_t *r = arg;

    for (int i = 0; i < RACE_ROUNDS; i++) {
        memset(r->to, 0, RACE_LEN + 32);
        if (onic_xport_cma_read(getpid(), r->to + 16, (uint64_t)(uintptr_t)r->from, RACE_LEN) !=
            ONIC_OK)
            r->bad++;
        for (size_t k = 0; k < RACE_LEN; k++)
            r->bad += r->to[16 + k] != r->from[k];
    }
    return NULL;
}

static void test_staged_threads(void)
{
    race_t r[2];
    pthread_t t[2];

    for (int i = 0; i < 2; i++) {
        r[i].from = mmap(NULL, RACE_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                         0);
        r[i].to = mmap(NULL, RACE_LEN + 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(r[i].from != MAP_FAILED && r[i].to != MAP_FAILED);
        memset(r[i].from, 0x5a ^ (i * 0xff), RACE_LEN);
        for (size_t k = 0; k < RACE_LEN; k += 97)
            r[i].from[k] = (uint8_t)(k + i);
        r[i].bad = 0;
    }
    for (int i = 0; i < 2; i++)
        REQUIRE(pthread_create(&t[i], NULL, race_run, &r[i]) == 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(r[i].bad, 0);
        munmap(r[i].from, RACE_LEN);
        munmap(r[i].to, RACE_LEN + 4096);
    }
}

/* The local side in pieces (an I/O vector MD's): every byte in its
 * place, the gaps between pieces untouched; and a remote range that ends in
 * an unmapped page, which the kernel moves in part before it fails: the
 * pieces stepped over, then an error. */
static void test_copyv(void)
{
    enum { LEN = 3 * 4096 + 123 };
    static uint8_t from[LEN + 64], to[LEN + 256];
    struct iovec v[3];
    uint8_t *pages;
    size_t bad = 0, at = 0;

    for (size_t i = 0; i < sizeof(from); i++)
        from[i] = (uint8_t)(i * 5 + 3);
    for (int write = 0; write < 2; write++) {
        memset(to, 0, sizeof(to));
        v[0] = (struct iovec){to + 5, 100};
        v[1] = (struct iovec){to + 200, 5000};
        v[2] = (struct iovec){to + 5300, LEN - 5100};
        if (write) {
            /* The pieces hold the data; the remote side is from's copy. */
            for (size_t i = 0; i < LEN; i++)
                *(i < 100 ? to + 5 + i : i < 5100 ? to + 100 + i : to + 200 + i) = from[3 + i];
            memset(from + 3, 0, LEN);
            CHECK_EQ(onic_xport_cma_copyv(getpid(), 1, v, 3, (uint64_t)(uintptr_t)(from + 3),
                                          LEN),
                     ONIC_OK);
            for (size_t i = 0; i < LEN; i++)
                bad += from[3 + i] != *(i < 100 ? to + 5 + i : i < 5100 ? to + 100 + i
                                                                          : to + 200 + i);
            CHECK_EQ(bad, 0);
            continue;
        }
        CHECK_EQ(onic_xport_cma_copyv(getpid(), 0, v, 3, (uint64_t)(uintptr_t)(from + 3), LEN),
                 ONIC_OK);
        for (size_t i = 0; i < sizeof(to); i++) {
            int in = (i >= 5 && i < 105) || (i >= 200 && i < 5200) ||
                     (i >= 5300 && i < 5300 + LEN - 5100);
            bad += in ? to[i] != from[3 + at++] : to[i] != 0;
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(at, LEN);
    }
    pages = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(pages != MAP_FAILED);
    REQUIRE(mprotect(pages + 4096, 4096, PROT_NONE) == 0);
    v[0] = (struct iovec){to, 3000};
    v[1] = (struct iovec){to + 3000, 2000};
    CHECK(onic_xport_cma_copyv(getpid(), 0, v, 2, (uint64_t)(uintptr_t)pages, 5000) != ONIC_OK);
    munmap(pages, 2 * 4096);
}

int main(void)
{
    uint64_t addr = (uint64_t)(uintptr_t)&word;

    CHECK_EQ(onic_xport_cma_probe(getpid(), addr, word + 1), 0);
    CHECK_EQ(onic_xport_cma_probe(getpid(), addr, 0), 0);
    if (kernel_allows_cma()) {
        CHECK_EQ(onic_xport_cma_probe(getpid(), addr, word), 1);
        test_read_write();
        test_staged();
        test_staged_threads();
        test_copyv();
    } else {
        CHECK_EQ(onic_xport_cma_probe(getpid(), addr, word), 0);
        printf("test_cma: the kernel refuses CMA here: only refusals checked\n");
    }
    return check_summary("test_cma");
}
