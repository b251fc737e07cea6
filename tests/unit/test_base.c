/* src/base: status strings, the config registry, the pool, allocation
 * failure injection. */
#include "check.h"
#include "base/config.h"
#include "base/copy.h"
#include "base/cpu.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/pool.h"
#include "base/proc.h"
#include "base/slots.h"

#include <malloc.h> /* malloc_usable_size */
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_status(void)
{
    for (int s = ONIC_INPROGRESS; s > ONIC_ERR_LAST; s--) {
        const char *str = onic_status_str((onic_status_t)s);
        CHECK(str != NULL && strcmp(str, "unknown status") != 0);
        for (int t = s - 1; t > ONIC_ERR_LAST; t--)
            CHECK(strcmp(str, onic_status_str((onic_status_t)t)) != 0);
    }
    CHECK(strcmp(onic_status_str((onic_status_t)-1000), "unknown status") == 0);
}

static const onic_config_var_t *var_named(const char *name)
{
    size_t n;
    const onic_config_var_t *vars = onic_config_vars(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(vars[i].name, name) == 0)
            return &vars[i];
    return NULL;
}

static void test_config_table(void)
{
    size_t n;
    const onic_config_var_t *vars = onic_config_vars(&n);
    char err[256];

    CHECK(n >= 8);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        CHECK(strncmp(vars[i].name, "ONIC_", 5) == 0);
        CHECK(vars[i].desc != NULL && vars[i].desc[0] != '\0');
        char tok[ONIC_CONFIG_PATH_MAX + 1];
        int text = vars[i].type == ONIC_CONFIG_TOKEN || vars[i].type == ONIC_CONFIG_STRING ||
                   vars[i].type == ONIC_CONFIG_PATH;
        if (vars[i].dflt[0] == '\0') /* only tokens and strings may default to nothing */
            CHECK(text);
        else
            CHECK(onic_config_parse(&vars[i], vars[i].dflt, text ? (void *)tok : (void *)&v,
                                    err, sizeof(err)) == ONIC_OK);
        for (size_t j = i + 1; j < n; j++)
            CHECK(strcmp(vars[i].name, vars[j].name) != 0);
    }
}

static void test_config_parse(void)
{
    const onic_config_var_t *cells = var_named("ONIC_ALPU_CELLS");
    const onic_config_var_t *thr = var_named("ONIC_ALPU_THRESHOLD");
    const onic_config_var_t *match = var_named("ONIC_MATCH");
    char err[256];
    unsigned v = 12345;

    CHECK(cells != NULL && thr != NULL && match != NULL);
    CHECK(onic_config_parse(cells, "128", &v, err, sizeof(err)) == ONIC_OK && v == 128);
    v = 7;
    CHECK(onic_config_parse(cells, "100", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(v == 7); /* untouched on error */
    CHECK(strstr(err, "ONIC_ALPU_CELLS") != NULL && strstr(err, "power of two") != NULL);
    CHECK(onic_config_parse(cells, "1048576", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(thr, "-1", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(thr, "5x", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(thr, "", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(thr, "99999999999999999999", &v, err, sizeof(err)) ==
          ONIC_ERR_INVALID_PARAM);
    {
        /* A value is quoted whole up to 80 characters, cut with "..." past. */
        char longv[82];
        memset(longv, '9', 81);
        longv[80] = '\0';
        CHECK(onic_config_parse(thr, longv, &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
        CHECK(strstr(err, longv) != NULL && strstr(err, "...") == NULL);
        longv[80] = '9';
        longv[81] = '\0';
        CHECK(onic_config_parse(thr, longv, &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
        CHECK(strstr(err, longv) == NULL && strstr(err, "...\"") != NULL);
    }
    CHECK(onic_config_parse(thr, "0", &v, err, sizeof(err)) == ONIC_OK && v == 0);
    CHECK(onic_config_parse(thr, "9", &v, err, sizeof(err)) == ONIC_OK && v == 9);
    CHECK(onic_config_parse(thr, "1000000", &v, err, sizeof(err)) == ONIC_OK && v == 1000000);
    /* A plain number's range, with no word beside it. */
    CHECK(onic_config_parse(thr, "1000001", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "expected an integer from 0 to 1000000") != NULL);
    CHECK(strstr(err, " or ") == NULL);
    CHECK(onic_config_parse(match, "wide", &v, err, sizeof(err)) == ONIC_OK);
    CHECK(strcmp(onic_config_match_engines[v], "wide") == 0);
    CHECK(onic_config_parse(match, "Hash", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_MATCH") != NULL && strstr(err, "hash|list|alpu|wide") != NULL);
    /* A number or its one word. */
    const onic_config_var_t *core = var_named("ONIC_ONLOAD_CORE");
    CHECK(onic_config_var_find("ONIC_ONLOAD_CORE") == core);
    CHECK(onic_config_var_find("ONIC_NO_SUCH") == NULL);
    CHECK(onic_config_parse(core, "last", &v, err, sizeof(err)) == ONIC_OK && v == ONIC_CONFIG_LAST);
    CHECK(onic_config_parse(core, "3", &v, err, sizeof(err)) == ONIC_OK && v == 3);
    CHECK(onic_config_parse(core, "first", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_ONLOAD_CORE") != NULL && strstr(err, "or last") != NULL);
    CHECK(onic_config_parse(core, "4096", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    {
        onic_config_t cfg;
        char buf[32];
        onic_config_defaults(&cfg);
        onic_config_format(core, &cfg, buf, sizeof(buf));
        CHECK(strcmp(buf, "last") == 0);
        cfg.onload_core = 1;
        onic_config_format(core, &cfg, buf, sizeof(buf));
        CHECK(strcmp(buf, "1") == 0);
    }
}

/* ONIC_SHM_RING_SLOTS and ONIC_SHM_BOUNCE_CHUNK: a power of two or auto,
 * and what auto comes to as a node fills. */
static void test_config_shm_auto(void)
{
    const onic_config_var_t *slots = var_named("ONIC_SHM_RING_SLOTS");
    const onic_config_var_t *chunk = var_named("ONIC_SHM_BOUNCE_CHUNK");
    const onic_config_var_t *cells = var_named("ONIC_ALPU_CELLS");
    onic_config_t cfg;
    char err[256], buf[32];
    unsigned v = 0;

    CHECK(onic_config_parse(slots, "auto", &v, err, sizeof(err)) == ONIC_OK && v == ONIC_CONFIG_LAST);
    CHECK(onic_config_parse(slots, "512", &v, err, sizeof(err)) == ONIC_OK && v == 512);
    CHECK(onic_config_parse(slots, "500", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_SHM_RING_SLOTS") != NULL && strstr(err, "power of two") != NULL &&
          strstr(err, "or auto") != NULL);
    CHECK(onic_config_parse(slots, "Auto", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(chunk, "auto", &v, err, sizeof(err)) == ONIC_OK && v == ONIC_CONFIG_LAST);
    CHECK(onic_config_parse(chunk, "2048", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    /* A power of two without a word takes none. */
    CHECK(onic_config_parse(cells, "auto", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "or auto") == NULL);

    onic_config_defaults(&cfg);
    onic_config_format(slots, &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "auto") == 0);
    onic_config_format(chunk, &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "auto") == 0);
    /* Lanes: 4096 slots while a process's rings take at most 4 MiB. */
    CHECK(onic_config_shm_ring_slots(&cfg, 1) == 4096);
    CHECK(onic_config_shm_ring_slots(&cfg, 2) == 4096);
    CHECK(onic_config_shm_ring_slots(&cfg, 16) == 4096);
    CHECK(onic_config_shm_ring_slots(&cfg, 17) == 2048);
    CHECK(onic_config_shm_ring_slots(&cfg, 32) == 2048);
    CHECK(onic_config_shm_ring_slots(&cfg, 33) == 1024);
    CHECK(onic_config_shm_ring_slots(&cfg, 64) == 1024);
    CHECK(onic_config_shm_ring_slots(&cfg, 128) == 512);
    CHECK(onic_config_shm_ring_slots(&cfg, 256) == 256);
    CHECK(onic_config_shm_ring_slots(&cfg, 4096) == 256);
    /* What one process's lanes hold together on a node of at most n: the
     * peak before a halving counts (16 x 4096 beside 20 x 2048). */
    CHECK(onic_config_shm_ring_most(&cfg, 1) == 4096);
    CHECK(onic_config_shm_ring_most(&cfg, 2) == 8192);
    CHECK(onic_config_shm_ring_most(&cfg, 16) == 65536);
    CHECK(onic_config_shm_ring_most(&cfg, 20) == 65536);
    CHECK(onic_config_shm_ring_most(&cfg, 40) == 65536);
    CHECK(onic_config_shm_ring_most(&cfg, 100) == 65536);
    CHECK(onic_config_shm_ring_most(&cfg, 1000) == 256000);
    /* Bounce buffers of 4 chunks: 64 KiB chunks while they take 2 MiB. */
    CHECK(cfg.shm_bounce_chunks == 4);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 2) == 65536);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 8) == 65536);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 9) == 32768);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 64) == 8192);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 4096) == 4096);
    cfg.shm_bounce_chunks = 2;
    CHECK(onic_config_shm_bounce_chunk(&cfg, 64) == 16384);
    /* A value set is kept whatever the node. */
    cfg.shm_ring_slots = 8;
    cfg.shm_bounce_chunk = 1u << 20;
    CHECK(onic_config_shm_ring_slots(&cfg, 2) == 8 && onic_config_shm_ring_slots(&cfg, 4096) == 8);
    CHECK(onic_config_shm_bounce_chunk(&cfg, 4096) == 1u << 20);
    CHECK(onic_config_shm_ring_most(&cfg, 10) == 80);
    onic_config_format(slots, &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "8") == 0);
}

/* ONIC_EAGER_CREDITS: a number or auto, and what auto comes to as a job
 * grows: 256 shares while a process's unexpected space stays within 4 MiB,
 * never below 64. */
static void test_config_credits_auto(void)
{
    const onic_config_var_t *credits = var_named("ONIC_EAGER_CREDITS");
    onic_config_t cfg;
    char err[256], buf[32];
    unsigned v = 0;

    CHECK(onic_config_parse(credits, "auto", &v, err, sizeof(err)) == ONIC_OK &&
          v == ONIC_CONFIG_LAST);
    CHECK(onic_config_parse(credits, "100", &v, err, sizeof(err)) == ONIC_OK && v == 100);
    CHECK(onic_config_parse(credits, "0", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_EAGER_CREDITS") != NULL && strstr(err, "or auto") != NULL);
    onic_config_defaults(&cfg);
    onic_config_format(credits, &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "auto") == 0);
    CHECK(onic_config_eager_credits(&cfg, 1) == 256);
    CHECK(onic_config_eager_credits(&cfg, 2) == 256);
    CHECK(onic_config_eager_credits(&cfg, 8) == 256);
    CHECK(onic_config_eager_credits(&cfg, 9) == 128);
    CHECK(onic_config_eager_credits(&cfg, 16) == 128);
    CHECK(onic_config_eager_credits(&cfg, 17) == 64);
    CHECK(onic_config_eager_credits(&cfg, 4096) == 64);
    cfg.eager_credits = 3; /* a value set is kept whatever the job */
    CHECK(onic_config_eager_credits(&cfg, 2) == 3 && onic_config_eager_credits(&cfg, 4096) == 3);
}

/* ONIC_WAIT: sleep or spin as asked; on auto, sleep only when the node's
 * processes outnumber its cores. */
static void test_config_wait(void)
{
    onic_config_t cfg;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    onic_config_defaults(&cfg);
    CHECK(cfg.wait == ONIC_WAIT_AUTO);
    REQUIRE(cpus > 0);
    if (cpus <= 0)
        return;
    CHECK(onic_config_wait_sleeps(&cfg, 1) == 0);
    CHECK(onic_config_wait_sleeps(&cfg, (unsigned)cpus) == 0);
    CHECK(onic_config_wait_sleeps(&cfg, (unsigned)cpus + 1) == 1);
    cfg.wait = ONIC_WAIT_SPIN;
    CHECK(onic_config_wait_sleeps(&cfg, (unsigned)cpus + 1) == 0);
    cfg.wait = ONIC_WAIT_SLEEP;
    CHECK(onic_config_wait_sleeps(&cfg, 1) == 1);
}

static void test_config_token(void)
{
    const onic_config_var_t *job = var_named("ONIC_JOBID");
    char tok[ONIC_CONFIG_TOKEN_MAX + 1] = "keep";
    char err[256];
    onic_config_t cfg;

    CHECK(job != NULL && job->type == ONIC_CONFIG_TOKEN);
    CHECK(onic_config_parse(job, "0123abcdef", tok, err, sizeof(err)) == ONIC_OK);
    CHECK(strcmp(tok, "0123abcdef") == 0);
    CHECK(onic_config_parse(job, "", tok, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(job, "../etc", tok, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(job, "ABC", tok, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(job, "0123456789abcdef0123456789abcdef0", tok, err, sizeof(err)) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(strcmp(tok, "0123abcdef") == 0);
    CHECK(strstr(err, "ONIC_JOBID") != NULL && strstr(err, "hex") != NULL);
    /* A shorter token over a longer one ends where it ends. */
    CHECK(onic_config_parse(job, "ab", tok, err, sizeof(err)) == ONIC_OK && strcmp(tok, "ab") == 0);

    onic_config_defaults(&cfg);
    CHECK(cfg.jobid[0] == '\0' && cfg.rank == 0 && cfg.size == 1);
    setenv("ONIC_JOBID", "00ff", 1);
    setenv("ONIC_RANK", "3", 1);
    setenv("ONIC_SIZE", "4", 1);
    CHECK(onic_config_read(&cfg) == ONIC_OK);
    CHECK(strcmp(cfg.jobid, "00ff") == 0 && cfg.rank == 3 && cfg.size == 4);
    setenv("ONIC_RANK", "4", 1); /* a rank must be inside the job */
    fprintf(stderr, "(an error about ONIC_RANK is expected next)\n");
    CHECK(onic_config_read(&cfg) == ONIC_ERR_INVALID_PARAM);
    unsetenv("ONIC_JOBID");
    unsetenv("ONIC_RANK");
    unsetenv("ONIC_SIZE");
}

static void test_config_string(void)
{
    const onic_config_var_t *prov = var_named("ONIC_OFI_PROVIDER");
    const onic_config_var_t *nodes = var_named("ONIC_NODES");
    char str[ONIC_CONFIG_STRING_MAX + 1] = "keep";
    char err[256];
    onic_config_t cfg;

    CHECK(prov != NULL && prov->type == ONIC_CONFIG_STRING && nodes != NULL);
    CHECK(onic_config_parse(prov, "tcp;ofi_rxm", str, err, sizeof(err)) == ONIC_OK);
    CHECK(strcmp(str, "tcp;ofi_rxm") == 0);
    CHECK(onic_config_parse(prov, "", str, err, sizeof(err)) == ONIC_OK && str[0] == '\0');
    CHECK(onic_config_parse(prov, "tcp ", str, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_config_parse(prov, "0123456789012345678901234567890123456789012345678901234567890"
                            "123", str, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_OFI_PROVIDER") != NULL);
    /* More nodes than processes is refused, naming the variable. */
    setenv("ONIC_NODES", "2", 1);
    fprintf(stderr, "(an error about ONIC_NODES is expected next)\n");
    CHECK(onic_config_read(&cfg) == ONIC_ERR_INVALID_PARAM);
    setenv("ONIC_SIZE", "2", 1);
    CHECK(onic_config_read(&cfg) == ONIC_OK && cfg.nodes == 2);
    unsetenv("ONIC_NODES");
    unsetenv("ONIC_SIZE");
}

/* ONIC_TRACE takes a path up to 255 characters, longer than a string's 63;
 * a blank or a longer one is an error naming the variable. */
static void test_config_path(void)
{
    const onic_config_var_t *trace = var_named("ONIC_TRACE");
    char path[ONIC_CONFIG_PATH_MAX + 1] = "keep", long_path[ONIC_CONFIG_PATH_MAX + 2];
    char err[256];
    onic_config_t cfg;

    CHECK(trace != NULL && trace->type == ONIC_CONFIG_PATH && trace->dflt[0] == '\0');
    memset(long_path, 'd', ONIC_CONFIG_PATH_MAX);
    long_path[0] = '/';
    long_path[ONIC_CONFIG_PATH_MAX] = '\0';
    CHECK(onic_config_parse(trace, long_path, path, err, sizeof(err)) == ONIC_OK);
    CHECK(strcmp(path, long_path) == 0);
    long_path[ONIC_CONFIG_PATH_MAX] = 'd';
    long_path[ONIC_CONFIG_PATH_MAX + 1] = '\0';
    CHECK(onic_config_parse(trace, long_path, path, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(strstr(err, "ONIC_TRACE") != NULL && strstr(err, "255") != NULL);
    CHECK(onic_config_parse(trace, "/tmp/a b", path, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    setenv("ONIC_TRACE", "/tmp/x\ty", 1);
    fprintf(stderr, "(an error about ONIC_TRACE is expected next)\n");
    CHECK(onic_config_read(&cfg) == ONIC_ERR_INVALID_PARAM);
    setenv("ONIC_TRACE", "/tmp/traces", 1);
    CHECK(onic_config_read(&cfg) == ONIC_OK && strcmp(cfg.trace, "/tmp/traces") == 0);
    unsetenv("ONIC_TRACE");
}

/* onic_config_read into *cfg_p, what it writes to stderr into out. */
static onic_status_t config_read_said(onic_config_t *cfg_p, char *out, size_t outlen)
{
    FILE *tmp;
    int saved;
    onic_status_t status;

    check_stderr_catch(&tmp, &saved);
    status = onic_config_read(cfg_p);
    check_stderr_caught(tmp, saved, out, outlen);
    return status;
}

/* The process's first read (main runs this before any other) warns about
 * each ONIC_* variable it does not know, by name, and about no variable it
 * knows. */
static void test_config_unknown(void)
{
    onic_config_t cfg;
    char said[2048];

    setenv("ONIC_NO_SUCH_KNOB", "1", 1);
    setenv("ONIC_ALPU_CELLS", "128", 1);
    CHECK(config_read_said(&cfg, said, sizeof(said)) == ONIC_OK && cfg.alpu_cells == 128);
    CHECK(strstr(said, "unknown variable ONIC_NO_SUCH_KNOB ignored") != NULL);
    CHECK(strstr(said, "ONIC_ALPU_CELLS") == NULL);
    unsetenv("ONIC_NO_SUCH_KNOB");
    unsetenv("ONIC_ALPU_CELLS");
}

static void test_config_read(void)
{
    onic_config_t cfg, dflt;

    onic_config_defaults(&dflt);
    CHECK(onic_config_read(&cfg) == ONIC_OK);
    CHECK(memcmp(&cfg, &dflt, sizeof(cfg)) == 0);

    setenv("ONIC_ALPU_CELLS", "64", 1);
    setenv("ONIC_MATCH", "alpu", 1);
    CHECK(onic_config_read(&cfg) == ONIC_OK);
    CHECK(cfg.alpu_cells == 64);
    CHECK(strcmp(onic_config_match_engines[cfg.match_engine], "alpu") == 0);

    /* An invalid value fails the read and leaves *cfg_p alone. */
    memset(&cfg, 0xab, sizeof(cfg));
    setenv("ONIC_ALPU_THRESHOLD", "many", 1);
    fprintf(stderr, "(an error about ONIC_ALPU_THRESHOLD is expected next)\n");
    CHECK(onic_config_read(&cfg) == ONIC_ERR_INVALID_PARAM);
    CHECK(cfg.alpu_cells == 0xabababab);
    unsetenv("ONIC_ALPU_THRESHOLD");

    /* Cross-field rule: a block cannot be larger than the unit. */
    setenv("ONIC_ALPU_BLOCK", "128", 1);
    fprintf(stderr, "(an error about ONIC_ALPU_BLOCK is expected next)\n");
    CHECK(onic_config_read(&cfg) == ONIC_ERR_INVALID_PARAM);
    /* A block of the whole unit is allowed (one block, as the RTL's
     * smallest configurations). */
    setenv("ONIC_ALPU_BLOCK", "64", 1);
    CHECK(onic_config_read(&cfg) == ONIC_OK && cfg.alpu_block == 64 && cfg.alpu_cells == 64);
    unsetenv("ONIC_ALPU_BLOCK");
    unsetenv("ONIC_ALPU_CELLS");
    unsetenv("ONIC_MATCH");
    CHECK(onic_config_read(&cfg) == ONIC_OK);
}

/* What onic_config_log_level writes to stderr and returns for ONIC_LOG
 * set to val (NULL: unset), into out. */
static onic_log_level_t log_level_of(const char *val, char *out, size_t outlen)
{
    FILE *tmp;
    int saved;
    onic_log_level_t level;

    if (val != NULL)
        setenv("ONIC_LOG", val, 1);
    else
        unsetenv("ONIC_LOG");
    check_stderr_catch(&tmp, &saved);
    level = onic_config_log_level();
    check_stderr_caught(tmp, saved, out, outlen);
    unsetenv("ONIC_LOG");
    return level;
}

/* ONIC_LOG is read before the logger is up: unset or valid, it says
 * nothing; invalid, it says so on stderr, naming the variable, and warn
 * is used. */
static void test_config_log_level(void)
{
    char out[512];

    CHECK_EQ(log_level_of(NULL, out, sizeof(out)), ONIC_LOG_WARN);
    CHECK_EQ(strlen(out), 0);
    CHECK_EQ(log_level_of("debug", out, sizeof(out)), ONIC_LOG_DEBUG);
    CHECK_EQ(strlen(out), 0);
    CHECK_EQ(log_level_of("error", out, sizeof(out)), ONIC_LOG_ERROR);
    CHECK_EQ(strlen(out), 0);
    CHECK_EQ(log_level_of("chatty", out, sizeof(out)), ONIC_LOG_WARN);
    CHECK(strstr(out, "ONIC_LOG") != NULL);
    CHECK(strstr(out, "using warn") != NULL);
}

static void test_config_format(void)
{
    onic_config_t cfg;
    char buf[32];

    onic_config_defaults(&cfg);
    onic_config_format(var_named("ONIC_MATCH"), &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "hash") == 0);
    onic_config_format(var_named("ONIC_ALPU_THRESHOLD"), &cfg, buf, sizeof(buf));
    CHECK(strcmp(buf, "5") == 0);
}

static void test_pool(void)
{
    onic_pool_t pool;
    void *elems[100];

    onic_pool_init(&pool, 40, 16);
    CHECK(pool.elem_size == 48);
    for (int i = 0; i < 100; i++) {
        elems[i] = onic_pool_get(&pool);
        CHECK(elems[i] != NULL);
        memset(elems[i], i, 40);
    }
    CHECK(pool.in_use == 100);
    for (int i = 0; i < 100; i++)
        for (int j = i + 1; j < 100; j++)
            if (elems[i] == elems[j])
                CHECK(!"pool handed out one element twice");
    onic_pool_put(&pool, elems[42]);
    CHECK(onic_pool_get(&pool) == elems[42]); /* LIFO: the warm one comes back */

    /* 112 elements fit in the 7 chunks already there; the 113th needs a chunk. */
    for (int i = 100; i < 112; i++)
        CHECK(onic_pool_get(&pool) != NULL);
    onic_mem_fail_after(0);
    CHECK(onic_pool_get(&pool) == NULL);
    CHECK(pool.in_use == 112);
    onic_mem_fail_after(-1);
    CHECK(onic_pool_get(&pool) != NULL);
    onic_pool_fini(&pool);
}

static void pool_each_count(void *elem, void *arg)
{
    const unsigned char *b = elem;
    int *seen = arg, zero = 1, marked = 1;

    /* Past the free list's link: zero if never handed out, 0xab if marked. */
    for (int i = 8; i < 40; i++) {
        zero &= b[i] == 0;
        marked &= b[i] == 0xab;
    }
    seen[0]++;
    seen[1] += zero;
    seen[2] += marked;
}

/* onic_pool_each visits every element of every chunk, handed out or not,
 * and a new chunk's elements are zeroed (MPI_Finalize tells pending
 * requests from never-used ones by that). glibc's M_PERTURB fills what
 * malloc hands out with a non-zero byte (AddressSanitizer's allocator
 * does so on its own), so a chunk not zeroed shows. */
static void test_pool_each(void)
{
    onic_pool_t pool;
    int seen[3] = {0, 0, 0};

    mallopt(M_PERTURB, 0x5a);
    onic_pool_init(&pool, 40, 16);
    onic_pool_each(&pool, pool_each_count, seen);
    CHECK(seen[0] == 0);
    for (int i = 0; i < 20; i++) /* two chunks: 20 handed out, 12 never */
        memset(onic_pool_get(&pool), 0xab, 40);
    onic_pool_each(&pool, pool_each_count, seen);
    CHECK(seen[0] == 32);
    CHECK(seen[1] == 12);
    CHECK(seen[2] == 20);
    onic_pool_fini(&pool);
    mallopt(M_PERTURB, 0);
}

static void test_mem_injection(void)
{
    void *a, *b;

    onic_mem_fail_after(1);
    a = onic_malloc(8);
    b = onic_malloc(8);
    CHECK(a != NULL && b == NULL);
    CHECK(onic_calloc(1, 8) == NULL);
    onic_mem_fail_after(-1);
    b = onic_aligned_alloc(64, 10);
    CHECK(b != NULL && ((uintptr_t)b & 63) == 0);
    onic_free(a);
    onic_free(b);
}

/* The leak count: each wrapper that allocates counts one, onic_free takes
 * one off, a realloc that moves a block counts nothing (one block before
 * and after), a failed allocation nothing; a count started again starts
 * at 0. A counter that never counts (or only frees) fails here: the MPI
 * tests' leak checks only ever see a net of 0. */
static void test_mem_count(void)
{
    void *a, *b, *c, *d;

    onic_mem_count_start();
    CHECK_EQ(onic_mem_count_net(), 0);
    a = onic_malloc(8);
    CHECK(a != NULL);
    CHECK_EQ(onic_mem_count_net(), 1);
    b = onic_calloc(4, 8);
    CHECK(b != NULL);
    CHECK_EQ(onic_mem_count_net(), 2);
    c = onic_realloc(NULL, 16); /* a new block */
    CHECK(c != NULL);
    CHECK_EQ(onic_mem_count_net(), 3);
    c = onic_realloc(c, 4096); /* the same block, maybe moved */
    CHECK(c != NULL);
    CHECK_EQ(onic_mem_count_net(), 3);
    d = onic_aligned_alloc(64, 100);
    CHECK(d != NULL);
    CHECK_EQ(onic_mem_count_net(), 4);
    onic_mem_fail_after(0);
    CHECK(onic_malloc(8) == NULL);
    CHECK(onic_realloc(NULL, 8) == NULL);
    onic_mem_fail_after(-1);
    CHECK_EQ(onic_mem_count_net(), 4);
    onic_free(NULL); /* nothing to give back */
    CHECK_EQ(onic_mem_count_net(), 4);
    onic_free(d);
    onic_free(c);
    CHECK_EQ(onic_mem_count_net(), 2);
    onic_free(b);
    onic_free(a);
    CHECK_EQ(onic_mem_count_net(), 0);
    /* Started again: from 0, whatever came before. */
    a = onic_malloc(8);
    onic_mem_count_start();
    CHECK_EQ(onic_mem_count_net(), 0);
    onic_free(a);
    CHECK_EQ(onic_mem_count_net(), -1);
    onic_mem_count_start();
}

/* A pool's chunks are a cache, left out of the leak count: a pool that
 * grows and is destroyed leaves the count where it was (counted, the MPI
 * leak checks failed whenever timing made a pool grow), while an
 * allocation made in between is still counted and a chunk can still be
 * refused by failure injection. */
static void test_mem_count_cache(void)
{
    onic_pool_t pool;
    void *a, *e;

    onic_pool_init(&pool, 64, 4);
    onic_mem_count_start();
    for (int i = 0; i < 9; i++) /* three chunks */
        CHECK(onic_pool_get(&pool) != NULL);
    CHECK_EQ(onic_mem_count_net(), 0);
    a = onic_malloc(8);
    CHECK_EQ(onic_mem_count_net(), 1);
    onic_free(a);
    e = onic_cache_alloc(64, 100);
    CHECK(e != NULL && ((uintptr_t)e & 63) == 0);
    CHECK_EQ(onic_mem_count_net(), 0);
    onic_cache_free(e);
    /* The size rounded up to a multiple of the alignment, no further: a
     * page asked for is a page (glibc's usable size, not two pages'). */
    e = onic_cache_alloc(4096, 4096);
    CHECK(e != NULL && ((uintptr_t)e & 4095) == 0 && malloc_usable_size(e) >= 4096 &&
          malloc_usable_size(e) < 8192);
    onic_cache_free(e);
    e = onic_cache_alloc(4096, 4097);
    CHECK(e != NULL && malloc_usable_size(e) >= 8192);
    onic_cache_free(e);
    onic_mem_fail_after(0);
    CHECK(onic_cache_alloc(64, 64) == NULL);
    for (int i = 9; i < 12; i++) /* the third chunk's last three */
        CHECK(onic_pool_get(&pool) != NULL);
    CHECK(onic_pool_get(&pool) == NULL);
    onic_mem_fail_after(-1);
    onic_pool_fini(&pool);
    CHECK_EQ(onic_mem_count_net(), 0);
    onic_mem_count_start();
}

/* Slot ids: live records found, stale and forged ids not, the table full
 * at its limit, records kept across growth, out of memory a clean NULL. */
static void test_slots(void)
{
    onic_slots_t t;
    uint64_t ids[40], stale, id;
    uint32_t *rec;

    onic_slots_init(&t, sizeof(uint32_t), 40);
    for (uint32_t i = 0; i < 40; i++) {
        rec = onic_slots_add(&t, &ids[i]);
        REQUIRE(rec != NULL);
        CHECK(ids[i] != 0);
        CHECK_EQ(*rec, 0);  /* zeroed */
        *rec = i * 3;
    }
    CHECK(onic_slots_add(&t, &id) == NULL);  /* at the limit */
    for (uint32_t i = 0; i < 40; i++) {
        rec = onic_slots_find(&t, ids[i]);
        CHECK(rec != NULL && *rec == i * 3);  /* kept across growth */
        CHECK(rec != NULL && onic_slots_id(&t, rec) == ids[i]);
    }
    stale = ids[7];
    onic_slots_del(&t, onic_slots_find(&t, stale));
    CHECK(onic_slots_find(&t, stale) == NULL);
    rec = onic_slots_add(&t, &id);  /* reuses the slot, with a new id */
    CHECK(rec != NULL && id != stale && (id & 0xffffffffu) == (stale & 0xffffffffu));
    CHECK(onic_slots_find(&t, stale) == NULL);
    CHECK(onic_slots_find(&t, 0) == NULL);
    CHECK(onic_slots_find(&t, (uint64_t)1 << 32 | 41) == NULL);  /* beyond the table */
    CHECK(onic_slots_find(&t, ids[3] ^ (uint64_t)1 << 40) == NULL);  /* forged generation */
    CHECK(onic_slots_at(&t, 3) != NULL && onic_slots_at(&t, 40) == NULL);
    onic_slots_fini(&t);
    onic_slots_init(&t, 8, 1000);
    onic_mem_fail_after(0);
    CHECK(onic_slots_add(&t, &id) == NULL);
    onic_mem_fail_after(-1);
    CHECK(onic_slots_add(&t, &id) != NULL);
    onic_slots_fini(&t);
}

/* base/dl: a library opened once, its functions in the caller's pointers,
 * and a failure (no file, no symbol) given and remembered. libm stands for
 * libfabric: always there, and cos is known. */
static void test_dl(void)
{
    static double (*cos_p)(double);
    static void *none_p;
    static const onic_dl_sym_t syms[] = {{"cos", NULL, &cos_p}};
    static const onic_dl_sym_t bad_syms[] = {{"cos", NULL, &cos_p},
                                             {"onic_no_such_function", NULL, &none_p}};
    onic_dl_lib_t lib = {.what = "libm", .file = "libm.so.6", .package = "libc6",
                         .needed_by = "test_base", .var = "ONIC_TEST_LIB",
                         .syms = syms, .nsyms = 1};
    onic_dl_lib_t missing = lib, bad = lib;
    uint64_t before = onic_dl_total_ns();

    CHECK(onic_dl_load(&lib, NULL) == ONIC_OK);
    CHECK(cos_p != NULL && cos_p(0.0) == 1.0);
    CHECK(onic_dl_load(&lib, NULL) == ONIC_OK); /* once: the same answer */
    CHECK(onic_dl_total_ns() >= before + lib.load_ns);

    /* The two errors below are logged, as a job would log them. */
    CHECK(onic_dl_load(&missing, "/nonexistent/libm.so.6") == ONIC_ERR_UNSUPPORTED);
    CHECK(onic_dl_load(&missing, NULL) == ONIC_ERR_UNSUPPORTED); /* remembered */
    bad.syms = bad_syms;
    bad.nsyms = 2;
    CHECK(onic_dl_load(&bad, NULL) == ONIC_ERR_UNSUPPORTED);
    CHECK(none_p == NULL);
}

/* A process that exited but is not reaped yet passes kill(pid, 0); it is
 * not alive. */
static void test_proc_alive(void)
{
    siginfo_t si;
    pid_t pid;

    CHECK(onic_proc_alive(getpid()));
    CHECK(!onic_proc_alive(0));
    CHECK(!onic_proc_alive(-1));
    pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    CHECK(onic_proc_alive(pid)); /* running, or asleep in pause() */
    kill(pid, SIGKILL);
    /* Wait for it to exit, leaving it a zombie (WNOWAIT). */
    memset(&si, 0, sizeof(si));
    CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == pid);
    CHECK(kill(pid, 0) == 0); /* what the old check saw */
    CHECK(!onic_proc_alive(pid));
    CHECK(waitpid(pid, NULL, 0) == pid);
    CHECK(!onic_proc_alive(pid));
}

/* onic_move's inline copy of 0 to ONIC_COPY_INLINE bytes (and the first
 * length past it), every length against memmove, into an area that overlaps the
 * source from either side or not at all: each class of length (1 to 3,
 * 4 to 7, 8 to 16) copies exactly its bytes, first to last, and touches
 * nothing around them. */
static void test_move_small(void)
{
    uint8_t a[64], want[64];

    for (size_t n = 0; n <= ONIC_COPY_INLINE + 1; n++)
        for (int delta = -9; delta <= 9; delta++) {
            uint8_t *src = a + 24, *dst = src + delta;

            for (size_t i = 0; i < sizeof(a); i++)
                a[i] = (uint8_t)(i * 13 + n + 3);
            memcpy(want, a, sizeof(a));
            memmove(want + 24 + delta, want + 24, n);
            onic_move(dst, src, n);
            REQUIRE(memcmp(a, want, sizeof(a)) == 0);
        }
}

/* onic_copy and onic_move: which pairs take the pieces (a destination 1
 * to 63 bytes past its source modulo 4 KiB, more than one piece long), and
 * the same bytes as memmove on both paths, overlapping areas included. */
static void test_copy(void)
{
    enum { AREA = 5 * 4096 };
    static const size_t sizes[] = {0, 1, 63, 2047, 2048, 2049, 4096, 4096 + 7, 3 * 2048 + 5,
                                   3 * 4096};
    static const long deltas[] = {-4096 - 16, -4033, -64, -17, -1, 0,  1,  16,  31,
                                  32,         33,    63,  64,  65, 4095, 4096 + 16, 8192 + 63};
    uint8_t *a = malloc(3 * AREA), *want = malloc(3 * AREA);
    size_t aliased = 0;

    CHECK(a != NULL && want != NULL);
    if (a == NULL || want == NULL) {
        free(a);
        free(want);
        return;
    }
    CHECK_EQ(onic_copy_aliased(a + 16, a, 4096), 1);
    CHECK_EQ(onic_copy_aliased(a + 1, a, 2049), 1);
    CHECK_EQ(onic_copy_aliased(a + 63, a, 2049), 1);
    CHECK_EQ(onic_copy_aliased(a + 4096 + 16, a, 2049), 1);
    CHECK_EQ(onic_copy_aliased(a, a + 4096 - 16, 2049), 1);
    CHECK_EQ(onic_copy_aliased(a + 16, a, 2048), 0);
    CHECK_EQ(onic_copy_aliased(a, a, 4096), 0);
    CHECK_EQ(onic_copy_aliased(a + 64, a, 4096), 0);
    CHECK_EQ(onic_copy_aliased(a + 4096, a, 4096), 0);
    CHECK_EQ(onic_copy_aliased(a, a + 16, 4096), 0);
    /* The range ends at the L2 cache's size, where the C library says it. */
    CHECK_EQ(onic_copy_max, sysconf(_SC_LEVEL2_CACHE_SIZE) > ONIC_COPY_PIECE
                                ? (size_t)sysconf(_SC_LEVEL2_CACHE_SIZE)
                                : (size_t)512 * 1024);
    CHECK_EQ(onic_copy_aliased(a + 16, a, onic_copy_max - 1), 1);
    CHECK_EQ(onic_copy_aliased(a + 16, a, onic_copy_max), 0);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
            size_t n = sizes[k];
            uint8_t *src = a + AREA + 100, *dst = src + deltas[j];
            int overlap = deltas[j] > -(long)n && deltas[j] < (long)n;

            for (size_t i = 0; i < 3 * AREA; i++)
                a[i] = (uint8_t)(i * 7 + k + j);
            memcpy(want, a, 3 * AREA);
            memmove(want + (dst - a), want + (src - a), n);
            uint64_t pieced = onic_copy_pieced;

            aliased += onic_copy_aliased(dst, src, n);
            if (overlap)
                onic_move(dst, src, n);
            else if (j % 2)
                onic_copy(dst, src, n);
            else
                onic_move(dst, src, n);
            REQUIRE(memcmp(a, want, 3 * AREA) == 0);
            /* in pieces: an aliased pair, unless the destination overlaps
             * the source's end (memmove's backward copy) */
            REQUIRE(onic_copy_pieced - pieced ==
                    (uint64_t)(onic_copy_aliased(dst, src, n) && !(deltas[j] > 0 && overlap)));
        }
    }
    CHECK(aliased > 20); /* the pieces were taken, overlapping or not */
    {
        /* A length just under the end of the range, in pieces. */
        size_t n = onic_copy_max - 1;
        uint8_t *big = malloc(2 * n + 8192);

        CHECK(big != NULL);
        if (big != NULL) {
            for (size_t i = 0; i < 2 * n + 8192; i++)
                big[i] = (uint8_t)(i * 13 + 5);
            onic_copy(big + n + 4096 + 16 - (n % 4096), big, n);
            for (size_t i = 0; i < n; i++)
                REQUIRE(big[n + 4096 + 16 - (n % 4096) + i] == (uint8_t)(i * 13 + 5));
            free(big);
        }
    }
    free(a);
    free(want);
}

/* The CPU features onic detects (CPUID) against what the kernel says
 * (/proc/cpuinfo's flags), an independent reading of the same facts. */
static void test_cpu_features(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = 0;

    if (f == NULL) {
        printf("test_cpu_features: no /proc/cpuinfo, skipped\n");
        return;
    }
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        found = 1;
        CHECK_EQ(onic_cpu_has_avx2(), strstr(line, " avx2") != NULL);
        CHECK_EQ(onic_cpu_has_cldemote(), strstr(line, " cldemote") != NULL);
    }
    fclose(f);
    if (!found)
        printf("test_cpu_features: no flags line in /proc/cpuinfo, skipped\n");
}

int main(void)
{
    test_cpu_features();
    test_slots();
    test_status();
    test_config_unknown();
    test_config_table();
    test_config_parse();
    test_config_shm_auto();
    test_config_credits_auto();
    test_config_wait();
    test_config_token();
    test_config_string();
    test_config_path();
    test_config_read();
    test_config_format();
    test_config_log_level();
    test_pool();
    test_pool_each();
    test_mem_injection();
    test_mem_count();
    test_mem_count_cache();
    test_dl();
    test_proc_alive();
    test_move_small();
    test_copy();
    return check_summary("base");
}
