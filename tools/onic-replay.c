/* onic-replay: replay match traces (ONIC_TRACE=DIR) through onic's engines,
 * measured here, and through timing models of the papers' NIC hardware:
 * the embedded processor walking a list, the ALPU, the PIM NIC. Prints per
 * lookup cost distributions and totals; --plot draws matching time against
 * queue length, the papers' figures. See docs/replay.md. */
#include "replay/replay.h"
#include "base/clock.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "usage: %s [options] TRACE|DIR...\n"
            "replays match traces (written under ONIC_TRACE=DIR; a DIR means every *.trace\n"
            "in it) through onic's engines, timed on this machine, and the papers' NIC models\n"
            "  --params FILE     model parameters (default: the built-in values of\n"
            "                    tools/replay/nic.conf; --print-params shows them)\n"
            "  --print-params    print the parameters in the file's format and exit\n"
            "  --no-measure      do not replay through the real engines\n"
            "  --queues LIST     only these queue kinds: posted,unexpected,overflow,other\n"
            "  --depth           print the queue-depth histogram of the lookups\n"
            "  --csv FILE        matching time against queue length, as CSV\n"
            "  --plot PNG        the same as a figure (python3 with matplotlib)\n"
            "  --json FILE       the totals, the models' and engines' figures and the\n"
            "                    depth histogram, as JSON (bench/replay/programs.py)\n"
            "  --quiet           totals only, no per-file lines\n",
            argv0);
}

typedef struct files {
    char  **paths;
    size_t  n, cap;
} files_t;

static int files_add(files_t *f, const char *path)
{
    if (f->n == f->cap) {
        size_t ncap = f->cap == 0 ? 16 : 2 * f->cap;
        char **p = realloc(f->paths, ncap * sizeof(*p));
        if (p == NULL)
            return -1;
        f->paths = p;
        f->cap = ncap;
    }
    f->paths[f->n] = strdup(path);
    if (f->paths[f->n] == NULL)
        return -1;
    f->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every *.trace in a directory (sorted). */
static int files_collect(files_t *f, const char *arg)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    size_t first = f->n;

    if (stat(arg, &st) != 0) {
        fprintf(stderr, "onic-replay: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return files_add(f, arg);
    d = opendir(arg);
    if (d == NULL) {
        fprintf(stderr, "onic-replay: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        char path[4096];
        if (len < 6 || strcmp(de->d_name + len - 6, ".trace") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", arg, de->d_name);
        if (files_add(f, path) != 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (f->n == first) {
        fprintf(stderr, "onic-replay: no *.trace file in %s\n", arg);
        return -1;
    }
    qsort(f->paths + first, f->n - first, sizeof(*f->paths), cmp_str);
    return 0;
}

static int parse_kinds(const char *s, unsigned *kinds_p)
{
    unsigned kinds = 0;
    char buf[128], *tok, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int k;
        for (k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
            if (strcmp(tok, onic_trace_queue_names[k]) == 0)
                break;
        if (k == ONIC_TRACE_QUEUE_KINDS) {
            fprintf(stderr, "onic-replay: unknown queue kind \"%s\" in --queues; use posted, "
                    "unexpected, overflow or other\n", tok);
            return -1;
        }
        kinds |= 1u << k;
    }
    *kinds_p = kinds;
    return 0;
}

static void print_total(const char *what, const char *name, replay_total_t *t, int timed)
{
    double n = t->lookups > 0 ? (double)t->lookups : 1;

    printf("  %-5s %-5s %10llu %10.2f", what, name, (unsigned long long)t->lookups,
           (double)t->inspected / n);
    if (timed)
        printf(" %9.1f %9.1f %9.1f %10.1f %12.1f %12.1f\n", t->lookup_ns / n,
               replay_total_percentile(t, 0.5), replay_total_percentile(t, 0.99),
               replay_total_percentile(t, 1.0), t->lookup_ns / 1e3, t->other_ns / 1e3);
    else
        printf(" %9s %9s %9s %10s %12s %12s\n", "-", "-", "-", "-", "-", "-");
}

/* The depth histogram's rows: lengths 0, 1, 2-3, 4-7 ... (the last, from
 * REPLAY_LEN_MAX on), each with its lookups per queue kind; rows without a
 * lookup are left out. Returns the number of rows. */
#define DEPTH_ROWS 16
_Static_assert(REPLAY_LEN_MAX <= 1 << (DEPTH_ROWS - 2), "a row for 0, then one per power of two");
typedef struct depth_row {
    char     label[32];
    uint64_t count[ONIC_TRACE_QUEUE_KINDS];
} depth_row_t;

static size_t depth_rows(const replay_result_t *res, depth_row_t rows[DEPTH_ROWS])
{
    size_t n = 0;

    for (size_t lo = 0; lo <= REPLAY_LEN_MAX && n < DEPTH_ROWS; lo = lo == 0 ? 1 : 2 * lo) {
        size_t hi = lo == 0 ? 0 : 2 * lo - 1;
        depth_row_t *r = &rows[n];
        uint64_t any = 0;
        memset(r, 0, sizeof(*r));
        for (size_t l = lo; l <= hi && l <= REPLAY_LEN_MAX; l++)
            for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
                r->count[k] += res->depth[k][l], any += res->depth[k][l];
        if (any == 0)
            continue;
        if (lo == REPLAY_LEN_MAX)
            snprintf(r->label, sizeof(r->label), ">=%zu", lo);
        else if (lo == hi)
            snprintf(r->label, sizeof(r->label), "%zu", lo);
        else
            snprintf(r->label, sizeof(r->label), "%zu-%zu", lo, hi);
        n++;
    }
    return n;
}

static void print_depth(const replay_result_t *res)
{
    depth_row_t rows[DEPTH_ROWS];
    size_t n = depth_rows(res, rows);

    printf("\nqueue depth at lookups (entries queued when a lookup began)\n");
    printf("  %-11s", "length");
    for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
        printf(" %11s", onic_trace_queue_names[k]);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        printf("  %-11s", rows[i].label);
        for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
            printf(" %11llu", (unsigned long long)rows[i].count[k]);
        printf("\n");
    }
}

static void json_total(FILE *f, const char *name, replay_total_t *t, int timed, int last)
{
    double n = t->lookups > 0 ? (double)t->lookups : 1;

    fprintf(f, "    {\"name\": \"%s\", \"lookups\": %llu, \"inspected\": %.4f", name,
            (unsigned long long)t->lookups, (double)t->inspected / n);
    if (timed)
        fprintf(f, ", \"mean_ns\": %.3f, \"p50_ns\": %.3f, \"p99_ns\": %.3f, \"max_ns\": %.3f, "
                "\"lookups_us\": %.3f, \"other_us\": %.3f", t->lookup_ns / n,
                replay_total_percentile(t, 0.5), replay_total_percentile(t, 0.99),
                replay_total_percentile(t, 1.0), t->lookup_ns / 1e3, t->other_ns / 1e3);
    fprintf(f, "}%s\n", last ? "" : ",");
}

/* What the text shows, for programs (bench/replay/programs.py): the names
 * are onic's own (engines, models, queue kinds), so nothing needs quoting. */
static int write_json(replay_result_t *res, const char *path, int measured)
{
    FILE *f = fopen(path, "w");
    depth_row_t rows[DEPTH_ROWS];
    size_t n = depth_rows(res, rows);
    double base = res->model[REPLAY_MODEL_NIC].lookup_ns;
    int bad;

    if (f == NULL) {
        fprintf(stderr, "onic-replay: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"files\": %llu, \"queues\": %llu, \"records\": %llu, "
            "\"longest_queue\": %llu,\n  \"models\": [\n", (unsigned long long)res->files,
            (unsigned long long)res->queues, (unsigned long long)res->records,
            (unsigned long long)res->max_len);
    for (int m = 0; m < REPLAY_MODELS; m++)
        json_total(f, replay_model_names[m], &res->model[m], m != REPLAY_MODEL_LIST,
                   m == REPLAY_MODELS - 1);
    fprintf(f, "  ],\n  \"engines\": [\n");
    for (int e = 0; measured && e < REPLAY_ENGINES; e++)
        json_total(f, replay_engine_names[e], &res->engine[e], 1, e == REPLAY_ENGINES - 1);
    fprintf(f, "  ],\n  \"against_nic\": ");
    if (base > 0)
        fprintf(f, "{\"alpu\": %.4f, \"pim\": %.4f}", res->model[REPLAY_MODEL_ALPU].lookup_ns / base,
                res->model[REPLAY_MODEL_PIM].lookup_ns / base);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"depth_kinds\": [");
    for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
        fprintf(f, "%s\"%s\"", k ? ", " : "", onic_trace_queue_names[k]);
    fprintf(f, "],\n  \"depth\": [\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "    {\"length\": \"%s\", \"lookups\": [", rows[i].label);
        for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
            fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)rows[i].count[k]);
        fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "onic-replay: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static int write_csv(const replay_result_t *res, const char *path, int measured)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        fprintf(stderr, "onic-replay: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "length,lookups");
    for (int m = 1; m < REPLAY_MODELS; m++)
        fprintf(f, ",model_%s_ns", replay_model_names[m]);
    if (measured)
        for (int e = 0; e < REPLAY_ENGINES; e++)
            fprintf(f, ",engine_%s_ns", replay_engine_names[e]);
    fprintf(f, "\n");
    for (size_t l = 0; l <= REPLAY_LEN_MAX; l++) {
        uint64_t n = 0;
        for (int k = 0; k < ONIC_TRACE_QUEUE_KINDS; k++)
            n += res->depth[k][l];
        if (n == 0)
            continue;
        fprintf(f, "%zu,%llu", l, (unsigned long long)n);
        for (int m = 1; m < REPLAY_MODELS; m++)
            fprintf(f, ",%.2f", res->len_ns[m][l] / (double)n);
        if (measured)
            for (int e = 0; e < REPLAY_ENGINES; e++)
                fprintf(f, ",%.2f", res->len_engine_ns[e][l] / (double)n);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "onic-replay: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    replay_opts_t opts;
    replay_result_t *res;
    files_t files = {NULL, 0, 0};
    const char *csv = NULL, *plot = NULL, *json = NULL;
    int depth = 0, quiet = 0, damaged = 0;
    uint64_t t0, ops = 0;
    double secs;
    char err[256];

    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;
    opts.keep_samples = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else if (strcmp(a, "--params") == 0 && more) {
            if (replay_params_load(argv[++i], &opts.params, err, sizeof(err)) != 0) {
                fprintf(stderr, "onic-replay: %s\n", err);
                return 2;
            }
        } else if (strcmp(a, "--print-params") == 0) {
            replay_params_print(&opts.params, stdout);
            return 0;
        } else if (strcmp(a, "--no-measure") == 0) {
            opts.measure = 0;
        } else if (strcmp(a, "--queues") == 0 && more) {
            if (parse_kinds(argv[++i], &opts.kinds) != 0)
                return 2;
        } else if (strcmp(a, "--depth") == 0) {
            depth = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--csv") == 0 && more) {
            csv = argv[++i];
        } else if (strcmp(a, "--plot") == 0 && more) {
            plot = argv[++i];
        } else if (strcmp(a, "--json") == 0 && more) {
            json = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "onic-replay: unknown option or missing value: %s\n", a);
            usage(stderr, argv[0]);
            return 2;
        } else if (files_collect(&files, a) != 0) {
            return 2;
        }
    }
    if (files.n == 0) {
        usage(stderr, argv[0]);
        return 2;
    }
    res = replay_result_new();
    if (res == NULL) {
        fprintf(stderr, "onic-replay: out of memory\n");
        return 1;
    }
    t0 = onic_time_ns();
    for (size_t i = 0; i < files.n; i++) {
        onic_trace_t t;
        onic_status_t status = onic_trace_read(files.paths[i], &t, err, sizeof(err));
        if (status != ONIC_OK) {
            fprintf(stderr, "onic-replay: %s: %s\n", files.paths[i], err);
            damaged = 1;
            continue;
        }
        if (!quiet)
            printf("%s: rank %u of %u, job %s, pid %u, engine %s, %zu records\n", files.paths[i],
                   t.hdr.rank, t.hdr.size, t.hdr.job[0] ? t.hdr.job : "-", t.hdr.pid,
                   t.hdr.engine, t.nrecs);
        if (t.damaged) {
            fprintf(stderr, "onic-replay: %s: %s; the %zu records before it are replayed\n",
                    files.paths[i], t.error, t.nrecs);
            damaged = 1;
        }
        if (replay_trace(&t, &opts, res, NULL) != 0 && !res->inconsistent) {
            fprintf(stderr, "onic-replay: %s: out of memory while replaying\n", files.paths[i]);
            damaged = 1;
        }
        ops += t.nrecs;
        onic_trace_free(&t);
    }
    secs = (onic_time_ns() - t0) / 1e9;
    if (res->inconsistent) {
        fprintf(stderr, "onic-replay: %s\n", res->error);
        damaged = 1;
    }
    printf("\n%llu files, %llu queues, %llu records replayed in %.3f s (%.0f records/s%s), "
           "longest queue %llu\n", (unsigned long long)res->files,
           (unsigned long long)res->queues, (unsigned long long)res->records, secs,
           secs > 0 ? (double)ops / secs : 0.0, opts.measure ? ", engines measured" : "",
           (unsigned long long)res->max_len);
    printf("\nper lookup (match and peek): models of the papers' NICs, and onic's engines "
           "timed here\n");
    printf("  %-11s %10s %10s %9s %9s %9s %10s %12s %12s\n", "", "lookups", "inspected",
           "mean ns", "p50 ns", "p99 ns", "max ns", "lookups us", "other us");
    for (int m = 0; m < REPLAY_MODELS; m++)
        print_total("model", replay_model_names[m], &res->model[m], m != REPLAY_MODEL_LIST);
    if (opts.measure)
        for (int e = 0; e < REPLAY_ENGINES; e++)
            print_total("onic", replay_engine_names[e], &res->engine[e], 1);
    if (res->model[REPLAY_MODEL_NIC].lookup_ns > 0) {
        double base = res->model[REPLAY_MODEL_NIC].lookup_ns;
        printf("\nlookup time against the NIC processor's list walk: alpu %.3fx, pim %.3fx "
               "(below 1 saves)\n", res->model[REPLAY_MODEL_ALPU].lookup_ns / base,
               res->model[REPLAY_MODEL_PIM].lookup_ns / base);
    }
    if (depth)
        print_depth(res);
    if (json != NULL && write_json(res, json, opts.measure) != 0)
        damaged = 1;
    if ((csv != NULL || plot != NULL)) {
        char tmp[64];
        const char *path = csv;
        if (path == NULL) {
            snprintf(tmp, sizeof(tmp), "/tmp/onic-replay-%d.csv", (int)getpid());
            path = tmp;
        }
        if (write_csv(res, path, opts.measure) != 0) {
            damaged = 1;
        } else if (plot != NULL) {
            /* Debian's python3, where python3-matplotlib installs, if there. */
            const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
            char cmd[8192];
            snprintf(cmd, sizeof(cmd), "%s '%s' '%s' '%s'", py, ONIC_REPLAY_PLOT, path, plot);
            if (system(cmd) != 0) {
                fprintf(stderr, "onic-replay: the plot failed (%s); is python3-matplotlib "
                        "installed?\n", ONIC_REPLAY_PLOT);
                damaged = 1;
            }
            if (csv == NULL)
                unlink(path);
        }
    }
    replay_result_free(res);
    for (size_t i = 0; i < files.n; i++)
        free(files.paths[i]);
    free(files.paths);
    return damaged ? 1 : 0;
}
