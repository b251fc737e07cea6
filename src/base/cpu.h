#ifndef ONIC_BASE_CPU_H
#define ONIC_BASE_CPU_H

/* CPU features, detected at run time so one binary runs everywhere. */
int onic_cpu_has_avx2(void);

#endif
