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
#include "../support/ops_fixture.h"

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
