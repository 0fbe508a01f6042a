/* tests/unit/test_watch_pdb.c: PodDisruptionBudgets read before victims are
 * chosen (issue 14): a budget's extraction (watcher/kobj.c: selector,
 * disruptionsAllowed, a status older than the spec counting as none), which
 * pods it selects (matchLabels, matchExpressions, namespace; an empty
 * selector selects all in policy/v1 and nothing in policy/v1beta1), and the
 * running gang it protects (watcher/gangs.c): sent as not preemptible when
 * evicting it whole would take more disruptions than its budget allows, or a
 * pod of it has two budgets (the Eviction API refuses both), each budget by
 * its own API version's rule, many budgets and gangs at once; budgets arrive
 * through watch events (watcher/watch.c, a stale status as MODIFIED too) and
 * the next plan follows them. The list+watch on loopback: a server without
 * policy/v1 (before 1.21) answers 404 there, and the budgets are read as
 * policy/v1beta1 (recorded on each), with policy/v1 asked again later; a
 * server with neither leaves the kind synced and empty, and so does one whose
 * RBAC forbids listing them (403: the watcher is ready without them) or
 * revokes it after a list; a 410 relist drops a budget deleted meanwhile. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../support/leak.h"
#include "arena.h"
#include "gangs.h"
#include "json.h"
#include "watch.h"

static rf_doc_t *s_doc(rf__arena_t *a, const char *text)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(text, strlen(text), &lim, a, &doc, &err), RF_OK, "%s: %s", err.message, text);
    return doc;
}

static rf__kpdb_t *s_pdb(const char *json)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__kpdb_t *d = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__kpdb_from_doc(s_doc(a, json), &d, &err), RF_OK, "%s: %s", err.path, err.message);
    rf__arena_destroy(&a);
    return d;
}

static rf__kpod_t *s_kpod(const char *ns, const char *labels)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"p\",\"uid\":\"u\",\"labels\":{%s}},\"spec\":{"
             "\"containers\":[]}}",
             ns, labels);
    rf__arena_t *a = rf__arena_new(0);
    rf__kpod_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf__kpod_from_doc(s_doc(a, buf), &p, &err), RF_OK, "%s", err.message);
    rf__arena_destroy(&a);
    return p;
}

#define PDB(sel, status)                                                                                               \
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\",\"generation\":2},\"spec\":{\"minAvailable\":1" sel "},"       \
    "\"status\":{" status "}}"

Test(watch_pdb, extraction)
{
    rf__kpdb_t *d = s_pdb(
        PDB(",\"selector\":{\"matchLabels\":{\"app\":\"x\"}}", "\"observedGeneration\":2,\"disruptionsAllowed\":3"));
    cr_assert_str_eq(d->ns, "ns");
    cr_assert_str_eq(d->name, "b");
    cr_assert(d->has_selector);
    cr_assert_eq(d->match_labels.n, 1);
    cr_assert_eq(d->allowed, 3);
    rf__kpdb_destroy(&d);
    cr_assert_null(d);
    d = s_pdb(PDB(",\"selector\":{}", "\"observedGeneration\":1,\"disruptionsAllowed\":3"));
    cr_assert_eq(d->allowed, 0, "a status older than the spec: the Eviction API refuses every eviction (429)");
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB("", ""));
    cr_assert(!d->has_selector);
    cr_assert_eq(d->allowed, 0, "no status yet (no disruption controller has seen it): nothing allowed");
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB("", "\"observedGeneration\":2,\"disruptionsAllowed\":-1"));
    cr_assert_eq(d->allowed, 0);
    rf__kpdb_destroy(&d);

    rf__arena_t *a = rf__arena_new(0);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__kpdb_from_doc(s_doc(a, "{\"metadata\":{\"name\":\"b\"}}"), &d, &err), RF_ESCHEMA);
    cr_assert_null(d);
    cr_assert_eq(rf__kpdb_from_doc(s_doc(a, PDB(",\"selector\":{\"matchLabels\":{\"a\":1}}", "")), &d, &err),
                 RF_ESCHEMA);
    cr_assert_str_eq(err.path, "spec.selector.matchLabels");
    cr_assert_eq(
        rf__kpdb_from_doc(s_doc(a, PDB(",\"selector\":{\"matchExpressions\":[{\"key\":\"a\"}]}", "")), &d, &err),
        RF_ESCHEMA);
    cr_assert_null(d);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(watch_pdb, selects)
{
    rf__kpod_t *x = s_kpod("ns", "\"app\":\"x\",\"tier\":\"1\""), *y = s_kpod("ns", "\"app\":\"y\"");
    rf__kpod_t *other = s_kpod("other", "\"app\":\"x\"");
    rf__kpdb_t *d = s_pdb(PDB(",\"selector\":{\"matchLabels\":{\"app\":\"x\"}}", ""));
    cr_assert(rf__kpdb_selects(d, x));
    cr_assert(!rf__kpdb_selects(d, y));
    cr_assert(!rf__kpdb_selects(d, other), "a budget selects pods of its own namespace only");
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB(",\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"x\","
                  "\"z\"]},{\"key\":\"tier\",\"operator\":\"Exists\"}]}",
                  ""));
    cr_assert(rf__kpdb_selects(d, x));
    cr_assert(!rf__kpdb_selects(d, y));
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB(",\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"x\"]},"
                  "{\"key\":\"tier\",\"operator\":\"DoesNotExist\"}]}",
                  ""));
    cr_assert(!rf__kpdb_selects(d, x));
    cr_assert(rf__kpdb_selects(d, y));
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB(",\"selector\":{}", ""));
    cr_assert(rf__kpdb_selects(d, x), "policy/v1: an empty selector selects every pod of the namespace");
    cr_assert(!d->v1beta1, "no apiVersion: read as policy/v1");
    d->v1beta1 = true;
    cr_assert(!rf__kpdb_selects(d, x), "policy/v1beta1: an empty selector selects nothing");
    rf__kpdb_destroy(&d);
    /* a v1 "select all" read through policy/v1beta1 (1.21 to 1.24): the server writes it as this expression */
    d = s_pdb("{\"apiVersion\":\"policy/v1beta1\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},\"spec\":{"
              "\"selector\":{\"matchExpressions\":[{\"key\":\"pdb.kubernetes.io/"
              "deprecated-v1beta1-empty-selector-match\",\"operator\":\"DoesNotExist\"}]}}}");
    cr_assert(d->v1beta1, "apiVersion policy/v1beta1");
    cr_assert(rf__kpdb_selects(d, x), "the v1beta1 spelling of a v1 empty selector selects every pod");
    cr_assert(rf__kpdb_selects(d, y));
    cr_assert(!rf__kpdb_selects(d, other));
    rf__kpod_t *bare = s_kpod("ns", "");
    cr_assert(!rf__kpdb_selects(d, bare), "policy/v1beta1 (a 1.20 server): a pod without labels has no budget");
    d->v1beta1 = false;
    cr_assert(rf__kpdb_selects(d, bare), "policy/v1: it has");
    rf__kpod_destroy(&bare);
    rf__kpdb_destroy(&d);
    d = s_pdb(PDB("", ""));
    cr_assert(!rf__kpdb_selects(d, x), "a null selector selects nothing");
    rf__kpdb_destroy(&d);
    rf__kpod_destroy(&x);
    rf__kpod_destroy(&y);
    rf__kpod_destroy(&other);
    rf_test_no_leaks();
}

/* ---- the running gangs a budget protects ---------------------------------------------------------------------- */

static const char *const s_levels[] = {"kubernetes.io/hostname"};

static void s_event(rf__cache_t *c, rf__kind kind, const char *type, const char *obj)
{
    char line[2048], rv[64] = "";
    snprintf(line, sizeof line, "{\"type\":\"%s\",\"object\":%s}", type, obj);
    cr_assert_eq(rf__watch_apply(c, kind, line, strlen(line), rv, sizeof rv), 0, "%s", line);
}

/* Gang G of n pods of priority prio, running on n1 (node NULL: pending). */
static void s_gang(rf__cache_t *c, const char *g, int n, int prio, const char *node)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\"},\"spec\":{\"minMember\":%d}}", g,
             n);
    s_event(c, RF_KIND_PODGROUP, "ADDED", buf);
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf,
                 "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s-%d\",\"uid\":\"u-%s-%d\",\"labels\":{"
                 "\"scheduling.x-k8s.io/pod-group\":\"%s\",\"app\":\"%s\"}},\"spec\":{\"schedulerName\":\"rackfit\","
                 "\"priority\":%d%s%s%s,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]"
                 "},\"status\":{\"phase\":\"%s\"}}",
                 g, i, g, i, g, g, prio, node ? ",\"nodeName\":\"" : "", node ? node : "", node ? "\"" : "",
                 node ? "Running" : "Pending");
        s_event(c, RF_KIND_POD, "ADDED", buf);
    }
}

static void s_budget(rf__cache_t *c, const char *type, const char *name, const char *selector, int allowed)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\","
             "\"name\":\"%s\",\"generation\":1,\"resourceVersion\":\"7\"},\"spec\":{\"selector\":%s},\"status\":{"
             "\"observedGeneration\":1,\"disruptionsAllowed\":%d}}",
             name, selector, allowed);
    s_event(c, RF_KIND_PDB, type, buf);
}

/* Build the plan; is running gang NAME sent as preemptible? */
static bool s_preemptible(rf__cache_t *c, const char *name)
{
    rf__gang_opts_t o = {
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy", .preemption = true};
    rf__plan_t plan;
    rf_error_t err;
    rf__cache_lock(c);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf__cache_unlock(c);
    char want[256];
    snprintf(want, sizeof want, "\"name\":\"%s\",\"priority\":0,\"bandwidth\":1,\"preemptible\":false", name);
    bool found = false;
    for (int32_t i = 0; i < plan.n_running; i++)
        found |= strcmp(plan.running[i].name, name) == 0;
    cr_assert(found, "%s is not a running gang of the problem: %s", name, plan.json);
    bool protected_ = strstr(plan.json, want) != NULL;
    rf__plan_fini(&plan);
    return !protected_;
}

Test(watch_pdb, budgets_protect_running_gangs)
{
    rf__cache_t *c = rf__cache_new(15);
    s_event(c, RF_KIND_NODE, "ADDED",
            "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kubernetes.io/hostname\":\"n1\"}},\"status\":{"
            "\"allocatable\":{\"cpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    s_gang(c, "low", 2, 0, "n1");
    s_gang(c, "other", 2, 0, "n1");
    s_gang(c, "high", 1, 10, NULL);
    cr_assert(s_preemptible(c, "ns/low"), "no budget: preemptible");

    s_budget(c, "ADDED", "b", "{\"matchLabels\":{\"app\":\"low\"}}", 0);
    cr_assert(!s_preemptible(c, "ns/low"), "a budget with no disruption allowed protects the gang");
    cr_assert(s_preemptible(c, "ns/other"), "... and only the pods it selects");
    s_budget(c, "MODIFIED", "b", "{\"matchLabels\":{\"app\":\"low\"}}", 1);
    cr_assert(!s_preemptible(c, "ns/low"), "1 disruption allowed, 2 pods to evict: protected");
    s_budget(c, "MODIFIED", "b", "{\"matchLabels\":{\"app\":\"low\"}}", 2);
    cr_assert(s_preemptible(c, "ns/low"), "2 allowed, 2 pods: the whole gang may go");

    s_budget(c, "ADDED", "b2", "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}", 100);
    cr_assert(!s_preemptible(c, "ns/low"), "two budgets select its pods: the Eviction API refuses such a pod");
    cr_assert(s_preemptible(c, "ns/other"), "one budget with room for its pods");
    s_event(c, RF_KIND_PDB, "DELETED",
            "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"b2\",\"resourceVersion\":\"9\"}}");
    cr_assert(s_preemptible(c, "ns/low"), "the second budget deleted: preemptible again");

    s_budget(c, "ADDED", "all", "{}", 0);
    cr_assert(!s_preemptible(c, "ns/other"), "policy/v1: an empty selector selects the namespace's every pod");
    s_event(c, RF_KIND_PDB, "DELETED", "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"all\"}}");
    s_event(c, RF_KIND_PDB, "ADDED",
            "{\"apiVersion\":\"policy/v1beta1\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"beta\","
            "\"generation\":1},\"spec\":{\"selector\":{}},\"status\":{\"observedGeneration\":1,"
            "\"disruptionsAllowed\":0}}");
    cr_assert(s_preemptible(c, "ns/other"), "policy/v1beta1: an empty selector selects nothing");
    s_budget(c, "ADDED", "all", "{}", 0);
    cr_assert(!s_preemptible(c, "ns/other"), "each budget read by its own version's rule, side by side");
    s_event(c, RF_KIND_PDB, "DELETED", "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"all\"}}");

    /* a status older than the spec, arriving as a MODIFIED event: no disruption allowed until it is current */
    s_budget(c, "MODIFIED", "b", "{\"matchLabels\":{\"app\":\"low\"}}", 2);
    cr_assert(s_preemptible(c, "ns/low"));
    s_event(c, RF_KIND_PDB, "MODIFIED",
            "{\"apiVersion\":\"policy/v1\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\",\"generation\":2},"
            "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"low\"}}},\"status\":{\"observedGeneration\":1,"
            "\"disruptionsAllowed\":2}}");
    cr_assert(!s_preemptible(c, "ns/low"), "the spec changed, the status not yet: the Eviction API refuses (429)");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

/* Many budgets, many gangs: the result of the one-pass count (budgets of other namespaces skipped, counts
 * per gang and per budget, never summed across gangs). */
Test(watch_pdb, many_budgets_many_gangs)
{
    enum { G = 40, OTHER = 300 };
    rf__cache_t *c = rf__cache_new(15);
    s_event(c, RF_KIND_NODE, "ADDED",
            "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kubernetes.io/hostname\":\"n1\"}},\"status\":{"
            "\"allocatable\":{\"cpu\":\"1000\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    char name[64], sel[256], buf[1024];
    for (int i = 0; i < G; i++) {
        snprintf(name, sizeof name, "g%02d", i);
        s_gang(c, name, 5, 0, "n1");
    }
    s_gang(c, "high", 1, 10, NULL);
    for (int i = 0; i < OTHER; i++) { /* select everything, allow nothing: in other namespaces */
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"policy/v1\",\"metadata\":{\"namespace\":\"o%d\",\"name\":\"x\","
                 "\"generation\":1},\"spec\":{\"selector\":{}},\"status\":{\"observedGeneration\":1,"
                 "\"disruptionsAllowed\":0}}",
                 i);
        s_event(c, RF_KIND_PDB, "ADDED", buf);
    }
    for (int i = 0; i < G; i++) {
        snprintf(sel, sizeof sel, "{\"matchLabels\":{\"app\":\"g%02d\"}}", i);
        snprintf(name, sizeof name, "b%02d", i);
        if (i % 4 == 0)
            s_budget(c, "ADDED", name, sel, 4); /* 5 pods, 4 allowed */
        else if (i % 4 == 1)
            s_budget(c, "ADDED", name, sel, 5); /* 5 pods, 5 allowed */
        else if (i % 4 == 2) {                  /* two budgets on each pod */
            s_budget(c, "ADDED", name, sel, 100);
            snprintf(name, sizeof name, "c%02d", i);
            s_budget(c, "ADDED", name, sel, 100);
        }
    }
    /* one budget over several gangs, with room for each gang alone (not for all together: not summed) */
    s_budget(c, "ADDED", "shared",
             "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"g03\",\"g07\","
             "\"g11\"]}]}",
             5);
    rf__gang_opts_t o = {
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy", .preemption = true};
    rf__plan_t plan;
    rf_error_t err;
    rf__cache_lock(c);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf__cache_unlock(c);
    cr_assert_eq(plan.n_running, G, "every running gang is outranked by high: kept");
    for (int i = 0; i < G; i++) {
        char want[256];
        snprintf(want, sizeof want, "\"name\":\"ns/g%02d\",\"priority\":0,\"bandwidth\":1,\"preemptible\":false", i);
        bool protected_ = strstr(plan.json, want) != NULL;
        cr_assert_eq(protected_, i % 4 == 0 || i % 4 == 2, "g%02d: protected %d", i, protected_);
    }
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

/* ---- the list+watch's fallback, on loopback ------------------------------------------------------------------ */

typedef struct {
    int fd, port;
    bool beta;   /* serves policy/v1beta1 (a 1.20 server); else neither version */
    bool forbid; /* answers everything 403 (RBAC without the budgets) */
    /* policy/v1 served: S_GONE lists b and c, answers the watch with a 410 ERROR event, then lists b alone;
     * S_REVOKE lists b, then answers 403 to everything; S_UPGRADE serves policy/v1 (b, selector {}) once
     * policy/v1beta1 was asked twice */
    enum { S_V1_NONE, S_GONE, S_REVOKE, S_UPGRADE } v1_mode;
    atomic_int v1_lists;
    atomic_int forbidden;
    atomic_int stop, v1, v1beta1;
} s_srv_t;

static void *s_serve(void *arg)
{
    s_srv_t *s = arg;
    while (!s->stop) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[4096];
        ssize_t n = recv(c, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        int st = 404;
        const char *body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}";
        bool watch = strstr(buf, "watch=1") != NULL;
        if (strstr(buf, "GET /apis/policy/v1/")) {
            atomic_fetch_add(&s->v1, 1);
            int lists = s->v1_lists;
            if (s->v1_mode == S_GONE || (s->v1_mode == S_REVOKE && lists == 0) ||
                (s->v1_mode == S_UPGRADE && s->v1beta1 >= 2)) {
                st = 200;
                if (watch)
                    body = s->v1_mode == S_GONE && lists == 1
                               ? "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n"
                               : "";
                else {
                    atomic_fetch_add(&s->v1_lists, 1);
                    body = s->v1_mode == S_GONE && lists == 0
                               ? "{\"kind\":\"PodDisruptionBudgetList\",\"apiVersion\":\"policy/v1\",\"metadata\":{"
                                 "\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"namespace\":\"ns\",\"name\":"
                                 "\"b\"},\"spec\":{\"selector\":{}}},{\"metadata\":{\"namespace\":\"ns\",\"name\":"
                                 "\"c\"},\"spec\":{\"selector\":{}}}]}"
                               : "{\"kind\":\"PodDisruptionBudgetList\",\"apiVersion\":\"policy/v1\",\"metadata\":{"
                                 "\"resourceVersion\":\"6\"},\"items\":[{\"metadata\":{\"namespace\":\"ns\",\"name\":"
                                 "\"b\"},\"spec\":{\"selector\":{}}}]}";
                }
            } else if (s->v1_mode == S_REVOKE) {
                atomic_fetch_add(&s->forbidden, 1);
                st = 403;
                body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Forbidden\",\"code\":403}";
            }
        }
        if (strstr(buf, "GET /apis/policy/v1beta1/")) {
            atomic_fetch_add(&s->v1beta1, 1);
            if (s->beta) {
                st = 200;
                body = watch ? ""
                             : "{\"kind\":\"PodDisruptionBudgetList\",\"apiVersion\":\"policy/v1beta1\",\"metadata\":"
                               "{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"namespace\":\"ns\",\"name\":"
                               "\"b\",\"generation\":1},\"spec\":{\"selector\":{}},\"status\":{\"observedGeneration\":"
                               "1,\"disruptionsAllowed\":1}}]}";
            }
        }
        if (s->forbid) {
            atomic_fetch_add(&s->forbidden, 1);
            st = 403;
            body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Forbidden\",\"code\":403}";
        }
        char out[2048];
        int m = snprintf(out, sizeof out,
                         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s",
                         st, strlen(body), body);
        send(c, out, (size_t)m, MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static bool s_synced(rf__cache_t *c, s_srv_t *srv)
{
    (void)srv;
    return c->synced & (1u << RF_KIND_PDB);
}

/* Run the PodDisruptionBudgets' watch thread against a server until done(cache, server) (cache locked). */
static bool s_watch_until(bool beta, s_srv_t *srv, rf__cache_t *c, bool (*done)(rf__cache_t *, s_srv_t *))
{
    srv->beta = beta;
    srv->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    cr_assert_eq(bind(srv->fd, (struct sockaddr *)&sin, sizeof sin), 0);
    listen(srv->fd, 16);
    getsockname(srv->fd, (struct sockaddr *)&sin, &len);
    srv->port = ntohs(sin.sin_port);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(srv->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_t st, wt;
    pthread_create(&st, NULL, s_serve, srv);
    rf_error_t err;
    rf__kube_global_init(&err);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv->port);
    rf__kubeconfig_t kc = {.server = url, .token = "t"};
    rf__kube_t *kube = rf__kube_new(&kc, &err);
    cr_assert_not_null(kube);
    atomic_int stop = 0;
    rf__watch_t w = {.kube = kube,
                     .cache = c,
                     .kind = RF_KIND_PDB,
                     .path = "/apis/policy/v1/poddisruptionbudgets",
                     .older = "/apis/policy/v1beta1/poddisruptionbudgets",
                     .optional = true,
                     .stop = &stop,
                     .timeout_s = 30,
                     .retry_newer_s = srv->v1_mode == S_UPGRADE ? 0.2 : 0};
    pthread_create(&wt, NULL, rf__watch_run, &w);
    bool synced = false;
    for (int i = 0; i < 400 && !synced; i++) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        rf__cache_lock(c);
        synced = done(c, srv);
        rf__cache_unlock(c);
    }
    atomic_store(&stop, 1);
    pthread_join(wt, NULL);
    srv->stop = 1;
    pthread_join(st, NULL);
    close(srv->fd);
    rf__kube_destroy(&kube);
    return synced;
}

static void s_watch_against(bool beta, s_srv_t *srv, rf__cache_t *c)
{
    cr_assert(s_watch_until(beta, srv, c, s_synced), "the budgets' kind is synced");
}

Test(watch_pdb, list_falls_back_to_v1beta1)
{
    rf__cache_t *c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t srv = {0};
    s_watch_against(true, &srv, c);
    cr_assert_eq(srv.v1, 1, "policy/v1 asked once, answered 404");
    cr_assert_geq(srv.v1beta1, 1);
    const rf__kpdb_t *d = rf__cache_get(c, RF_KIND_PDB, "ns/b");
    cr_assert_not_null(d, "the budget listed as v1beta1 is in the cache");
    cr_assert(d->v1beta1, "read as policy/v1beta1 (a list's item carries no apiVersion: the path says)");
    cr_assert_eq(d->allowed, 1);
    rf__kpod_t *p = s_kpod("ns", "\"app\":\"x\"");
    cr_assert(!rf__kpdb_selects(d, p), "its empty selector selects nothing there");
    rf__kpod_destroy(&p);
    rf__cache_destroy(&c);

    c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t none = {0};
    s_watch_against(false, &none, c);
    cr_assert_geq(none.v1, 1);
    cr_assert_geq(none.v1beta1, 1);
    cr_assert_eq(c->maps[RF_KIND_PDB].n, 0, "synced and empty");
    rf__cache_destroy(&c);

    c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t forbid = {.forbid = true};
    s_watch_against(false, &forbid, c);
    cr_assert_geq(forbid.forbidden, 1);
    cr_assert_eq(forbid.v1beta1, 0, "a 403 is not a missing version: v1beta1 is not tried");
    cr_assert_eq(c->maps[RF_KIND_PDB].n, 0, "forbidden: synced (ready) and empty");
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

static bool s_relisted_without_c(rf__cache_t *c, s_srv_t *srv)
{
    return srv->v1_lists >= 2 && c->maps[RF_KIND_PDB].n == 1;
}

static bool s_emptied_after_list(rf__cache_t *c, s_srv_t *srv)
{
    return srv->v1_lists >= 1 && srv->forbidden >= 2 && c->maps[RF_KIND_PDB].n == 0;
}

static bool s_read_as_v1(rf__cache_t *c, s_srv_t *srv)
{
    const rf__kpdb_t *d = rf__cache_get(c, RF_KIND_PDB, "ns/b");
    return srv->v1_lists >= 1 && d && !d->v1beta1;
}

Test(watch_pdb, relists_follow_the_server)
{
    rf__cache_t *c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t gone = {.v1_mode = S_GONE};
    cr_assert(s_watch_until(false, &gone, c, s_relisted_without_c),
              "410 on the watch: listed again, and the budget deleted meanwhile is gone (%d lists, %d cached)",
              (int)gone.v1_lists, (int)c->maps[RF_KIND_PDB].n);
    cr_assert_not_null(rf__cache_get(c, RF_KIND_PDB, "ns/b"));
    cr_assert_null(rf__cache_get(c, RF_KIND_PDB, "ns/c"));
    rf__cache_destroy(&c);

    c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t revoke = {.v1_mode = S_REVOKE};
    cr_assert(s_watch_until(false, &revoke, c, s_emptied_after_list),
              "RBAC revoked after a list: the watch's 403 drops what was listed (%d cached, %d forbidden)",
              (int)c->maps[RF_KIND_PDB].n, (int)revoke.forbidden);
    cr_assert(c->synced & (1u << RF_KIND_PDB), "and the kind stays synced (ready without budgets)");
    cr_assert_eq(revoke.v1beta1, 0, "a 403 is not a missing version");
    rf__cache_destroy(&c);

    c = rf__cache_new(1u << RF_KIND_PDB);
    s_srv_t upgrade = {.v1_mode = S_UPGRADE};
    cr_assert(s_watch_until(true, &upgrade, c, s_read_as_v1),
              "read as policy/v1beta1 first, policy/v1 asked again later: the budget is read as v1 once served");
    cr_assert_geq(upgrade.v1, 2);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
