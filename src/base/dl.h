/* Libraries a job may not need, opened at run time (dlopen) the first time
 * it does: libfabric for ofi (a job that spans nodes, or ONIC_XPORT=ofi) and
 * PMIx for the pmix bootstrap (under a PMIx launcher). A program linked with
 * onic does not load them, nor what they pull in, before main: Debian's
 * libfabric brings PSM's libinfinipath, whose constructor sleeps about
 * 0.2 s in every process that loads it.
 *
 * Each user describes its library once: the file to open, the Debian
 * package that installs it, and the exported functions it calls, each
 * resolved into a function pointer of the user's (static inline wrappers
 * of the library's headers need none). A library is opened at most once per
 * process and never closed (neither libfabric nor PMIx supports being
 * unloaded); a failure is an error naming the library, why, and the package
 * to install, and is remembered, so later calls fail the same way. Safe to
 * call from several threads. */
#ifndef ONIC_BASE_DL_H
#define ONIC_BASE_DL_H

#include <stddef.h>
#include <stdint.h>
#include <onic/status.h>

typedef struct onic_dl_sym {
    const char *name;       /* "fi_getinfo" */
    /* The symbol version the build was made against ("FABRIC_1.3"), as a
     * link would bind it; NULL: the library's default (dlsym). */
    const char *version;
    /* The function pointer its address goes to (&fn.getinfo): copied in
     * with memcpy, the way POSIX gives dlsym's result to a function
     * pointer, so no pointer is cast to another type. */
    void       *slot;
} onic_dl_sym_t;

typedef struct onic_dl_lib {
    const char          *what;      /* "libfabric", for messages */
    const char          *file;      /* "libfabric.so.1": dlopen's search */
    const char          *package;   /* "libfabric1": apt-get install it */
    const char          *needed_by; /* "the ofi transport (a job spanning nodes)" */
    const char          *var;       /* the variable that names another file: "ONIC_OFI_LIB" */
    const onic_dl_sym_t *syms;
    size_t               nsyms;
    /* Filled by onic_dl_load. */
    int                  tried;
    onic_status_t        status;
    uint64_t             load_ns;   /* how long opening and resolving took */
} onic_dl_lib_t;

/* Opens lib (from path instead of lib->file when path is not NULL or
 * empty) and fills its slots; ONIC_OK when every symbol was found. Logs the
 * time it took at debug level. */
onic_status_t onic_dl_load(onic_dl_lib_t *lib, const char *path);

/* Nanoseconds spent in onic_dl_load by this process so far. */
uint64_t onic_dl_total_ns(void);

#endif
