/* tests/unit/test_ops.c: rackfitd's request handling without a socket
 * (service/ops.c and its rooms: request.c's envelope and schema, reply.c,
 * ops_solve.c, ops_cluster.c, stats.c): every op through the op table, the
 * envelope's errors with their paths, a stored cluster's commit, confirm and
 * release, the `stats` reply's by_op counts, the `busy` reply, and the
 * metrics families moving as requests are handled. Requests are written as
 * JSON here for readability and sent as MessagePack, as a client does. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "clock.h"
#include "codec.h"
#include "doc.h"
#include "json.h"
#include "metrics.h"
#include "ops.h"

typedef struct {
    rf__ops_t *ops;
    rf__mp_writer_t *w;
    rf__arena_t *arena; /* the decoded replies */
} s_fix_t;

static void s_open(s_fix_t *f)
{
    rf__ops_config_t cfg;
    rf__ops_config_default(&cfg);
    cfg.solver_threads = 2;
    f->ops = rf__ops_new(&cfg);
    f->w = rf__mp_writer_new();
    f->arena = rf__arena_new(0);
    cr_assert(f->ops && f->w && f->arena);
}

static void s_close(s_fix_t *f)
{
    rf__ops_destroy(&f->ops);
    rf__mp_writer_destroy(&f->w);
    rf__arena_destroy(&f->arena);
}

/* JSON text -> MessagePack bytes (malloc'ed). */
static void *s_pack(const char *json, size_t *len)
{
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), NULL, a, &doc, &err), RF_OK, "%s: %s", json, err.message);
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf__mp_doc(w, doc);
    void *bytes = rf__mp_writer_take(w, len);
    rf__mp_writer_destroy(&w);
    rf__arena_destroy(&a);
    return bytes;
}

/* Handle one request; the decoded reply (in f->arena). */
static const rf_doc_t *s_call(s_fix_t *f, const char *json)
{
    size_t len = 0;
    void *msg = s_pack(json, &len);
    rf__ops_handle(f->ops, msg, len, false, 0, f->w);
    free(msg);
    size_t rl = 0;
    const void *reply = rf__mp_writer_data(f->w, &rl);
    rf__mp_limits_t lim = {.max_bytes = 1 << 24, .max_depth = 32, .max_elements = 0, .max_string = 1 << 20};
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__mp_decode(reply, rl, &lim, f->arena, &doc, &err), RF_OK, "reply: %s", err.message);
    cr_assert_eq(doc->type, RF_DOC_MAP);
    return doc;
}

static const rf_doc_t *s_at(const rf_doc_t *d, const char *key)
{
    const rf_doc_t *v = rf__doc_get(d, key);
    cr_assert_not_null(v, "no %s in the reply", key);
    return v;
}

static int64_t s_int(const rf_doc_t *d, const char *key)
{
    const rf_doc_t *v = s_at(d, key);
    cr_assert_eq(v->type, RF_DOC_INT, "%s is not an integer", key);
    return v->u.i;
}

static void s_error(const rf_doc_t *reply, const char *code, const char *path)
{
    const rf_doc_t *e = s_at(reply, "error");
    cr_assert_str_eq(s_at(e, "code")->u.s, code);
    cr_assert_str_eq(s_at(e, "path")->u.s, path);
}

static const char *s_put =
    "{\"op\": \"cluster.put\", \"name\": \"prod\", \"id\": 1, \"cluster\": {\"levels\": [\"rack\", "
    "\"kubernetes.io/hostname\"], \"nodes\": ["
    "{\"name\": \"h1\", \"labels\": {\"rack\": \"r1\", \"kubernetes.io/hostname\": \"h1\"}, \"allocatable\": "
    "{\"nvidia.com/gpu\": 8}},"
    "{\"name\": \"h2\", \"labels\": {\"rack\": \"r1\", \"kubernetes.io/hostname\": \"h2\"}, \"allocatable\": "
    "{\"nvidia.com/gpu\": 8}},"
    "{\"name\": \"h3\", \"labels\": {\"rack\": \"r2\", \"kubernetes.io/hostname\": \"h3\"}, \"allocatable\": "
    "{\"nvidia.com/gpu\": 8}},"
    "{\"name\": \"h4\", \"labels\": {\"rack\": \"r2\", \"kubernetes.io/hostname\": \"h4\"}, \"allocatable\": "
    "{\"nvidia.com/gpu\": 8}}]}}";

#define S_GANG(name)                                                                                                   \
    "{\"name\": \"" name "\", \"topology\": {\"required\": \"rack\"}, \"pod_sets\": [{\"name\": \"w\", \"count\": 2, " \
    "\"requests\": {\"nvidia.com/gpu\": 8}}]}"

Test(ops, ping_and_the_envelope)
{
    s_fix_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, "{\"op\": \"ping\", \"id\": \"p1\"}");
    cr_assert_str_eq(s_at(r, "id")->u.s, "p1");
    cr_assert_eq(s_int(r, "v"), 1);
    const rf_doc_t *ops = s_at(r, "ops");
    cr_assert_eq(ops->len, 8);
    cr_assert_str_eq(ops->u.items[0].u.s, "solve");
    cr_assert_str_eq(ops->u.items[7].u.s, "cluster.delete");

    s_error(s_call(&f, "{\"op\": \"ping\", \"extra\": 1}"), "bad_problem", "extra");
    s_error(s_call(&f, "{\"op\": \"nope\"}"), "unsupported", "op");
    s_error(s_call(&f, "{\"op\": 3}"), "bad_problem", "op");
    s_error(s_call(&f, "{\"v\": 2, \"op\": \"ping\"}"), "unsupported", "v");
    r = s_call(&f, "{\"id\": [1], \"op\": \"ping\"}");
    s_error(r, "bad_problem", "id");
    cr_assert_null(rf__doc_get(r, "id"), "a bad id is not echoed");
    s_error(s_call(&f, "[1, 2]"), "bad_problem", "");
    r = s_call(&f, "{\"id\": 9, \"op\": \"cluster.info\"}");
    s_error(r, "bad_problem", "name");
    cr_assert_eq(s_int(r, "id"), 9, "errors echo the id");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops, solve_inline_problem)
{
    s_fix_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, "{\"id\": 3, \"cluster\": {\"levels\": [\"kubernetes.io/hostname\"], \"nodes\": "
                                   "[{\"name\": \"a\", \"labels\": {\"kubernetes.io/hostname\": \"a\"}, "
                                   "\"allocatable\": {\"nvidia.com/gpu\": 4}}]}, \"gangs\": [{\"name\": \"g\", "
                                   "\"pod_sets\": [{\"name\": \"w\", \"count\": 2, \"requests\": {\"nvidia.com/gpu\": "
                                   "2}}]}], \"options\": {\"mode\": \"greedy\"}}");
    cr_assert_eq(s_int(r, "id"), 3);
    const rf_doc_t *g = &s_at(r, "gangs")->u.items[0];
    cr_assert(s_at(g, "admitted")->u.b);
    cr_assert_eq(s_int(s_at(r, "summary"), "admitted"), 1);
    cr_assert_null(rf__doc_get(r, "cluster"), "an inline solve names no stored cluster");
    /* the problem's own errors keep their contract paths */
    r = s_call(&f, "{\"cluster\": {\"levels\": [\"kubernetes.io/hostname\"], \"nodes\": []}, \"gangs\": "
                   "[{\"name\": \"g\", \"pod_sets\": [{\"name\": \"w\", \"count\": -1}]}]}");
    s_error(r, "bad_problem", "gangs[0].pod_sets[0].count");
    /* above the server's max_time_limit_ms */
    r = s_call(&f, "{\"cluster\": {\"levels\": [\"kubernetes.io/hostname\"], \"nodes\": []}, \"gangs\": [], "
                   "\"options\": {\"time_limit_ms\": 999999999}}");
    s_error(r, "limit_exceeded", "options.time_limit_ms");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops, stored_cluster_commit_confirm_release)
{
    s_fix_t f;
    s_open(&f);
    const rf_doc_t *r = s_call(&f, s_put);
    cr_assert_str_eq(s_at(r, "name")->u.s, "prod");
    cr_assert_eq(s_int(r, "version"), 1);

    r = s_call(&f, "{\"id\": \"b1\", \"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, "
                   "\"commit\": true, \"gangs\": [" S_GANG("a") "]}");
    const rf_doc_t *cl = s_at(r, "cluster");
    cr_assert_eq(s_int(cl, "version"), 2);
    cr_assert(s_at(cl, "committed")->u.b);
    const rf_doc_t *pl = s_at(&s_at(&s_at(r, "gangs")->u.items[0], "pod_sets")->u.items[0], "placements");
    cr_assert_eq(pl->len, 2);
    char first[8];
    snprintf(first, sizeof first, "%s", s_at(&pl->u.items[0], "node")->u.s);

    /* the commit holds its rack: the next gang goes to the other one */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, "
                   "\"gangs\": [" S_GANG("b") "]}");
    pl = s_at(&s_at(&s_at(r, "gangs")->u.items[0], "pod_sets")->u.items[0], "placements");
    cr_assert_str_neq(s_at(&pl->u.items[0], "node")->u.s, first);
    cr_assert_eq(s_int(s_at(r, "cluster"), "version"), 3);
    /* a third does not fit anywhere */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"gangs\": [" S_GANG("c") "]}");
    cr_assert_not(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b);
    cr_assert_not(s_at(s_at(r, "cluster"), "committed")->u.b);

    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "commits"), 4);
    cr_assert_eq(s_int(r, "commit_pods"), 4);
    cr_assert_eq(s_int(r, "nodes"), 4);

    /* stale versions name the current one */
    r = s_call(&f, "{\"op\": \"cluster.release\", \"name\": \"prod\", \"version\": 1, \"gangs\": [\"a\"]}");
    s_error(r, "stale_version", "");
    r = s_call(&f, "{\"op\": \"cluster.release\", \"name\": \"prod\", \"gangs\": [\"a\", \"zzz\"]}");
    cr_assert_eq(s_int(r, "released"), 2);
    cr_assert_eq(s_int(r, "version"), 4);
    r = s_call(&f, "{\"op\": \"cluster.release\", \"name\": \"prod\", \"gangs\": [\"a\", 3]}");
    s_error(r, "bad_problem", "gangs[1]");

    /* patch errors name the patch's own fields */
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 4, \"used\": [{\"node\": \"hx\", "
                   "\"used\": {\"nvidia.com/gpu\": 1}}]}");
    s_error(r, "not_found", "used[0].node");
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"remove\": [\"h1\"]}");
    s_error(r, "bad_problem", "version");
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 4, \"remove\": [\"h1\"]}");
    cr_assert_eq(s_int(r, "version"), 5);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "nodes"), 3);

    r = s_call(&f, "{\"op\": \"cluster.delete\", \"name\": \"prod\"}");
    cr_assert(s_at(r, "deleted")->u.b);
    s_error(s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}"), "not_found", "cluster_name");
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops, stats_by_op_and_busy)
{
    s_fix_t f;
    s_open(&f);
    s_call(&f, "{\"op\": \"ping\"}");
    s_call(&f, "{\"op\": \"ping\"}");
    s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"none\"}");
    /* a busy reply echoes the id from the pre-scan, raw */
    size_t len = 0;
    void *msg = s_pack("{\"id\": \"x7\", \"op\": \"ping\"}", &len);
    rf__mp_scan_t scan;
    rf_error_t err;
    cr_assert_eq(rf__mp_prescan(msg, len, rf__ops_mp_limits(f.ops), &scan, &err), RF_OK);
    cr_assert_eq(rf__ops_classify(&scan), RF__CLASS_OTHER);
    rf__ops_busy(f.ops, msg, &scan, 0, "fast", f.w);
    free(msg);
    size_t rl = 0;
    const void *reply = rf__mp_writer_data(f.w, &rl);
    rf__mp_limits_t lim = {.max_bytes = 1 << 20, .max_depth = 8, .max_elements = 0, .max_string = 4096};
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf__mp_decode(reply, rl, &lim, f.arena, &doc, &err), RF_OK);
    cr_assert_str_eq(s_at(doc, "id")->u.s, "x7");
    s_error(doc, "busy", "");

    const rf_doc_t *r = s_call(&f, "{\"op\": \"stats\"}");
    cr_assert_eq(s_int(r, "requests"), 4, "three handled and one busy, before this one");
    cr_assert_eq(s_int(r, "busy"), 1);
    cr_assert_eq(s_int(r, "errors"), 2);
    cr_assert_eq(s_int(r, "solver_threads"), 2);
    const rf_doc_t *by_op = s_at(r, "by_op");
    cr_assert_eq(s_int(by_op, "ping"), 2);
    cr_assert_eq(s_int(by_op, "cluster.info"), 1);
    cr_assert_eq(s_int(by_op, "solve"), 0);
    cr_assert_eq(s_int(s_at(s_at(r, "by_mode"), "other"), "requests"), 3);

    size_t tl = 0;
    char *text = rf__metrics_render(rf__ops_metrics(f.ops), &tl);
    cr_assert_not_null(strstr(text, "rackfit_requests_total{op=\"ping\",outcome=\"ok\"} 2\n"), "%s", text);
    cr_assert_not_null(strstr(text, "rackfit_requests_total{op=\"cluster.info\",outcome=\"not_found\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_busy_total{lane=\"fast\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_request_duration_seconds_count{class=\"other\"} 4\n"));
    cr_assert_not_null(strstr(text, "rackfit_stored_clusters 0\n"));
    free(text);
    s_close(&f);
    rf_test_no_leaks();
}

Test(ops, placement_quality_metrics)
{
    s_fix_t f;
    s_open(&f);
    s_call(&f, s_put);
    /* one gang takes rack r1 whole; the second needs 3 x 8 GPUs in a rack and
     * is rejected, so the 16 free GPUs of r2 are free but stranded for it */
    s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, \"gangs\": "
               "[" S_GANG("a") ", {\"name\": \"big\", \"topology\": {\"required\": \"rack\"}, \"pod_sets\": "
                               "[{\"name\": \"w\", \"count\": 3, \"requests\": {\"nvidia.com/gpu\": 8}}]}]}");
    char *text = rf__metrics_render(rf__ops_metrics(f.ops), NULL);
    cr_assert_not_null(strstr(text, "rackfit_gangs_total{result=\"admitted\"} 1\n"), "%s", text);
    cr_assert_not_null(strstr(text, "rackfit_gangs_total{result=\"rejected\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_gang_domains_bucket{level=\"rack\",le=\"1\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_cluster_free_gpus{cluster=\"prod\"} 16\n"));
    cr_assert_not_null(strstr(text, "rackfit_cluster_free_hosts{cluster=\"prod\"} 2\n"));
    cr_assert_not_null(strstr(text, "rackfit_cluster_free_domains{cluster=\"prod\",level=\"rack\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_cluster_stranded_gpus{cluster=\"prod\"} 0\n"),
                       "one pod of `big` fits on r2's hosts: not stranded by this measure");
    cr_assert_not_null(strstr(text, "rackfit_commits_total{outcome=\"committed\"} 1\n"));
    cr_assert_not_null(strstr(text, "rackfit_commits_open{cluster=\"prod\"} 2\n"));
    cr_assert_not_null(strstr(text, "rackfit_cluster_version{cluster=\"prod\"} 2\n"));
    cr_assert_not_null(strstr(text, "rackfit_solve_duration_seconds_count{mode=\"greedy\"} 1\n"));
    free(text);
    s_close(&f);
    rf_test_no_leaks();
}

/* Issue 14 against a stored cluster: a high-priority gang preempts a whole
 * running gang and commits; until the watcher reports the victims gone (a
 * patch that includes the preemptor), the commit holds the freed rack, so a
 * gang of middle priority cannot take it by preempting the same victim. */
Test(ops, committed_preemption_holds_the_freed_capacity)
{
    s_fix_t f;
    s_open(&f);
    s_call(&f, s_put);
    const rf_doc_t *r = s_call(
        &f,
        "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 1, \"used\": ["
        "{\"node\": \"h1\", \"used\": {\"nvidia.com/gpu\": 8}}, {\"node\": \"h2\", \"used\": {\"nvidia.com/gpu\": 8}},"
        "{\"node\": \"h3\", \"used\": {\"nvidia.com/gpu\": 8}}, {\"node\": \"h4\", \"used\": {\"nvidia.com/gpu\": "
        "8}}]}");
    cr_assert_eq(s_int(r, "version"), 2);
#define S_RUNNING                                                                                                      \
    "\"running\": [{\"name\": \"low\", \"priority\": 0, \"pod_sets\": [{\"name\": \"w\", \"requests\": "               \
    "{\"nvidia.com/gpu\": 8}, \"placements\": [{\"node\": \"h1\", \"count\": 1}, {\"node\": \"h2\", \"count\": "       \
    "1}]}]},"                                                                                                          \
    "{\"name\": \"keep\", \"priority\": 0, \"preemptible\": false, \"pod_sets\": [{\"name\": \"w\", \"requests\": "    \
    "{\"nvidia.com/gpu\": 8}, \"placements\": [{\"node\": \"h3\", \"count\": 1}, {\"node\": \"h4\", \"count\": "       \
    "1}]}]}]"
    /* control: without a commit in the way, mid would preempt low */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, " S_RUNNING
                   ", \"gangs\": [{\"name\": \"mid\", \"priority\": 5, \"topology\": {\"required\": \"rack\"}, "
                   "\"pod_sets\": [{\"name\": \"w\", \"count\": 2, \"requests\": {\"nvidia.com/gpu\": 8}}]}]}");
    cr_assert(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b, "mid alone preempts low");
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, " S_RUNNING
                   ", \"gangs\": [{\"name\": \"high\", \"priority\": 10, \"topology\": {\"required\": \"rack\"}, "
                   "\"pod_sets\": [{\"name\": \"w\", \"count\": 2, \"requests\": {\"nvidia.com/gpu\": 8}}]}]}");
    cr_assert_null(rf__doc_get(r, "error"));
    cr_assert(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b, "high preempts low");
    const rf_doc_t *run = s_at(r, "running");
    cr_assert_eq(run->len, 2);
    cr_assert(s_at(&run->u.items[0], "preempted")->u.b);
    cr_assert_not(s_at(&run->u.items[1], "preempted")->u.b, "keep is not preemptible");
    cr_assert(s_at(s_at(r, "cluster"), "committed")->u.b);

    /* low is still running (its eviction is under way): a priority-5 gang
     * would preempt it, but high's commit holds its rack */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, " S_RUNNING
                   ", \"gangs\": [{\"name\": \"mid\", \"priority\": 5, \"topology\": {\"required\": \"rack\"}, "
                   "\"pod_sets\": [{\"name\": \"w\", \"count\": 2, \"requests\": {\"nvidia.com/gpu\": 8}}]}]}");
    cr_assert_null(rf__doc_get(r, "error"));
    cr_assert_not(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b, "the freed rack is reserved for high");

    /* the watcher: low's pods are gone, high's are bound (includes confirms) */
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 3, \"used\": ["
                   "{\"node\": \"h1\", \"used\": {\"nvidia.com/gpu\": 8}, \"includes\": [\"high\"]},"
                   "{\"node\": \"h2\", \"used\": {\"nvidia.com/gpu\": 8}, \"includes\": [\"high\"]}]}");
    cr_assert_eq(s_int(r, "version"), 4);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "commits"), 0, "confirmed: the reservation ends");
    s_close(&f);
    rf_test_no_leaks();
}

/* Issue 14, running gangs stored with the cluster: set by a patch
 * (running_upsert, after the `used` that holds their pods), used by every
 * solve without the batch listing them; a conflicting batch entry of a
 * stored name is an error at its path; a confirmed preemptor removes its
 * victim from the stored cluster, its pods from `used` where the patch does
 * not set it. */
#define S_STORED_RUNNING                                                                                               \
    "\"running_upsert\": [{\"name\": \"low\", \"priority\": 0, \"pod_sets\": [{\"name\": \"w\", \"requests\": "        \
    "{\"nvidia.com/gpu\": 8}, \"placements\": [{\"node\": \"h1\", \"count\": 1}, {\"node\": \"h2\", \"count\": "       \
    "1}]}]},"                                                                                                          \
    "{\"name\": \"keep\", \"priority\": 0, \"preemptible\": false, \"pod_sets\": [{\"name\": \"w\", \"requests\": "    \
    "{\"nvidia.com/gpu\": 8}, \"placements\": [{\"node\": \"h3\", \"count\": 1}, {\"node\": \"h4\", \"count\": "       \
    "1}]}]}]"
#define S_FULL_USED                                                                                                    \
    "\"used\": [{\"node\": \"h1\", \"used\": {\"nvidia.com/gpu\": 8}}, {\"node\": \"h2\", \"used\": "                  \
    "{\"nvidia.com/gpu\": 8}}, {\"node\": \"h3\", \"used\": {\"nvidia.com/gpu\": 8}}, {\"node\": \"h4\", \"used\": "   \
    "{\"nvidia.com/gpu\": 8}}]"
#define S_HIGH                                                                                                         \
    "\"gangs\": [{\"name\": \"high\", \"priority\": 10, \"topology\": {\"required\": \"rack\"}, \"pod_sets\": "        \
    "[{\"name\": \"w\", \"count\": 2, \"requests\": {\"nvidia.com/gpu\": 8}}]}]}"

Test(ops, stored_running_gangs_preempted_and_confirmed)
{
    s_fix_t f;
    s_open(&f);
    s_call(&f, s_put);
    /* running gangs whose pods are not in `used` are refused, by path */
    const rf_doc_t *r =
        s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 1, " S_STORED_RUNNING "}");
    cr_assert_not_null(rf__doc_get(r, "error"));
    cr_assert_eq(strncmp(s_at(s_at(r, "error"), "path")->u.s, "running_upsert[0]", 17), 0, "%s",
                 s_at(s_at(r, "error"), "path")->u.s);
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 1, " S_FULL_USED ", " S_STORED_RUNNING
                   "}");
    cr_assert_eq(s_int(r, "version"), 2);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "running"), 2);

    /* a batch that lists `low` otherwise than stored */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"running\": [{\"name\": \"low\", \"priority\": 3, \"pod_sets\": "
                   "[{\"name\": \"w\", \"requests\": {\"nvidia.com/gpu\": 8}, \"placements\": [{\"node\": \"h1\", "
                   "\"count\": 1}]}]}], " S_HIGH);
    cr_assert_str_eq(s_at(s_at(r, "error"), "path")->u.s, "running[0].name");

    /* the stored running gangs are in the solve: high preempts low */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, " S_HIGH);
    cr_assert_null(rf__doc_get(r, "error"));
    cr_assert(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b);
    const rf_doc_t *run = s_at(r, "running");
    cr_assert_eq(run->len, 2);
    cr_assert_str_eq(s_at(&run->u.items[0], "name")->u.s, "low");
    cr_assert(s_at(&run->u.items[0], "preempted")->u.b);
    cr_assert_not(s_at(&run->u.items[1], "preempted")->u.b);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "preempting"), 1);
    cr_assert_eq(s_int(r, "commits"), 2);

    /* confirmed on h1 only: not yet (high still has a commit on h2) */
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 3, \"used\": [{\"node\": \"h1\", "
                   "\"used\": {\"nvidia.com/gpu\": 8}, \"includes\": [\"high\"]}]}");
    cr_assert_eq(s_int(r, "version"), 4);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "running"), 2);
    cr_assert_eq(s_int(r, "preempting"), 1);
    /* h2 too: low is gone from the stored cluster */
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 4, \"used\": [{\"node\": \"h2\", "
                   "\"used\": {\"nvidia.com/gpu\": 8}, \"includes\": [\"high\"]}]}");
    cr_assert_eq(s_int(r, "version"), 5);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "running"), 1, "low was removed on confirm");
    cr_assert_eq(s_int(r, "preempting"), 0);
    cr_assert_eq(s_int(r, "commits"), 0);
    /* the answer lists only `keep` now; nothing is free (high's pods are usage) */
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"gangs\": [{\"name\": "
                   "\"one\", \"priority\": 20, \"pod_sets\": [{\"name\": \"w\", \"count\": 1, \"requests\": "
                   "{\"nvidia.com/gpu\": 8}}]}]}");
    cr_assert_eq(s_at(r, "running")->len, 1);
    cr_assert_str_eq(s_at(&s_at(r, "running")->u.items[0], "name")->u.s, "keep");
    cr_assert_not(s_at(&s_at(r, "gangs")->u.items[0], "admitted")->u.b, "keep is not preemptible; all is used");
    /* running_remove of an unknown name */
    r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 5, \"running_remove\": [\"nope\"]}");
    cr_assert_str_eq(s_at(s_at(r, "error"), "path")->u.s, "running_remove[0]");
    s_close(&f);
    rf_test_no_leaks();
}

/* Release and expiry of a committed preemption change nothing stored: the
 * victim stays running, its capacity is no longer held. */
Test(ops, stored_preemption_released_or_expired_keeps_the_victim)
{
    s_fix_t f;
    s_open(&f);
    s_call(&f, s_put);
    const rf_doc_t *r = s_call(&f, "{\"op\": \"cluster.patch\", \"name\": \"prod\", \"version\": 1, " S_FULL_USED
                                   ", " S_STORED_RUNNING "}");
    cr_assert_eq(s_int(r, "version"), 2);
    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, " S_HIGH);
    cr_assert(s_at(&s_at(r, "running")->u.items[0], "preempted")->u.b);
    r = s_call(&f, "{\"op\": \"cluster.release\", \"name\": \"prod\", \"gangs\": [\"high\"]}");
    cr_assert_eq(s_int(r, "released"), 2);
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "running"), 2);
    cr_assert_eq(s_int(r, "preempting"), 0);
    cr_assert_eq(s_int(r, "commits"), 0);

    r = s_call(&f, "{\"cluster_name\": \"prod\", \"options\": {\"mode\": \"greedy\"}, \"commit\": true, "
                   "\"commit_ttl_ms\": 1, " S_HIGH);
    cr_assert(s_at(&s_at(r, "running")->u.items[0], "preempted")->u.b, "released: low's rack can be taken again");
    double t0 = rf_now_ms();
    while (rf_now_ms() - t0 < 5.0) {
    }
    r = s_call(&f, "{\"op\": \"cluster.info\", \"name\": \"prod\"}");
    cr_assert_eq(s_int(r, "running"), 2, "expiry keeps the victim");
    cr_assert_eq(s_int(r, "preempting"), 0);
    cr_assert_eq(s_int(r, "commits"), 0);
    s_close(&f);
    rf_test_no_leaks();
}
