#include "base/cpu.h"

#if defined(__x86_64__)
#include <cpuid.h> /* onic_cpu_has_cldemote, x86-64 only as onic_cpu_demote */
#endif

int onic_cpu_has_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

int onic_cpu_has_cldemote(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;

    /* Leaf 7, ECX bit 25. */
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 25 & 1);
#else
    return 0;
#endif
}
