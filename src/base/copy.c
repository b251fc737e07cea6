#include "base/copy.h"

#include <unistd.h>

size_t onic_copy_max = 512 * 1024;

/* Before any copy: a constructor, so every program that links the library
 * (the onload engine, the tools) has it without an init call. */
__attribute__((constructor)) static void copy_init(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

    if (l2 > ONIC_COPY_PIECE)
        onic_copy_max = (size_t)l2;
}
