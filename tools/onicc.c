/* onicc: compile and link MPI programs against onic, as mpicc does.
 *
 *   onicc [-show] [COMPILER ARGS...]
 *
 * Runs the C compiler ($ONICC_CC, else cc) with onic's include directory
 * and, unless the arguments only compile (-c, -E, -S, -M, -MM), its library
 * with an rpath to it, so the program runs without LD_LIBRARY_PATH. Where
 * those are depends on where onicc itself is: run from the build tree it
 * uses the source tree's headers and the build tree's library; installed as
 * PREFIX/bin/onicc it uses PREFIX/include and PREFIX/lib, so an install
 * can be moved as a whole. -show prints the command instead of running it.
 * (ONICC_CC rather than ONIC_CC: onic warns about ONIC_* variables it does
 * not know, and the compiler choice is no business of the library.) */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ONICC_BUILD_DIR
#error "ONICC_BUILD_DIR must name the build tree"
#endif
#ifndef ONICC_LINK_EXTRA
#error "ONICC_LINK_EXTRA must give the link flags a sanitized build adds (or be empty)"
#endif
#ifndef ONICC_SOURCE_DIR
#error "ONICC_SOURCE_DIR must name the source tree"
#endif

static int onicc_links(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-E") == 0 ||
            strcmp(argv[i], "-S") == 0 || strcmp(argv[i], "-M") == 0 ||
            strcmp(argv[i], "-MM") == 0)
            return 0;
    return 1;
}

/* The directory onicc runs from, without a trailing slash. */
static int onicc_self_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    char *slash;

    if (n <= 0)
        return -1;
    dir[n] = '\0';
    if ((slash = strrchr(dir, '/')) == NULL)
        return -1;
    *slash = '\0';
    return 0;
}

/* Print an argument so that a shell would read it back the same. */
static void onicc_print_arg(const char *a)
{
    if (*a != '\0' && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789-_=+./,:@%") == strlen(a)) {
        fputs(a, stdout);
        return;
    }
    putchar('\'');
    for (; *a != '\0'; a++) {
        if (*a == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*a);
    }
    putchar('\'');
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], build[PATH_MAX], inc[PATH_MAX + 16], lib[PATH_MAX + 16],
        libflag[PATH_MAX + 32], rpath[PATH_MAX + 48];
    const char *cc = getenv("ONICC_CC");
    char **args;
    int show = 0, n = 0;

    if (cc == NULL || *cc == '\0')
        cc = "cc";
    if (onicc_self_dir(self, sizeof(self)) != 0) {
        fprintf(stderr, "onicc: cannot find where onicc is (/proc/self/exe): is /proc mounted?\n");
        return 1;
    }
    if (realpath(ONICC_BUILD_DIR, build) != NULL && strcmp(self, build) == 0) {
        snprintf(inc, sizeof(inc), "-I%s/include", ONICC_SOURCE_DIR);
        snprintf(lib, sizeof(lib), "%s", build);
    } else {
        char *slash = strrchr(self, '/'); /* PREFIX/bin -> PREFIX */
        if (slash != NULL)
            *slash = '\0';
        snprintf(inc, sizeof(inc), "-I%s/include", self);
        snprintf(lib, sizeof(lib), "%s/lib", self);
    }
    snprintf(libflag, sizeof(libflag), "-L%s", lib);
    snprintf(rpath, sizeof(rpath), "-Wl,-rpath,%s", lib);
    if ((args = calloc((size_t)argc + 8, sizeof(*args))) == NULL) {
        fprintf(stderr, "onicc: out of memory\n");
        return 1;
    }
    args[n++] = (char *)cc;
    args[n++] = inc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-show") == 0) {
            show = 1;
            continue;
        }
        args[n++] = argv[i];
    }
    if (onicc_links(argc, argv)) {
        if (ONICC_LINK_EXTRA[0] != '\0')
            args[n++] = ONICC_LINK_EXTRA;
        args[n++] = libflag;
        args[n++] = rpath;
        args[n++] = "-lonic";
        args[n++] = "-lpthread";
        args[n++] = "-lrt";
    }
    args[n] = NULL;
    if (show) {
        for (int i = 0; i < n; i++) {
            if (i > 0)
                putchar(' ');
            onicc_print_arg(args[i]);
        }
        putchar('\n');
        free(args);
        return 0;
    }
    execvp(cc, args);
    fprintf(stderr, "onicc: cannot run the compiler '%s': ", cc);
    perror(NULL);
    fprintf(stderr, "onicc: set ONICC_CC to the C compiler to use\n");
    free(args);
    return 127;
}
