/* Opening a library at run time: see dl.h. */
#include "base/dl.h"
#include "base/clock.h"
#include "base/log.h"

#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* dlsym's result is copied into function pointers: POSIX makes them the
 * same size. */
static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers are data-sized");

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t dl_total_ns;

/* lib's symbols into their slots; on failure the name of one not found. */
static const char *dl_resolve(const onic_dl_lib_t *lib, void *handle, const char **why_p)
{
    for (size_t i = 0; i < lib->nsyms; i++) {
        const onic_dl_sym_t *s = &lib->syms[i];
        void *addr = NULL;
        (void)dlerror();
        if (s->version != NULL)
            addr = dlvsym(handle, s->name, s->version);
        if (addr == NULL) /* a library built without symbol versions has only plain names */
            addr = dlsym(handle, s->name);
        if (addr == NULL) {
            const char *err = dlerror();
            *why_p = err != NULL ? err : "no such symbol";
            return s->name;
        }
        memcpy(s->slot, &addr, sizeof(addr));
    }
    return NULL;
}

onic_status_t onic_dl_load(onic_dl_lib_t *lib, const char *path)
{
    const char *file = path != NULL && path[0] != '\0' ? path : lib->file;
    const char *missing, *why = NULL;
    uint64_t t0;
    void *handle;

    pthread_mutex_lock(&dl_lock);
    if (lib->tried) {
        onic_status_t status = lib->status;
        pthread_mutex_unlock(&dl_lock);
        if (status != ONIC_OK)
            onic_error("dl: %s, which %s needs, could not be loaded (see the error above)",
                       lib->what, lib->needed_by);
        return status;
    }
    lib->tried = 1;
    t0 = onic_time_ns();
    /* RTLD_LOCAL: its names stay out of the program's namespace. RTLD_NOW:
     * a library that cannot work fails here, not at its first call. */
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        onic_error("dl: %s needs %s, which cannot be loaded: %s; install it (Debian, Ubuntu: "
                   "apt-get install %s)%s%s", lib->needed_by, lib->what, dlerror(), lib->package,
                   file != lib->file ? ", or correct " : "", file != lib->file ? lib->var : "");
        lib->status = ONIC_ERR_UNSUPPORTED;
        goto out;
    }
    missing = dl_resolve(lib, handle, &why);
    if (missing != NULL) {
        onic_error("dl: %s (%s) has no %s (%s): too old or not %s; install the one onic was "
                   "built for (Debian, Ubuntu: apt-get install %s)", lib->what, file, missing,
                   why, lib->what, lib->package);
        /* Not closed: its constructors have run, and unloading them is what
         * these libraries do not support. */
        lib->status = ONIC_ERR_UNSUPPORTED;
        goto out;
    }
    lib->status = ONIC_OK;
out:
    lib->load_ns = onic_time_ns() - t0;
    dl_total_ns += lib->load_ns;
    pthread_mutex_unlock(&dl_lock);
    if (lib->status == ONIC_OK)
        onic_debug("dl: loaded %s (%s) for %s in %.1f ms", lib->what, file, lib->needed_by,
                   (double)lib->load_ns / 1e6);
    return lib->status;
}

uint64_t onic_dl_total_ns(void)
{
    uint64_t ns;

    pthread_mutex_lock(&dl_lock);
    ns = dl_total_ns;
    pthread_mutex_unlock(&dl_lock);
    return ns;
}
