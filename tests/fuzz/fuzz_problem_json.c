/* tests/fuzz/fuzz_problem_json.c: libFuzzer target for the JSON problem
 * reader (rf_problem_from_json: jansson boundary, schema reader, validation).
 *
 * Invariants checked on every input: no crash, no leak, no read past the
 * bytes given (they are not NUL-terminated); a failure comes back as a
 * negative status with a NUL-terminated message and path inside their
 * buffers; a success is a problem within the limits it was read with. The
 * limits are small so that the fuzzer explores the limit checks too.
 * Built as bin/fuzz_problem_json with RF_FUZZ=ON, and replayed over
 * tests/data/fuzz/fuzz_problem_json/ by replay_fuzz_problem_json in every
 * build. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rackfit/rackfit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void s_require(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf_limits_t limits;
    rf_limits_default(&limits);
    limits.max_nodes = 64;
    limits.max_gangs = 16;
    limits.max_pod_sets = 8;
    limits.max_pods = 4096;
    limits.max_labels = 16;
    limits.max_taints = 8;
    limits.max_resources = 16;
    limits.max_bound = 16;
    limits.max_string = 256;
    limits.max_depth = 16;
    limits.max_input_bytes = 64 * 1024;

    /* An exact-size copy: ASan catches any read past `size`. */
    char *text = malloc(size > 0 ? size : 1);
    if (text == NULL)
        return 0;
    if (size > 0)
        memcpy(text, data, size);

    rf_problem_t *problem = NULL;
    rf_error_t err;
    memset(&err, 0x5a, sizeof err); /* the reader must fill what it reports */
    rf_error_clear(&err);
    rf_status status = rf_problem_from_json(text, size, &limits, &problem, &err);
    if (status == RF_OK) {
        s_require(problem != NULL);
        s_require(problem->n_levels >= 1 && problem->n_levels <= RF_MAX_LEVELS);
        s_require(problem->n_nodes >= 0 && problem->n_nodes <= limits.max_nodes);
        s_require(problem->n_gangs >= 0 && problem->n_gangs <= limits.max_gangs);
        s_require(problem->n_resources >= 1 && problem->n_resources <= limits.max_resources + 1);
        for (int32_t g = 0; g < problem->n_gangs; g++) {
            const rf_gang_t *gang = &problem->gangs[g];
            s_require(gang->n_pod_sets <= limits.max_pod_sets);
            for (int32_t p = 0; p < gang->n_pod_sets; p++) {
                const rf_pod_set_t *ps = &gang->pod_sets[p];
                s_require(ps->min_count >= 0 && ps->min_count <= ps->count && ps->count <= limits.max_pods);
                s_require(ps->n_bound_pods >= 0 && ps->n_bound_pods <= ps->count);
            }
        }
    } else {
        s_require(status < 0);
        s_require(memchr(err.message, '\0', sizeof err.message) != NULL);
        s_require(memchr(err.path, '\0', sizeof err.path) != NULL);
        s_require(err.message[0] != '\0');
    }
    rf_problem_destroy(&problem);
    s_require(problem == NULL);
    free(text);
    return 0;
}
