/* libFuzzer target for the match-trace reader and the replay behind it
 * (scripts/fuzz.sh trace, `make fuzz FUZZ_TARGET=trace`): any bytes are
 * either refused with an offset or read, and whatever is read replays
 * through the models and the four engines without a crash. */
#include "match/trace.h"
#include "replay/replay.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onic_trace_t t;
    replay_opts_t opts;
    replay_result_t *res;
    char err[256];

    if (onic_trace_parse(data, size, &t, err, sizeof(err)) != ONIC_OK)
        return 0;
    memset(&opts, 0, sizeof(opts));
    replay_params_defaults(&opts.params);
    opts.measure = 1;
    res = replay_result_new();
    if (res != NULL)
        (void)replay_trace(&t, &opts, res, NULL);
    replay_result_free(res);
    onic_trace_free(&t);
    return 0;
}
