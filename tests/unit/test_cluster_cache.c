/* tests/unit/test_cluster_cache.c: the solver cache for stored clusters
 * (include/rackfit/cluster_cache.h, solver/cluster_cache.c).
 *
 * The property that matters: a solve that adopts the cache answers exactly
 * as a fresh solve of the same problem does. A "stored cluster" here is a
 * problem whose nodes' `used` the test owns; random sequences of commits
 * (a fresh solve's placements added to `used`) and releases (an earlier
 * commit taken back) change a few nodes at a time, and after each change a
 * random batch of the problem's gangs is solved with the cache and without:
 * the answers' JSON must be identical (solve_ms aside) and rf_check must
 * accept both. Random problems (tests/support/randprob: taints, selectors,
 * slices, bound pods, running gangs) cover the features; a generated
 * 800-host cluster covers the bucketed levels (more than 512 domains).
 * Then: matching (the cache's own node arrays, or copies compared by
 * content), in-place sync (only the nodes that changed), and the
 * limits (a full cache drops or declines shapes and classes, and answers
 * stay the same). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/randprob.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

#define S_MAX_LIVE 6 /* live commits at most */
#define S_BATCH    3 /* gangs per solve at most */

/* A stored cluster as the test keeps it: `view` is the problem with its own
 * node array (the same descriptions) and `used`; the batch of each solve is
 * a few of the problem's gangs. */
typedef struct {
    const rf_problem_t *pb;
    rf_problem_t view;
    rf_node_t *nodes;
    int64_t *used;             /* [N * R] */
    int64_t *live[S_MAX_LIVE]; /* commits: what each added to used [N * R] */
    int32_t n_live;
    rf_gang_t batch[S_BATCH];
    uint64_t rng;
} s_world_t;

static uint32_t s_rand(s_world_t *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return (uint32_t)(w->rng >> 11);
}

static void s_world_init(s_world_t *w, const rf_problem_t *pb, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->pb = pb;
    w->rng = seed * 2654435761u + 1;
    size_t N = (size_t)pb->n_nodes, R = (size_t)pb->n_resources;
    w->nodes = malloc(N * sizeof *w->nodes);
    w->used = malloc(N * R * sizeof *w->used);
    cr_assert(w->nodes && w->used);
    for (size_t n = 0; n < N; n++) {
        w->nodes[n] = pb->nodes[n];
        memcpy(w->used + n * R, pb->nodes[n].used, R * sizeof *w->used);
        w->nodes[n].used = w->used + n * R;
    }
    w->view = *pb;
    w->view.nodes = w->nodes;
    w->view.gangs = w->batch;
}

static void s_world_fini(s_world_t *w)
{
    for (int32_t i = 0; i < w->n_live; i++)
        free(w->live[i]);
    free(w->nodes);
    free(w->used);
}

/* A random batch: 1 to S_BATCH of the problem's gangs, in a random order. */
static void s_pick_batch(s_world_t *w)
{
    int32_t k = 1 + (int32_t)(s_rand(w) % S_BATCH);
    if (k > w->pb->n_gangs)
        k = w->pb->n_gangs;
    for (int32_t i = 0; i < k; i++)
        w->batch[i] = w->pb->gangs[s_rand(w) % (uint32_t)w->pb->n_gangs];
    /* names must stay unique: drop repeats */
    int32_t m = 0;
    for (int32_t i = 0; i < k; i++) {
        bool dup = false;
        for (int32_t j = 0; j < m; j++)
            dup = dup || w->batch[j].name == w->batch[i].name;
        if (!dup)
            w->batch[m++] = w->batch[i];
    }
    w->view.n_gangs = m;
}

static rf_answer_t *s_solve(const rf_problem_t *p, rf_cluster_cache_t *cache)
{
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.mode = RF_MODE_GREEDY;
    o.threads = 1;
    o.cache = cache;
    rf_answer_t *a = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve(p, &o, &a, &err), RF_OK, "%s", err.message);
    return a;
}

static char *s_json(rf_answer_t *a)
{
    a->summary.solve_ms = 0; /* the one field that may differ */
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf_answer_to_json(a, &text, &len, &err), RF_OK, "%s", err.message);
    return text;
}

/* Commit a fresh answer's new pods into `used`, or release a live commit. */
static void s_change(s_world_t *w)
{
    size_t N = (size_t)w->pb->n_nodes, R = (size_t)w->pb->n_resources;
    if (w->n_live > 0 && (w->n_live == S_MAX_LIVE || s_rand(w) % 3 == 0)) {
        int32_t i = (int32_t)(s_rand(w) % (uint32_t)w->n_live);
        for (size_t x = 0; x < N * R; x++)
            w->used[x] -= w->live[i][x];
        free(w->live[i]);
        w->live[i] = w->live[--w->n_live];
        return;
    }
    s_pick_batch(w);
    rf_answer_t *a = s_solve(&w->view, NULL);
    int64_t *d = calloc(N * R + 1, sizeof *d);
    cr_assert(d);
    for (int32_t g = 0; g < a->n_gangs; g++) {
        if (!a->gangs[g].admitted)
            continue;
        for (int32_t p = 0; p < w->view.gangs[g].n_pod_sets; p++) {
            const rf_pod_set_answer_t *pa = &a->gangs[g].pod_sets[p];
            for (int32_t k = 0; k < pa->n_placements; k++)
                for (size_t r = 0; r < R; r++)
                    d[(size_t)pa->placements[k].node * R + r] +=
                        pa->placements[k].count * w->view.gangs[g].pod_sets[p].requests[r];
        }
    }
    for (size_t x = 0; x < N * R; x++)
        w->used[x] += d[x];
    w->live[w->n_live++] = d;
    rf_answer_destroy(&a);
}

/* One solve of a random batch with the cache and without: the same answer,
 * and a feasible one. */
static void s_compare(s_world_t *w, rf_cluster_cache_t *cache, const char *what)
{
    s_pick_batch(w);
    rf_answer_t *fresh = s_solve(&w->view, NULL);
    rf_answer_t *cached = s_solve(&w->view, cache);
    rf_test_assert_feasible(&w->view, fresh, what);
    rf_test_assert_feasible(&w->view, cached, what);
    char *a = s_json(fresh), *b = s_json(cached);
    cr_assert_str_eq(b, a, "%s: the cached answer differs from the fresh one", what);
    free(a);
    free(b);
    rf_answer_destroy(&fresh);
    rf_answer_destroy(&cached);
}

/* `steps` changes on the problem, each followed by a comparison. */
static void s_walk(const rf_problem_t *pb, const rf_cluster_cache_limits_t *lim, uint64_t seed, int steps)
{
    s_world_t w;
    s_world_init(&w, pb, seed);
    rf_cluster_cache_t *cache = NULL;
    rf_error_t err;
    cr_assert_eq(rf_cluster_cache_new(pb, lim, &cache, &err), RF_OK, "%s", err.message);
    char what[64];
    for (int i = 0; i < steps; i++) {
        snprintf(what, sizeof what, "seed %llu step %d", (unsigned long long)seed, i);
        s_compare(&w, cache, what);
        s_change(&w);
    }
    s_compare(&w, cache, "last");
    /* the cache was really used: every cached solve adopted it (a sync that matched), and some pod set found its
     * roll-up kept (the answers above would be equal without any cache at all) */
    rf_cluster_cache_info_t info;
    rf_cluster_cache_info(cache, &info);
    cr_assert_eq(info.syncs, steps + 1, "seed %llu: %lld of %d solves adopted the cache", (unsigned long long)seed,
                 (long long)info.syncs, steps + 1);
    cr_assert_gt(info.shape_builds + info.shape_hits, 0, "seed %llu: no roll-up taken from the cache",
                 (unsigned long long)seed);
    rf_cluster_cache_destroy(&cache);
    cr_assert_null(cache);
    s_world_fini(&w);
}

Test(cluster_cache, random_problems_cached_answers_equal_fresh_ones)
{
    rf_randprob_opts_t ro;
    rf_randprob_default(&ro);
    ro.max_nodes = 12;
    ro.max_gangs = 6;
    ro.max_running = 2;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        char *json = rf_randprob(seed, &ro);
        rf_problem_t *pb = rf_test_parse(json);
        s_walk(pb, NULL, seed, 12);
        rf_problem_destroy(&pb);
        free(json);
    }
    rf_test_no_leaks();
}

/* An 800-host cluster (4 blocks x 10 racks x 20 hosts: the host level is
 * bucketed), two GPU types, a tainted block, and `n_gangs` gangs of mixed
 * shapes, required levels and selectors. Malloc'ed JSON. */
static char *s_big_json(uint64_t seed, int n_gangs)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    cr_assert(s);
#define S_PUT(...)                                                                                                     \
    do {                                                                                                               \
        len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__);                                                      \
        cr_assert_lt(len, cap);                                                                                        \
    } while (0)
    S_PUT("{\"cluster\":{\"levels\":[\"b\",\"r\",\"kubernetes.io/hostname\"],\"nodes\":[");
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
    for (int b = 0, n = 0; b < 4; b++)
        for (int r = 0; r < 10; r++)
            for (int h = 0; h < 20; h++, n++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                S_PUT("%s{\"name\":\"h%d\",\"labels\":{\"b\":\"b%d\",\"r\":\"r%d\",\"kubernetes.io/hostname\":\"h%d\","
                      "\"gpu\":\"%s\"},\"allocatable\":{\"nvidia.com/gpu\":8,\"cpu\":\"96\"},"
                      "\"used\":{\"nvidia.com/gpu\":%d,\"cpu\":\"%d\"}%s%s}",
                      n ? "," : "", n, b, r, n, (r % 3) ? "H100" : "A100", (int)(x % 9), (int)(x % 40),
                      b == 3 ? ",\"taints\":[{\"key\":\"t\",\"effect\":\"NoSchedule\"}]" : "",
                      n % 97 == 5 ? ",\"unschedulable\":true" : "");
            }
    S_PUT("]},\"gangs\":[");
    static const char *const levels[] = {"\"b\"", "\"r\"", "\"kubernetes.io/hostname\""};
    for (int g = 0; g < n_gangs; g++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int gpu = 1 << (x % 4), count = 1 + (int)((x >> 8) % 24), lvl = (int)((x >> 16) % 4);
        bool sel = (x >> 24) % 3 == 0, tol = (x >> 28) % 4 == 0;
        S_PUT("%s{\"name\":\"g%d\",\"priority\":%d,%s%s%s\"pod_sets\":[{\"name\":\"w\",\"count\":%d,\"min_count\":%d,"
              "\"requests\":{\"nvidia.com/gpu\":%d,\"cpu\":\"%d\"}%s%s}]}",
              g ? "," : "", g, (int)((x >> 32) % 2), lvl < 3 ? "\"topology\":{\"required\":" : "",
              lvl < 3 ? levels[lvl] : "", lvl < 3 ? "}," : "", count, (x >> 36) % 2 ? count : 1, gpu,
              (int)((x >> 40) % 8) + 1, sel ? ",\"node_selector\":{\"gpu\":\"H100\"}" : "",
              tol ? ",\"tolerations\":[{\"key\":\"t\",\"operator\":\"Exists\"}]" : "");
    }
    S_PUT("],\"options\":{\"mode\":\"greedy\"}}");
#undef S_PUT
    return s;
}

Test(cluster_cache, bucketed_levels_cached_answers_equal_fresh_ones)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        char *json = s_big_json(seed, 16);
        rf_problem_t *pb = rf_test_parse(json);
        s_walk(pb, NULL, seed, 30);
        rf_problem_destroy(&pb);
        free(json);
    }
    rf_test_no_leaks();
}

Test(cluster_cache, full_caches_drop_or_decline_and_answers_stay_the_same)
{
    rf_cluster_cache_limits_t lim = {.max_classes = 1, .max_shapes = 2};
    char *json = s_big_json(9, 16);
    rf_problem_t *pb = rf_test_parse(json);
    s_walk(pb, &lim, 9, 30);
    rf_problem_destroy(&pb);
    free(json);
    rf_randprob_opts_t ro;
    rf_randprob_default(&ro);
    ro.max_running = 2;
    for (uint64_t seed = 100; seed < 120; seed++) {
        json = rf_randprob(seed, &ro);
        pb = rf_test_parse(json);
        s_walk(pb, &lim, seed, 8);
        rf_problem_destroy(&pb);
        free(json);
    }
    rf_test_no_leaks();
}

Test(cluster_cache, sync_touches_only_changed_nodes_and_keeps_what_it_built)
{
    char *json = s_big_json(3, 4);
    rf_problem_t *pb = rf_test_parse(json);
    s_world_t w;
    s_world_init(&w, pb, 3);
    rf_cluster_cache_t *cache = NULL;
    rf_error_t err;
    cr_assert_eq(rf_cluster_cache_new(pb, NULL, &cache, &err), RF_OK);
    int32_t changed = -1;
    cr_assert_eq(rf_cluster_cache_sync(cache, &w.view, &changed, &err), RF_OK);
    cr_assert_eq(changed, 0, "nothing changed since it was built");
    s_compare(&w, cache, "first");
    rf_cluster_cache_info_t a, b;
    rf_cluster_cache_info(cache, &a);
    cr_assert_eq(a.nodes, 800);
    cr_assert_geq(a.classes, 1);
    cr_assert_geq(a.shapes, 1);
    /* three nodes' used change: three nodes synced, nothing built again */
    size_t R = (size_t)pb->n_resources;
    for (int n = 10; n < 13; n++)
        w.used[(size_t)n * R] += 1; /* pods */
    cr_assert_eq(rf_cluster_cache_sync(cache, &w.view, &changed, &err), RF_OK);
    cr_assert_eq(changed, 3);
    rf_answer_t *again = s_solve(&w.view, cache);
    rf_cluster_cache_info(cache, &b);
    cr_assert_eq(b.nodes_synced, a.nodes_synced + 3);
    cr_assert_eq(b.classes, a.classes);
    cr_assert_geq(b.shape_hits, a.shape_hits + 1, "the batch's shapes were found kept");
    rf_answer_destroy(&again);
    s_world_fini(&w);
    rf_cluster_cache_destroy(&cache);
    rf_problem_destroy(&pb);
    free(json);
    rf_test_no_leaks();
}

Test(cluster_cache, another_cluster_does_not_match_and_is_solved_without_it)
{
    char *j1 = s_big_json(5, 3), *j2 = s_big_json(6, 3);
    rf_problem_t *p1 = rf_test_parse(j1), *p2 = rf_test_parse(j2), *copy = rf_test_parse(j1);
    rf_cluster_cache_t *cache = NULL;
    rf_error_t err;
    cr_assert_eq(rf_cluster_cache_new(p1, NULL, &cache, &err), RF_OK);
    cr_assert(rf_cluster_cache_matches(cache, p1));
    /* the same text read again: other arrays, the same descriptions */
    cr_assert(rf_cluster_cache_matches(cache, copy));
    /* another draw differs in `used` alone, which matches; a node with
     * another allocatable does not */
    cr_assert(rf_cluster_cache_matches(cache, p2));
    p2->nodes[3].allocatable[p2->n_resources - 1] += 1000;
    cr_assert_not(rf_cluster_cache_matches(cache, p2));
    cr_assert_eq(rf_cluster_cache_sync(cache, p2, NULL, &err), RF_EINVAL);
    rf_cluster_cache_info_t before, after;
    rf_cluster_cache_info(cache, &before);
    rf_answer_t *a = s_solve(p2, cache), *b = s_solve(p2, NULL);
    rf_cluster_cache_info(cache, &after);
    cr_assert_eq(after.syncs, before.syncs, "a solve of another cluster leaves the cache alone");
    char *ja = s_json(a), *jb = s_json(b);
    cr_assert_str_eq(ja, jb);
    free(ja);
    free(jb);
    rf_answer_destroy(&a);
    rf_answer_destroy(&b);
    /* the copy is solved with the cache, as without it */
    a = s_solve(copy, cache);
    b = s_solve(copy, NULL);
    rf_cluster_cache_info(cache, &after);
    cr_assert_eq(after.syncs, before.syncs + 1);
    ja = s_json(a);
    jb = s_json(b);
    cr_assert_str_eq(ja, jb);
    free(ja);
    free(jb);
    rf_answer_destroy(&a);
    rf_answer_destroy(&b);
    /* one label changed in a copy: no longer the same cluster */
    cr_assert_gt(copy->nodes[7].n_labels, 0);
    rf_label_t *l = &copy->nodes[7].labels[0];
    const char *was = l->value;
    l->value = "elsewhere";
    cr_assert_not(rf_cluster_cache_matches(cache, copy));
    l->value = was;
    rf_cluster_cache_t *none = NULL;
    rf_cluster_cache_limits_t bad = {.max_classes = 0, .max_shapes = 4};
    cr_assert_eq(rf_cluster_cache_new(p1, &bad, &none, &err), RF_EINVAL);
    cr_assert_null(none);
    rf_cluster_cache_destroy(&cache);
    rf_cluster_cache_destroy(&cache); /* NULL-safe */
    rf_problem_destroy(&p1);
    rf_problem_destroy(&p2);
    rf_problem_destroy(&copy);
    free(j1);
    free(j2);
    rf_test_no_leaks();
}
