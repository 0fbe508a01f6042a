/* tests/fuzz/fuzz_codec.c: libFuzzer target for rackfitd's request path
 * without the socket: the MessagePack pre-scan, msgpack-c's unpack, the
 * conversion to a document, the schema reader, every op (the cluster store
 * included) and the reply's encoding (service/ops.h, service/codec.h).
 *
 * Invariants checked on every input: no crash, no leak, no read past the
 * bytes given; exactly one reply, which is itself a MessagePack map that
 * our own decoder accepts, and is either an error {code, message, path} or
 * not. Small limits, so the fuzzer reaches the limit checks too. Built as
 * bin/fuzz_codec with RF_FUZZ=ON; replayed over tests/data/fuzz/fuzz_codec/
 * by replay_fuzz_codec in every build. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void s_require(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rf__ops_config_t cfg;
    rf__ops_config_default(&cfg);
    cfg.limits.max_nodes = 64;
    cfg.limits.max_gangs = 16;
    cfg.limits.max_pod_sets = 8;
    cfg.limits.max_pods = 4096;
    cfg.limits.max_labels = 16;
    cfg.limits.max_taints = 8;
    cfg.limits.max_resources = 16;
    cfg.limits.max_bound = 16;
    cfg.limits.max_string = 256;
    cfg.limits.max_depth = 16;
    cfg.max_message_bytes = 64 * 1024;
    cfg.max_clusters = 4;
    cfg.max_commits = 64;
    cfg.solver_threads = 1;
    rf__ops_t *ops = rf__ops_new(&cfg);
    rf__mp_writer_t *w = rf__mp_writer_new();
    uint8_t *copy = malloc(size ? size : 1);
    if (!ops || !w || !copy)
        goto done;
    if (size)
        memcpy(copy, data, size);

    /* The input as one request, then (when it is a cluster.put) a solve
     * against what it stored, so the stored path is reached too. */
    for (int round = 0; round < 2; round++) {
        rf__ops_handle(ops, copy, size, false, 0, w);
        size_t n = 0;
        const void *reply = rf__mp_writer_data(w, &n);
        s_require(n > 0);
        rf__arena_t *arena = rf__arena_new(0);
        s_require(arena != NULL);
        rf_doc_t *doc = NULL;
        rf__mp_limits_t lim = {.max_bytes = 0, .max_depth = RF__MP_MAX_DEPTH, .max_elements = 0, .max_string = 0};
        rf_error_t err;
        s_require(rf__mp_decode(reply, n, &lim, arena, &doc, &err) == RF_OK);
        s_require(doc->type == RF_DOC_MAP);
        const rf_doc_t *e = rf__doc_get(doc, "error");
        if (e) {
            s_require(e->type == RF_DOC_MAP);
            const rf_doc_t *code = rf__doc_get(e, "code");
            s_require(code && code->type == RF_DOC_STR && code->len > 0);
            s_require(rf__doc_get(e, "message") && rf__doc_get(e, "path"));
        }
        rf__arena_destroy(&arena);
        if (round == 0) {
            /* {"op": "solve", "cluster_name": "c", "gangs": []}: c may exist now. */
            static const uint8_t solve[] = {0x83, 0xa2, 'o', 'p',  0xa5, 's', 'o', 'l', 'v', 'e', 0xac,
                                            'c',  'l',  'u', 's',  't',  'e', 'r', '_', 'n', 'a', 'm',
                                            'e',  0xa1, 'c', 0xa5, 'g',  'a', 'n', 'g', 's', 0x90};
            free(copy);
            copy = malloc(sizeof solve);
            if (!copy)
                goto done;
            memcpy(copy, solve, sizeof solve);
            size = sizeof solve;
        }
    }
done:
    free(copy);
    rf__mp_writer_destroy(&w);
    rf__ops_destroy(&ops);
    return 0;
}
