/* tests/unit/test_ops_solve.c: the solve op (service/ops_solve.c) through
 * rackfitd's request handler, no socket: an inline problem is solved and
 * answered with its id; a solve on a stored cluster with commit holds the
 * capacity (the cluster's version moves, info counts the commit) so a
 * second commit cannot take it; cluster and cluster_name together, an
 * unknown stored cluster and a time limit above the server's are refused;
 * a server with solver caches answers a random run of commits and releases
 * exactly as one without them. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/ops_fixture.h"

#define GANG(name, count)                                                                                              \
    "{\"name\":\"" name "\",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

static bool s_admitted(const rf_doc_t *reply, int g)
{
    const rf_doc_t *gangs = rf__doc_get(reply, "gangs");
    cr_assert(gangs && gangs->type == RF_DOC_ARRAY && (int)gangs->len > g, "no gangs[%d] in the answer", g);
    const rf_doc_t *a = rf__doc_get(&gangs->u.items[g], "admitted");
    cr_assert(a && a->type == RF_DOC_BOOL);
    return a->u.b;
}

Test(ops_solve, inline_problem_is_answered_with_its_id)
{
    fixture_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, "{\"id\":5,\"cluster\":" NODES ",\"gangs\":[" GANG("g", 2) "," GANG("h", 1) "]}");
    s_ok(r);
    cr_assert_eq(s_int(r, "id"), 5);
    cr_assert(s_admitted(r, 0) != s_admitted(r, 1), "two hosts: one of the gangs fits, not both");
    cr_assert_null(rf__doc_get(r, "cluster"), "no stored cluster, no cluster block");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops_solve, a_commit_holds_the_capacity)
{
    fixture_t f;
    s_open(&f);
    s_ok(s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"c\",\"cluster\":" NODES "}"));
    const rf_doc_t *r = s_call(&f, "{\"cluster_name\":\"c\",\"commit\":true,\"gangs\":[" GANG("g", 2) "]}");
    s_ok(r);
    cr_assert(s_admitted(r, 0));
    const rf_doc_t *c = rf__doc_get(r, "cluster");
    cr_assert(c && c->type == RF_DOC_MAP);
    cr_assert_str_eq(rf__doc_get(c, "name")->u.s, "c");
    cr_assert(rf__doc_get(c, "committed")->u.b);

    r = s_call(&f, "{\"op\":\"cluster.info\",\"name\":\"c\"}");
    s_ok(r);
    cr_assert_geq(s_int(r, "commits"), 1, "(solve, gang, node) entries");
    cr_assert_eq(s_int(r, "commit_pods"), 2);

    r = s_call(&f, "{\"cluster_name\":\"c\",\"commit\":true,\"gangs\":[" GANG("h", 1) "]}");
    s_ok(r);
    cr_assert_not(s_admitted(r, 0), "both hosts are held by the first commit");

    s_ok(s_call(&f, "{\"op\":\"cluster.release\",\"name\":\"c\",\"gangs\":[\"g\"]}"));
    r = s_call(&f, "{\"cluster_name\":\"c\",\"gangs\":[" GANG("h", 1) "]}");
    s_ok(r);
    cr_assert(s_admitted(r, 0), "released capacity is free again");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops_solve, refusals)
{
    fixture_t f;
    s_open(&f);
    s_ok(s_call(&f, "{\"op\":\"cluster.put\",\"name\":\"c\",\"cluster\":" NODES "}"));
    s_error(s_call(&f, "{\"cluster_name\":\"c\",\"cluster\":" NODES ",\"gangs\":[]}"), RF_ESCHEMA, "cluster");
    s_error(s_call(&f, "{\"cluster_name\":\"nowhere\",\"gangs\":[]}"), RF_ENOTFOUND, NULL);
    s_error(s_call(&f, "{\"cluster_name\":\"c\",\"commit\":1,\"gangs\":[]}"), RF_ESCHEMA, "commit");
    s_error(s_call(&f, "{\"cluster_name\":\"c\",\"cluster_version\":0,\"gangs\":[]}"), RF_ESCHEMA, "cluster_version");
    s_error(s_call(&f, "{\"cluster\":" NODES ",\"gangs\":[],\"options\":{\"time_limit_ms\":999999999}}"), RF_ELIMIT,
            "options.time_limit_ms");
    s_close(&f);
    rf_test_no_leaks();
}

/* Every "solve_ms" in a reply set to 0: the one field two servers may
 * answer differently. */
static void s_no_times(rf_doc_t *d)
{
    if (d->type == RF_DOC_ARRAY)
        for (uint32_t i = 0; i < d->len; i++)
            s_no_times(&d->u.items[i]);
    if (d->type == RF_DOC_MAP)
        for (uint32_t i = 0; i < d->len; i++) {
            if (strcmp(d->u.pairs[i].key, "solve_ms") == 0)
                d->u.pairs[i].value = (rf_doc_t){.type = RF_DOC_FLOAT, .offset = -1, .u.f = 0};
            s_no_times(&d->u.pairs[i].value);
        }
}

/* 4 blocks x 4 racks x 8 hosts of 8 GPUs, half of them A100, some used. */
static char *s_fabric_json(void)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    cr_assert(s);
    len += (size_t)snprintf(s + len, cap - len, "{\"levels\":[\"b\",\"r\",\"kubernetes.io/hostname\"],\"nodes\":[");
    for (int n = 0; n < 128; n++)
        len += (size_t)snprintf(s + len, cap - len,
                                "%s{\"name\":\"h%d\",\"labels\":{\"b\":\"b%d\",\"r\":\"r%d\",\"kubernetes.io/"
                                "hostname\":\"h%d\",\"gpu\":\"%s\"},\"allocatable\":{\"nvidia.com/gpu\":8},"
                                "\"used\":{\"nvidia.com/gpu\":%d}}",
                                n ? "," : "", n, n / 32, (n / 8) % 4, n, n % 2 ? "A100" : "H100", (n * 7) % 5);
    len += (size_t)snprintf(s + len, cap - len, "]}");
    cr_assert_lt(len, cap);
    return s;
}

/* 120 random commits and releases on the fabric stored with `running`
 * (a JSON array of running gangs, or ""), on two servers, caches on and
 * off: the same replies. */
static void s_same_with_and_without_caches(const char *running)
{
    fixture_t on, off;
    s_open(&on);
    s_open_with(&off, 0);
    char *cluster = s_fabric_json();
    char json[1 << 16];
    snprintf(json, sizeof json, "{\"op\":\"cluster.put\",\"name\":\"c\",\"cluster\":%s%s%s}", cluster,
             running[0] ? ",\"running\":" : "", running);
    s_ok(s_call(&on, json));
    s_ok(s_call(&off, json));
    free(cluster);
    static const char *const req[] = {"", ",\"topology\":{\"required\":\"r\"}", ",\"topology\":{\"required\":\"b\"}"};
    uint64_t x = 88172645463325252ull;
    int live[64], n_live = 0, admitted = 0, rejected = 0;
    for (int i = 0; i < 120; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (n_live > 0 && (n_live == 64 || x % 3 == 0)) {
            int k = (int)((x >> 8) % (uint64_t)n_live);
            snprintf(json, sizeof json, "{\"op\":\"cluster.release\",\"name\":\"c\",\"gangs\":[\"g%d\"]}", live[k]);
            live[k] = live[--n_live];
        } else {
            snprintf(json, sizeof json,
                     "{\"cluster_name\":\"c\",\"commit\":true,\"options\":{\"mode\":\"greedy\"},\"gangs\":[{\"name\":"
                     "\"g%d\",\"priority\":1%s,\"pod_sets\":[{\"name\":\"w\",\"count\":%d,\"requests\":{\"nvidia.com/"
                     "gpu\":%d}%s}]}]}",
                     i, req[(x >> 16) % 3], 1 + (int)((x >> 20) % 12), 1 << ((x >> 24) % 4),
                     (x >> 28) % 3 == 0 ? ",\"node_selector\":{\"gpu\":\"A100\"}" : "");
            live[n_live++] = i;
        }
        rf_doc_t *a = (rf_doc_t *)s_call(&on, json), *b = (rf_doc_t *)s_call(&off, json);
        s_ok(a);
        if (rf__doc_get(a, "gangs")) {
            admitted += s_admitted(a, 0);
            rejected += !s_admitted(a, 0);
        }
        s_no_times(a);
        s_no_times(b);
        cr_assert(rf__doc_same(a, b), "request %d: the replies differ", i);
    }
    cr_assert_gt(admitted, 20, "the run commits (%d admitted)", admitted);
    cr_assert_gt(rejected, 0, "and fills the cluster at times (%d rejected)", rejected);
    s_close(&on);
    s_close(&off);
}

Test(ops_solve, solver_caches_answer_as_without_them)
{
    s_same_with_and_without_caches("");
    /* stored running gangs: each batch reads the nodes into its own arrays,
     * which the cache matches by content; priority 1 may preempt them */
    s_same_with_and_without_caches(
        "[{\"name\":\"r1\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":2},\"placements\":[{"
        "\"node\":\"h1\",\"count\":1}]}]},{\"name\":\"r2\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{"
        "\"nvidia.com/gpu\":2},\"placements\":[{\"node\":\"h2\",\"count\":2}]}]}]");
    rf_test_no_leaks();
}
