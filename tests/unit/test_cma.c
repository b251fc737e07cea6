/* Cross-memory attach's probe (xport/cma.h) on this process itself: it
 * answers 1 only when the word read at the address is the one expected --
 * what proves that a pid names the process that published the word -- and
 * 0 for any other value. Where the kernel refuses CMA (a seccomp profile,
 * Yama) the probe answers 0 and only that half can be checked; it says so.
 * Deterministic. */
#include "check.h"
#include "xport/cma.h"

#include <stdio.h>
#include <unistd.h>

static volatile uint64_t word = 0x6f6e69632d636d61ull;

int main(void)
{
    uint64_t addr = (uint64_t)(uintptr_t)&word;
    int works = onic_xport_cma_probe(getpid(), addr, word);

    CHECK_EQ(onic_xport_cma_probe(getpid(), addr, word + 1), 0);
    CHECK_EQ(onic_xport_cma_probe(getpid(), addr, 0), 0);
    if (works)
        CHECK_EQ(onic_xport_cma_probe(getpid(), addr, word), 1);
    else
        printf("test_cma: the kernel refuses CMA here: only refusals checked\n");
    return check_summary("test_cma");
}
