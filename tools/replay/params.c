/* The models' parameters: one table of name, default, range and where the
 * number comes from, read from and printed as `name = value` lines. The
 * default file is tools/replay/nic.conf (the same numbers, with comments);
 * `onic-replay --params FILE` reads another. */
#include "replay.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct param_def {
    const char *name;
    size_t      offset;
    double      dflt, min, max;
    const char *doc;
} param_def_t;

#define P(_f) offsetof(replay_params_t, _f)

static const param_def_t params[] = {
    {"nic_mhz", P(nic_mhz), 500, 1, 1e6,
     "NIC processor clock (paper 000 table III: 500 MHz, a PowerPC 440)"},
    {"bus_ns", P(bus_ns), 20, 0, 1e6,
     "one access over the NIC's bus (paper 000 section V.B, paper 002 section V.C: 20 ns)"},
    {"op_cycles", P(op_cycles), 0, 0, 1e9,
     "processor cycles per lookup besides the walk (0: matching cost only)"},
    {"entry_cycles", P(entry_cycles), 7.5, 0, 1e9,
     "cycles per entry inspected in cache (paper 000 fig. 5: 15 ns per entry at 500 MHz)"},
    {"miss_cycles", P(miss_cycles), 24.5, 0, 1e9,
     "more cycles per entry out of cache (fig. 5: 64 ns per entry out of cache, less the 15; "
     "table III's memory takes 30-32 cycles, partly hidden by the out-of-order core)"},
    {"cache_bytes", P(cache_bytes), 32768, 0, 1e12,
     "the NIC processor's data cache (table III: 32 KB, 64-way; no L2)"},
    {"entry_bytes", P(entry_bytes), 128, 1, 1e9,
     "cache footprint of one queue entry (chosen so a 400-entry walk takes fig. 5's 13 us)"},
    {"append_cycles", P(append_cycles), 20, 0, 1e9,
     "cycles to link an entry at the tail of the processor's list"},
    {"alpu_cells", P(alpu_cells), 256, 1, 1 << 24,
     "ALPU cells (paper 000 evaluates 128 and 256)"},
    {"alpu_block", P(alpu_block), 16, 1, 1 << 24,
     "ALPU cells per block (tables IV, V: 8, 16 or 32); checked against alpu_cells, and it "
     "sets the match's 6 or 7 cycles in the paper: set alpu_match_cycles to match"},
    {"alpu_threshold", P(alpu_threshold), 5, 0, 1e9,
     "queue length above which the processor loads the ALPU (section VI.B: break-even at 5)"},
    {"alpu_mhz", P(alpu_mhz), 500, 1, 1e6,
     "ALPU clock (section VI.A: about 500 MHz as an ASIC)"},
    {"alpu_match_cycles", P(alpu_match_cycles), 7, 1, 1e9,
     "ALPU cycles per match request (section III: 6 or 7; simulated with 7, no overlap)"},
    {"alpu_insert_cycles", P(alpu_insert_cycles), 2, 1, 1e9,
     "ALPU cycles per INSERT (section III: an insert every other cycle)"},
    {"alpu_handle_cycles", P(alpu_handle_cycles), 23, 0, 1e9,
     "processor cycles to act on one ALPU result (makes the 80 ns ALPU penalty of sec. VI.B: "
     "20 ns bus + 14 ns match + 46 ns)"},
    {"pim_mhz", P(pim_mhz), 500, 1, 1e6,
     "PIM clock (paper 002 table I: the NIC's 500 MHz technology)"},
    {"pim_mem_cycles", P(pim_mem_cycles), 31, 0, 1e9,
     "one 256-bit memory access of the PIM (table I: 30-32 cycles)"},
    {"pim_block_entries", P(pim_block_entries), 16, 1, 1e6,
     "list items interleaved per block (fig. 3(b): 16)"},
    {"pim_block_loads", P(pim_block_loads), 3, 1, 1e6,
     "wide loads to compare one block (section IV.C: three accesses for sixteen items)"},
    {"pim_block_cycles", P(pim_block_cycles), 6, 0, 1e9,
     "single-issue cycles to compare, AND and branch per block (section V.B's six AltiVec ops)"},
    {"pim_op_cycles", P(pim_op_cycles), 0, 0, 1e9,
     "PIM cycles per lookup besides the blocks (0: matching cost only)"},
};

#define NPARAMS (sizeof(params) / sizeof(params[0]))

static double *param_field(replay_params_t *p, const param_def_t *d)
{
    return (double *)((char *)p + d->offset);
}

void replay_params_defaults(replay_params_t *p)
{
    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < NPARAMS; i++)
        *param_field(p, &params[i]) = params[i].dflt;
}

void replay_params_print(const replay_params_t *p, FILE *out)
{
    fprintf(out, "# onic-replay model parameters: name = value; '#' starts a comment.\n");
    for (size_t i = 0; i < NPARAMS; i++)
        fprintf(out, "# %s\n%s = %.10g\n", params[i].doc, params[i].name,
                *param_field((replay_params_t *)p, &params[i]));
}

int replay_params_load(const char *path, replay_params_t *p, char *err, size_t errlen)
{
    replay_params_t np = *p;
    char line[512];
    unsigned lineno = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        snprintf(err, errlen, "cannot open parameter file %s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *s = line, *name, *eq, *end;
        const param_def_t *d = NULL;
        double v;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line longer than %zu characters", path, lineno,
                     sizeof(line) - 2);
            goto err_close;
        }
        if ((end = strchr(s, '#')) != NULL)
            *end = '\0';
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0')
            continue;
        eq = strchr(s, '=');
        if (eq == NULL) {
            snprintf(err, errlen, "%s:%u: expected `name = value`", path, lineno);
            goto err_close;
        }
        name = s;
        end = eq;
        while (end > name && isspace((unsigned char)end[-1]))
            end--;
        *end = '\0';
        for (size_t i = 0; i < NPARAMS && d == NULL; i++)
            if (strcmp(params[i].name, name) == 0)
                d = &params[i];
        if (d == NULL) {
            snprintf(err, errlen, "%s:%u: unknown parameter \"%s\" (onic-replay --print-params "
                     "lists them)", path, lineno, name);
            goto err_close;
        }
        errno = 0;
        v = strtod(eq + 1, &end);
        while (isspace((unsigned char)*end))
            end++;
        if (end == eq + 1 || *end != '\0' || errno != 0 || !(v >= d->min && v <= d->max)) {
            snprintf(err, errlen, "%s:%u: invalid %s: expected a number from %g to %g", path,
                     lineno, d->name, d->min, d->max);
            goto err_close;
        }
        *param_field(&np, d) = v;
    }
    fclose(f);
    if (np.alpu_block > np.alpu_cells) {
        snprintf(err, errlen, "%s: alpu_block %g exceeds alpu_cells %g", path, np.alpu_block,
                 np.alpu_cells);
        return -1;
    }
    *p = np;
    return 0;

err_close:
    fclose(f);
    return -1;
}
