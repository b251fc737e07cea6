#ifndef ONIC_BASE_CPU_H
#define ONIC_BASE_CPU_H

/* CPU features, detected at run time so one binary runs everywhere. */
int onic_cpu_has_avx2(void);
/* Whether the CPU has CLDEMOTE (onic_cpu_demote does something). */
int onic_cpu_has_cldemote(void);

/* One pause in a spin: lets the sibling hyperthread run and the spinning
 * core not flood the bus with loads. */
static inline void onic_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* A hint that the cache line at p moves out of this core's private caches
 * into the shared one, where another core reads it sooner than from ours
 * (CLDEMOTE; a no-op where the CPU lacks it, the encoding being a hint). */
static inline void onic_cpu_demote(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("cldemote %0" ::"m"(*(const volatile char *)p));
#else
    (void)p;
#endif
}

#endif
