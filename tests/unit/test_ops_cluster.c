/* tests/unit/test_ops_cluster.c: the stored-cluster ops (service/ops_cluster.c)
 * through rackfitd's request handler, no socket: cluster.put stores a
 * cluster at version 1 and an older version is refused, cluster.info
 * reports it, cluster.release of unknown gangs releases none,
 * cluster.delete removes it (info is then not_found), and every refusal
 * names its field by path. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "json.h"
#include "ops.h"

typedef struct {
    rf__ops_t *ops;
    rf__mp_writer_t *w;
    rf__arena_t *arena;
} fixture_t;

static void s_open(fixture_t *f)
{
    rf__ops_config_t cfg;
    rf__ops_config_default(&cfg);
    cfg.solver_threads = 1;
    f->ops = rf__ops_new(&cfg);
    f->w = rf__mp_writer_new();
    f->arena = rf__arena_new(0);
    cr_assert(f->ops && f->w && f->arena);
}

static void s_close(fixture_t *f)
{
    rf__ops_destroy(&f->ops);
    rf__mp_writer_destroy(&f->w);
    rf__arena_destroy(&f->arena);
}

/* One request written as JSON, sent as MessagePack; the decoded reply. */
static const rf_doc_t *s_call(fixture_t *f, const char *json)
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

static int64_t s_int(const rf_doc_t *d, const char *key)
{
    const rf_doc_t *v = rf__doc_get(d, key);
    cr_assert(v && v->type == RF_DOC_INT, "no integer %s", key);
    return v->u.i;
}

static void s_ok(const rf_doc_t *reply)
{
    const rf_doc_t *e = rf__doc_get(reply, "error");
    cr_assert_null(e, "unexpected error: %s", e ? rf__doc_get(e, "message")->u.s : "");
}

static void s_error(const rf_doc_t *reply, rf_status code, const char *path)
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

Test(ops_cluster, put_info_release_delete)
{
    fixture_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, "{\"op\":\"cluster.put\",\"id\":\"p1\",\"name\":\"prod\",\"cluster\":" NODES "}");
    s_ok(r);
    cr_assert_str_eq(rf__doc_get(r, "id")->u.s, "p1");
    cr_assert_str_eq(rf__doc_get(r, "name")->u.s, "prod");
    int64_t v1 = s_int(r, "version");
    cr_assert_geq(v1, 1);

    r = s_call(&f, "{\"op\":\"cluster.info\",\"name\":\"prod\"}");
    s_ok(r);
    cr_assert_eq(s_int(r, "nodes"), 2);
    cr_assert_eq(s_int(r, "version"), v1);
    cr_assert_eq(s_int(r, "commits"), 0);

    r = s_call(&f, "{\"op\":\"cluster.release\",\"name\":\"prod\",\"gangs\":[\"nobody\"]}");
    s_ok(r);
    cr_assert_eq(s_int(r, "released"), 0, "unknown gangs are no error and release nothing");

    r = s_call(&f, "{\"op\":\"cluster.delete\",\"name\":\"prod\"}");
    s_ok(r);
    cr_assert(rf__doc_get(r, "deleted")->u.b);
    s_error(s_call(&f, "{\"op\":\"cluster.info\",\"name\":\"prod\"}"), RF_ENOTFOUND, NULL);
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops_cluster, a_put_at_an_older_version_is_stale)
{
    fixture_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"a\",\"cluster\":" NODES "}");
    s_ok(r);
    int64_t v1 = s_int(r, "version");
    r = s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"a\",\"cluster\":" NODES "}");
    s_ok(r);
    int64_t v2 = s_int(r, "version");
    cr_assert_gt(v2, v1, "every put makes a new version");
    char req[2048];
    snprintf(req, sizeof req, "{\"op\":\"cluster.put\",\"name\":\"a\",\"version\":%lld,\"cluster\":" NODES "}",
             (long long)v1);
    s_error(s_call(&f, req), RF_ESTALE, "version");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops_cluster, refusals_name_their_field)
{
    fixture_t f;
    s_open(&f);
    s_error(s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"a\"}"), RF_ESCHEMA, "cluster");
    s_error(s_call(&f, "{\"op\":\"cluster.put\",\"cluster\":" NODES "}"), RF_ESCHEMA, "name");
    s_error(s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"a\",\"bogus\":1,\"cluster\":" NODES "}"), RF_ESCHEMA,
            "bogus");
    s_error(s_call(&f, "{\"op\":\"cluster.info\",\"name\":\"a\",\"version\":1}"), RF_ESCHEMA, "version");
    s_error(s_call(&f, "{\"op\":\"cluster.release\",\"name\":\"a\"}"), RF_ESCHEMA, "gangs");
    s_error(s_call(&f, "{\"op\":\"cluster.release\",\"name\":\"a\",\"gangs\":[\"\"]}"), RF_ESCHEMA, "gangs[0]");
    s_error(s_call(&f, "{\"op\":\"cluster.delete\",\"name\":\"a\",\"version\":0}"), RF_ESCHEMA, "version");
    s_error(s_call(&f, "{\"op\":\"cluster.delete\",\"name\":\"missing\"}"), RF_ENOTFOUND, NULL);
    s_close(&f);
    rf_test_no_leaks();
}
