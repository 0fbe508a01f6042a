/* tests/unit/test_watch_victims.c: the watcher's part of preemption
 * (watcher/victims.c, with gangs.c's running gangs and decisions.c's
 * victims): a gang of ours running whole becomes a `running` gang of the
 * problem (librackfit's reader accepts it; `rackfit.io/preemptible: "false"`
 * makes it not preemptible; none is sent when no pending gang outranks it,
 * nor with preemption off), the answer's victims are read with the gangs
 * they were preempted for, a preemptor is held (not bound) until its
 * victims' pods are gone. Evictions go to a port nobody listens on
 * (watch_preempt.sh runs them against the emulator). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "rackfit/problem.h"
#include "victims.h"

static void s_put(rf__cache_t *c, const char *json, rf__kind kind)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(json, strlen(json), &lim, a, &doc, &err), RF_OK, "%s", err.message);
    void *obj = NULL;
    if (kind == RF_KIND_POD)
        cr_assert_eq(rf__kpod_from_doc(doc, (rf__kpod_t **)&obj, &err), RF_OK, "%s", err.message);
    else if (kind == RF_KIND_NODE)
        cr_assert_eq(rf__knode_from_doc(doc, (rf__knode_t **)&obj, &err), RF_OK, "%s", err.message);
    else
        cr_assert_eq(rf__kpodgroup_from_doc(doc, (rf__kpodgroup_t **)&obj, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__cache_put(c, kind, obj), RF_OK);
    rf__arena_destroy(&a);
}

static void s_pod(rf__cache_t *c, const char *name, const char *g, int prio, const char *node, const char *ann)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"uid\":\"u-%s\",\"labels\":{\"scheduling.x-k8s.io/"
             "pod-group\":\"%s\"},\"annotations\":{%s}},\"spec\":{\"schedulerName\":\"rackfit\",\"priority\":%d%s%s%s,"
             "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},\"status\":{"
             "\"phase\":\"%s\"}}",
             name, name, g, ann ? ann : "", prio, node ? ",\"nodeName\":\"" : "", node ? node : "", node ? "\"" : "",
             node ? "Running" : "Pending");
    s_put(c, buf, RF_KIND_POD);
}

static rf__cache_t *s_cluster(void)
{
    rf__cache_t *c = rf__cache_new(7);
    s_put(c,
          "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kubernetes.io/hostname\":\"n1\"}},\"status\":{\"allocatable\":"
          "{\"cpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
          RF_KIND_NODE);
    const char *groups[] = {"low", "keep", "high"};
    for (int i = 0; i < 3; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\"},\"spec\":{\"minMember\":1}}",
                 groups[i]);
        s_put(c, buf, RF_KIND_PODGROUP);
    }
    s_pod(c, "low-0", "low", 0, "n1", NULL);
    s_pod(c, "keep-0", "keep", 0, "n1", "\"rackfit.io/preemptible\":\"false\"");
    return c;
}

static const char *const s_levels[] = {"kubernetes.io/hostname"};

Test(watch_victims, running_gangs_in_the_problem)
{
    rf__cache_t *c = s_cluster();
    rf__gang_opts_t o = {
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy", .preemption = true};
    rf__plan_t plan;
    rf_error_t err;
    s_pod(c, "high-0", "high", 0, NULL, NULL);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(plan.n_running, 0, "no pending gang outranks them: none can be preempted, none is sent");
    rf__plan_fini(&plan);
    s_pod(c, "high-0", "high", 10, NULL, NULL);
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(plan.n_running, 2);
    cr_assert_str_eq(plan.running[0].name, "ns/keep");
    cr_assert_str_eq(plan.running[1].name, "ns/low");
    cr_assert_str_eq(plan.running[1].pods[0].uid, "u-low-0");
    cr_assert(strstr(plan.json, "\"name\":\"ns/keep\",\"priority\":0,\"bandwidth\":1,\"preemptible\":false") != NULL,
              "%s", plan.json);
    cr_assert(strstr(plan.json, "\"placements\":[{\"node\":\"n1\",\"count\":1}]") != NULL, "%s", plan.json);
    cr_assert(strstr(plan.json, "\"preemption\":\"lower_priority\"") != NULL);
    rf_problem_t *prob = NULL;
    cr_assert_eq(rf_problem_from_json(plan.json, plan.len, NULL, &prob, &err), RF_OK, "%s: %s", err.path, err.message);
    rf_problem_destroy(&prob);
    const char *answer = "{\"gangs\":[{\"name\":\"ns/high\",\"admitted\":true,\"pod_sets\":[{\"name\":\"set-0\","
                         "\"placements\":[{\"node\":\"n1\",\"count\":1}]}]}],\"running\":[{\"name\":\"ns/keep\","
                         "\"preempted\":false},{\"name\":\"ns/low\",\"preempted\":true,\"by\":[\"ns/high\"]}]}";
    rf__victim_t *v = NULL;
    int32_t nv = 0;
    cr_assert_eq(rf__victims_from_answer(&plan, answer, strlen(answer), &v, &nv, &err), RF_OK, "%s", err.message);
    cr_assert_eq(nv, 1);
    cr_assert_eq(v[0].run, 1);
    cr_assert_str_eq(v[0].by, ",ns/high,");
    rf__victims_free(&v, nv);
    const char *wrong = "{\"gangs\":[],\"running\":[{\"name\":\"ns/low\",\"preempted\":true}]}";
    cr_assert_eq(rf__victims_from_answer(&plan, wrong, strlen(wrong), &v, &nv, &err), RF_ESCHEMA);
    rf__plan_fini(&plan);
    o.preemption = false;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK);
    cr_assert_eq(plan.n_running, 0, "preemption never: no running gang is sent");
    cr_assert(strstr(plan.json, "\"preemption\":\"never\"") != NULL);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}

Test(watch_victims, preemptor_waits_for_its_victims)
{
    rf_error_t err;
    rf__kube_global_init(&err);
    rf__kubeconfig_t kc = {.server = "http://127.0.0.1:1", .token = "t"};
    rf__binder_t b;
    rf__binder_init(&b);
    b.kube = rf__kube_new(&kc, &err);
    b.cache = s_cluster();
    b.max_retries = 0;
    b.timeout_ms = 500;
    b.identity = "test";
    b.scheduler_name = "rackfit";
    s_pod(b.cache, "high-0", "high", 10, NULL, NULL);
    rf__gang_opts_t o = {
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy", .preemption = true};
    rf__plan_t plan;
    rf__cache_lock(b.cache);
    cr_assert_eq(rf__plan_build(b.cache, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    rf__cache_unlock(b.cache);
    rf__victim_t v = {.run = 1, .by = ",ns/high,"};
    rf__bind_t bind = {.ns = "ns", .name = "high-0", .uid = "u-high-0", .node = "n1"};
    rf__decision_t d[2] = {{.gang = "ns/high", .admitted = true, .binds = &bind, .n_binds = 1},
                           {.gang = "ns/other", .admitted = true}};
    bool waits[2];
    rf__pool_t *pool = rf__pool_new(&b, 1, 4);
    rf__preempt_start(&b, pool, &plan, &v, 1, d, 2, waits);
    cr_assert(waits[0], "the preemptor is not bound now");
    cr_assert(!waits[1], "a gang that preempted nothing is bound as usual");
    cr_assert(rf__binder_holds(&b, "ns/high"));
    rf__preempt_check(&b);
    cr_assert(rf__binder_holds(&b, "ns/high"), "its victim is still there");
    rf__cache_lock(b.cache);
    rf__cache_del(b.cache, RF_KIND_POD, "ns/low-0");
    rf__cache_unlock(b.cache);
    rf__preempt_check(&b);
    cr_assert(!rf__binder_holds(&b, "ns/high"), "the victim is gone: solved again");
    rf__pool_destroy(&pool);
    rf__plan_fini(&plan);
    rf__cache_destroy(&b.cache);
    rf__kube_destroy(&b.kube);
    rf__binder_fini(&b);
    rf__kube_global_fini();
    rf_test_no_leaks();
}

static bool s_unevictable_low(void *ctx, const char *gang)
{
    (void)ctx;
    return strcmp(gang, "ns/low") == 0;
}

/* Other schedulers' pods: never victims by default; with preempt_others
 * their running pods are running gangs too (a group named apart from ours,
 * "ns/other:G"; a single pod "ns/pod:NAME"). A gang whose eviction was
 * refused (the unevictable callback) is sent as not preemptible. */
Test(watch_victims, other_schedulers_and_refused_victims)
{
    rf__cache_t *c = s_cluster();
    s_put(c,
          "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"v-0\",\"uid\":\"u-v-0\",\"labels\":{\"scheduling.x-k8s.io/"
          "pod-group\":\"low\"}},\"spec\":{\"schedulerName\":\"volcano\",\"priority\":0,\"nodeName\":\"n1\","
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":"
          "\"Running\"}}",
          RF_KIND_POD);
    s_put(c,
          "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"solo\",\"uid\":\"u-solo\"},\"spec\":{\"schedulerName\":"
          "\"default-scheduler\",\"priority\":0,\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":{"
          "\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}",
          RF_KIND_POD);
    s_put(c,
          "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"waiting\",\"uid\":\"u-waiting\"},\"spec\":{\"schedulerName\":"
          "\"default-scheduler\",\"priority\":0,\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\"}}",
          RF_KIND_POD);
    s_pod(c, "high-0", "high", 10, NULL, NULL);
    rf__gang_opts_t o = {
        .scheduler_name = "rackfit", .levels = s_levels, .n_levels = 1, .mode = "greedy", .preemption = true};
    rf__plan_t plan;
    rf_error_t err;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(plan.n_running, 2, "by default only our gangs can be victims");
    for (int32_t i = 0; i < plan.n_running; i++)
        cr_assert(strstr(plan.running[i].name, "other:") == NULL && strstr(plan.running[i].name, "solo") == NULL);
    cr_assert_eq(plan.n_gangs, 1, "another scheduler's pending pod is never ours to place");
    rf__plan_fini(&plan);
    o.preempt_others = true;
    o.unevictable = s_unevictable_low;
    cr_assert_eq(rf__plan_build(c, &o, NULL, NULL, &plan, &err), RF_OK, "%s", err.message);
    cr_assert_eq(plan.n_running, 4, "%s", plan.json);
    cr_assert_eq(plan.n_gangs, 1, "other schedulers' pods are victims only, never placed");
    cr_assert_str_eq(plan.running[0].name, "ns/keep");
    cr_assert_str_eq(plan.running[1].name, "ns/low");
    cr_assert_str_eq(plan.running[2].name, "ns/other:low", "named apart from our ns/low");
    cr_assert_str_eq(plan.running[2].pods[0].uid, "u-v-0");
    cr_assert_str_eq(plan.running[3].name, "ns/pod:solo");
    cr_assert(strstr(plan.json, "\"name\":\"ns/low\",\"priority\":0,\"bandwidth\":1,\"preemptible\":false") != NULL,
              "a refused victim is not preemptible: %s", plan.json);
    cr_assert(strstr(plan.json, "\"name\":\"ns/pod:solo\",\"priority\":0,\"bandwidth\":1,\"preemptible\":true") != NULL,
              "%s", plan.json);
    rf_problem_t *prob = NULL;
    cr_assert_eq(rf_problem_from_json(plan.json, plan.len, NULL, &prob, &err), RF_OK, "%s: %s", err.path, err.message);
    rf_problem_destroy(&prob);
    rf__plan_fini(&plan);
    rf__cache_destroy(&c);
    rf_test_no_leaks();
}
