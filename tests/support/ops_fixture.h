/* tests/support/ops_fixture.h: rackfitd's request handler without a socket,
 * for the ops tests (test_ops_solve.c, test_ops_cluster.c): a handler with
 * one solver thread, a request written as JSON and sent as MessagePack, the
 * decoded reply, and checks of its fields. Header-only (static inline):
 * rf_test_support does not link the service library. */
#ifndef RACKFIT_TESTS_OPS_FIXTURE_H
#define RACKFIT_TESTS_OPS_FIXTURE_H

#include <criterion/criterion.h>
#include <string.h>

#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "json.h"
#include "ops.h"
#include "store.h"

typedef struct {
    rf__ops_t *ops;
    rf__mp_writer_t *w;
    rf__arena_t *arena;
} fixture_t;

static inline void s_open_with(fixture_t *f, int32_t caches)
{
    rf__ops_config_t cfg;
    rf__ops_config_default(&cfg);
    cfg.solver_threads = 1;
    cfg.cluster_caches = caches;
    f->ops = rf__ops_new(&cfg);
    f->w = rf__mp_writer_new();
    f->arena = rf__arena_new(0);
    cr_assert(f->ops && f->w && f->arena);
}

static inline void s_open(fixture_t *f)
{
    s_open_with(f, RF__STORE_CACHES);
}

static inline void s_close(fixture_t *f)
{
    rf__ops_destroy(&f->ops);
    rf__mp_writer_destroy(&f->w);
    rf__arena_destroy(&f->arena);
}

/* One request written as JSON, sent as MessagePack; the decoded reply. */
static inline const rf_doc_t *s_call(fixture_t *f, const char *json)
{
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), NULL, f->arena, &doc, &err), RF_OK, "%s", err.message);
    rf__mp_writer_t *req = rf__mp_writer_new();
    rf__mp_doc(req, doc);
    size_t len = 0;
    const void *msg = rf__mp_writer_data(req, &len);
    rf__ops_handle(f->ops, msg, len, false, 0, f->w);
    rf__mp_writer_destroy(&req);
    size_t rl = 0;
    const void *reply = rf__mp_writer_data(f->w, &rl);
    rf__mp_limits_t lim = {.max_bytes = 1 << 24, .max_depth = 32, .max_elements = 0, .max_string = 1 << 20};
    rf_doc_t *out = NULL;
    cr_assert_eq(rf__mp_decode(reply, rl, &lim, f->arena, &out, &err), RF_OK, "%s", err.message);
    cr_assert_eq(out->type, RF_DOC_MAP);
    return out;
}

static inline int64_t s_int(const rf_doc_t *d, const char *key)
{
    const rf_doc_t *v = rf__doc_get(d, key);
    cr_assert(v && v->type == RF_DOC_INT, "no integer %s", key);
    return v->u.i;
}

static inline void s_ok(const rf_doc_t *reply)
{
    const rf_doc_t *e = rf__doc_get(reply, "error");
    cr_assert_null(e, "unexpected error: %s", e ? rf__doc_get(e, "message")->u.s : "");
}

static inline void s_error(const rf_doc_t *reply, rf_status code, const char *path)
{
    const rf_doc_t *e = rf__doc_get(reply, "error");
    cr_assert(e && e->type == RF_DOC_MAP, "no error in the reply");
    cr_assert_str_eq(rf__doc_get(e, "code")->u.s, rf_status_code(code));
    if (path) /* NULL: not checked */
        cr_assert_str_eq(rf__doc_get(e, "path")->u.s, path);
}

#define NODES                                                                                                          \
    "{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":["                                                    \
    "{\"name\":\"h1\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}},"                                                                                                       \
    "{\"name\":\"h2\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h2\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}}]}"

#endif
