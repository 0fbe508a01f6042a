/* tests/unit/test_store.c: stored clusters (service/store.c): versions and
 * compare-and-swap, commits added to `used`, confirmation by a patch that
 * includes them (never erased before, never counted twice), release,
 * expiry, and a commit that raced other commits (its placements summed per
 * node over the whole answer), and one commit entry per solve. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "json.h"
#include "rackfit/rackfit.h"
#include "store.h"

/* Two nodes with 8 GPUs each, one rack. */
static rf_problem_t *s_cluster(int64_t used0)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":["
             "{\"name\":\"a\",\"labels\":{\"rack\":\"r\",\"kubernetes.io/hostname\":\"a\"},"
             "\"allocatable\":{\"nvidia.com/gpu\":8},\"used\":{\"nvidia.com/gpu\":%lld}},"
             "{\"name\":\"b\",\"labels\":{\"rack\":\"r\",\"kubernetes.io/hostname\":\"b\"},"
             "\"allocatable\":{\"nvidia.com/gpu\":8}}]},\"gangs\":[]}",
             (long long)used0);
    rf_problem_t *p = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json(json, strlen(json), NULL, &p, &err), RF_OK, "%s", err.message);
    return p;
}

/* A problem on the snapshot's nodes with one gang of `pods` x 4 GPUs, and
 * a hand-made answer that places them on node `node`. */
static void s_place(const rf__snapshot_t *snap, const char *gang, int pods, int node, rf_problem_t **pb,
                    rf_answer_t **ans)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":[]},\"gangs\":[{\"name\":\"%s\","
             "\"pod_sets\":[{\"name\":\"w\",\"count\":%d,\"requests\":{\"nvidia.com/gpu\":4}}]}]}",
             gang, pods);
    rf_error_t err;
    rf_problem_t *tmp = NULL;
    cr_assert_eq(rf_problem_from_json(json, strlen(json), NULL, &tmp, &err), RF_OK, "%s", err.message);
    /* Same resource order as the cluster: pods, nvidia.com/gpu. */
    cr_assert_str_eq(snap->problem->resources[1], "nvidia.com/gpu");
    tmp->nodes = snap->problem->nodes; /* borrowed for the answer's indices */
    tmp->n_nodes = snap->problem->n_nodes;
    *ans = rf_answer_new(tmp);
    cr_assert_eq(rf_answer_add(*ans, 0, 0, node, pods), RF_OK);
    *pb = tmp;
}

/* Two gangs g0 and g1 of one 4-GPU pod each (or one gang with two such pod
 * sets when `two_sets`), all placed on node `node`. */
static void s_place_two(const rf__snapshot_t *snap, bool two_sets, int node, rf_problem_t **pb, rf_answer_t **ans)
{
    const char *json =
        two_sets
            ? "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":[]},\"gangs\":["
              "{\"name\":\"g0\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":4}},"
              "{\"name\":\"v\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":4}}]}]}"
            : "{\"cluster\":{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":[]},\"gangs\":["
              "{\"name\":\"g0\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":4}}]},"
              "{\"name\":\"g1\",\"pod_sets\":[{\"name\":\"w\",\"count\":1,\"requests\":{\"nvidia.com/gpu\":4}}]}]}";
    rf_error_t err;
    rf_problem_t *tmp = NULL;
    cr_assert_eq(rf_problem_from_json(json, strlen(json), NULL, &tmp, &err), RF_OK, "%s", err.message);
    cr_assert_str_eq(snap->problem->resources[1], "nvidia.com/gpu");
    tmp->nodes = snap->problem->nodes;
    tmp->n_nodes = snap->problem->n_nodes;
    *ans = rf_answer_new(tmp);
    if (two_sets) {
        cr_assert_eq(rf_answer_add(*ans, 0, 0, node, 1), RF_OK);
        cr_assert_eq(rf_answer_add(*ans, 0, 1, node, 1), RF_OK);
    } else {
        cr_assert_eq(rf_answer_add(*ans, 0, 0, node, 1), RF_OK);
        cr_assert_eq(rf_answer_add(*ans, 1, 0, node, 1), RF_OK);
    }
    *pb = tmp;
}

static void s_done(rf_problem_t **pb, rf_answer_t **ans)
{
    rf_answer_destroy(ans);
    (*pb)->nodes = NULL;
    (*pb)->n_nodes = 0;
    rf_problem_destroy(pb);
}

static int64_t s_used(rf__store_t *st, int node)
{
    rf__snapshot_t *snap = NULL;
    rf_error_t err;
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    int64_t u = snap->problem->nodes[node].used[1];
    rf__store_unref(st, &snap);
    return u;
}

Test(store, versions_commits_confirm_release)
{
    rf__store_t *st = rf__store_new(4, 100);
    rf_error_t err;
    int64_t v = 0;
    cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, 0, 0, &v, &err), RF_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, 0, 0, &v, &err), RF_ESTALE); /* must be new */

    rf__snapshot_t *snap = NULL;
    cr_assert_eq(rf__store_acquire(st, "c", 2, 0, &snap, &err), RF_ESTALE);
    cr_assert_eq(rf__store_acquire(st, "c", 1, 0, &snap, &err), RF_OK);
    rf_problem_t *pb;
    rf_answer_t *ans;
    s_place(snap, "g1", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_OK, "%s", err.message);
    cr_assert_eq(v, 2);
    s_done(&pb, &ans);
    /* A second solve read version 1 too: it still fits (4 + 4 <= 8), so it commits. */
    s_place(snap, "g2", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_OK, "%s", err.message);
    s_done(&pb, &ans);
    /* A third does not fit any more: stale, nothing committed. */
    s_place(snap, "g3", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_ESTALE);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    cr_assert_null(snap);
    cr_assert_eq(s_used(st, 0), 8);

    /* The watcher's patch: node a now uses 4 (g1's pods) and says so. */
    rf_problem_t *usedp = s_cluster(4);
    const char *g1[] = {"g1"};
    rf__includes_t inc[2] = {{g1, 1}, {NULL, 0}};
    usedp->n_nodes = 1; /* node a only */
    rf__patch_t patch = {.used = usedp, .includes = inc};
    cr_assert_eq(rf__store_patch(st, "c", 1, &patch, NULL, 0, &v, &err), RF_ESTALE);
    cr_assert_eq(rf__store_patch(st, "c", 3, &patch, NULL, 0, &v, &err), RF_OK, "%s", err.message);
    /* g1 confirmed (4, not counted twice), g2 still committed (4, not erased). */
    cr_assert_eq(s_used(st, 0), 8);
    /* A patch that sets used without including g2 keeps g2 on top. */
    rf_problem_t *used0 = s_cluster(0);
    used0->n_nodes = 1;
    rf__patch_t p0 = {.used = used0, .includes = inc + 1};
    cr_assert_eq(rf__store_patch(st, "c", v, &p0, NULL, 0, &v, &err), RF_OK, "%s", err.message);
    cr_assert_eq(s_used(st, 0), 4);
    const char *g2[] = {"g2"};
    int32_t released = 0;
    cr_assert_eq(rf__store_release(st, "c", -1, g2, 1, 0, &v, &released, &err), RF_OK);
    cr_assert_eq(released, 1);
    cr_assert_eq(s_used(st, 0), 0);
    usedp->n_nodes = 2;
    used0->n_nodes = 2;
    rf_problem_destroy(&usedp);
    rf_problem_destroy(&used0);
    rf__store_destroy(&st);
    cr_assert_null(st);
    rf_test_no_leaks();
}

Test(store, expiry_and_remove)
{
    rf__store_t *st = rf__store_new(4, 100);
    rf_error_t err;
    int64_t v = 0;
    cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, -1, 0, &v, &err), RF_OK);
    rf__snapshot_t *snap = NULL;
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    rf_problem_t *pb;
    rf_answer_t *ans;
    s_place(snap, "g1", 2, 1, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 100, 0, &v, &err), RF_OK);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    cr_assert_eq(s_used(st, 1), 8);
    rf__store_info_t info;
    cr_assert_eq(rf__store_info(st, "c", 50, &info, &err), RF_OK);
    cr_assert_eq(info.commits, 1);
    cr_assert_eq(info.commit_pods, 2);
    cr_assert_eq(rf__store_info(st, "c", 150, &info, &err), RF_OK); /* expired */
    cr_assert_eq(info.commits, 0);
    cr_assert_eq(info.version, v + 1);
    const char *gone[] = {"b"};
    rf__patch_t patch = {.remove = gone, .n_remove = 1};
    cr_assert_eq(rf__store_patch(st, "c", info.version, &patch, NULL, 200, &v, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__store_info(st, "c", 200, &info, &err), RF_OK);
    cr_assert_eq(info.nodes, 1);
    const char *nope[] = {"zz"};
    rf__patch_t bad = {.remove = nope, .n_remove = 1};
    cr_assert_eq(rf__store_patch(st, "c", v, &bad, NULL, 200, &v, &err), RF_ENOTFOUND);
    cr_assert_str_eq(err.path, "remove[0]");
    /* Delete expires commits before it compares versions, like every op: a
     * commit made now with a 1 ms TTL has expired by the delete's clock. */
    cr_assert_eq(rf__store_acquire(st, "c", -1, 200, &snap, &err), RF_OK);
    s_place(snap, "g2", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1, 200, &v, &err), RF_OK, "%s", err.message);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    cr_assert_eq(rf__store_delete(st, "c", v, &err), RF_ESTALE);
    cr_assert_eq(rf__store_delete(st, "c", v + 1, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__store_info(st, "c", 0, &info, &err), RF_ENOTFOUND);
    rf__store_destroy(&st);
    rf_test_no_leaks();
}

/* Node a has 8 GPUs; solve X commits 4 on it; a solve that read the same
 * version places two gangs (or two pod sets) of 4 GPUs each on a: each fits
 * alone (4 <= 8 - 4), together they do not (8 > 4): stale, nothing kept.
 * The same answer on node b (empty) commits. */
Test(store, raced_commit_sums_the_whole_answer)
{
    for (int two_sets = 0; two_sets < 2; two_sets++) {
        rf__store_t *st = rf__store_new(4, 100);
        rf_error_t err;
        int64_t v = 0;
        cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, 0, 0, &v, &err), RF_OK);
        rf__snapshot_t *snap = NULL;
        cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
        rf_problem_t *pb;
        rf_answer_t *ans;
        s_place(snap, "x", 1, 0, &pb, &ans);
        cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_OK, "%s", err.message);
        s_done(&pb, &ans);
        cr_assert_eq(s_used(st, 0), 4);

        s_place_two(snap, two_sets, 0, &pb, &ans);
        cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_ESTALE);
        s_done(&pb, &ans);
        cr_assert_eq(s_used(st, 0), 4, "12 of 8 GPUs used");
        rf__store_info_t info;
        cr_assert_eq(rf__store_info(st, "c", 0, &info, &err), RF_OK);
        cr_assert_eq(info.commits, 1);

        s_place_two(snap, two_sets, 1, &pb, &ans);
        cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_OK, "%s", err.message);
        s_done(&pb, &ans);
        cr_assert_eq(s_used(st, 1), 8);
        rf__store_unref(st, &snap);
        rf__store_destroy(&st);
    }
    rf_test_no_leaks();
}

/* Two solves commit gang g on node a: two entries, each with its own
 * expiry (the second does not extend the first); a confirm of g on a drops
 * both (a confirm covers every commit of the gang on the nodes it names). */
Test(store, commits_per_solve_expire_alone)
{
    rf__store_t *st = rf__store_new(4, 100);
    rf_error_t err;
    int64_t v = 0;
    cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, 0, 0, &v, &err), RF_OK);
    rf_problem_t *pb;
    rf_answer_t *ans;
    rf__snapshot_t *snap = NULL;
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    s_place(snap, "g", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 100, 0, &v, &err), RF_OK, "%s", err.message);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    cr_assert_eq(rf__store_acquire(st, "c", -1, 50, &snap, &err), RF_OK);
    s_place(snap, "g", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 100, 50, &v, &err), RF_OK, "%s", err.message);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    rf__store_info_t info;
    cr_assert_eq(rf__store_info(st, "c", 60, &info, &err), RF_OK);
    cr_assert_eq(info.commits, 2);
    cr_assert_eq(info.commit_pods, 2);
    cr_assert_eq(rf__store_info(st, "c", 120, &info, &err), RF_OK); /* the first expired, the second lives */
    cr_assert_eq(info.commits, 1);
    cr_assert_eq(info.commit_pods, 1);
    cr_assert_eq(rf__store_info(st, "c", 160, &info, &err), RF_OK);
    cr_assert_eq(info.commits, 0);

    /* Again, then confirm g on a: both entries go. */
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(rf__store_acquire(st, "c", -1, 200, &snap, &err), RF_OK);
        s_place(snap, "g", 1, 0, &pb, &ans);
        cr_assert_eq(rf__store_commit(st, snap, pb, ans, 100, 200, &v, &err), RF_OK, "%s", err.message);
        s_done(&pb, &ans);
        rf__store_unref(st, &snap);
    }
    rf_problem_t *usedp = s_cluster(8);
    usedp->n_nodes = 1;
    const char *g[] = {"g"};
    rf__includes_t inc[1] = {{g, 1}};
    rf__patch_t patch = {.used = usedp, .includes = inc};
    cr_assert_eq(rf__store_patch(st, "c", v, &patch, NULL, 210, &v, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__store_info(st, "c", 210, &info, &err), RF_OK);
    cr_assert_eq(info.commits, 0);
    cr_assert_eq(s_used(st, 0), 8);
    usedp->n_nodes = 2;
    rf_problem_destroy(&usedp);
    rf__store_destroy(&st);
    rf_test_no_leaks();
}

/* Running gangs stored with the cluster: put validates them against the
 * nodes (their pods must be in `used`), snapshots carry them, a patch
 * removes and replaces them, and removing a node one runs on without
 * removing the gang is refused by path. */
Test(store, running_gangs_stored)
{
    rf__arena_t *a = rf__arena_new(1 << 16);
    rf_doc_t *on_a = NULL, *on_b = NULL;
    rf_error_t err;
    const char *run_a = "[{\"name\": \"low\", \"pod_sets\": [{\"name\": \"w\", \"requests\": {\"nvidia.com/gpu\": 8}, "
                        "\"placements\": [{\"node\": \"a\", \"count\": 1}]}]}]";
    const char *run_b = "[{\"name\": \"low\", \"pod_sets\": [{\"name\": \"w\", \"requests\": {\"nvidia.com/gpu\": 8}, "
                        "\"placements\": [{\"node\": \"b\", \"count\": 1}]}]}]";
    cr_assert_eq(rf__json_parse(run_a, strlen(run_a), NULL, a, &on_a, &err), RF_OK);
    cr_assert_eq(rf__json_parse(run_b, strlen(run_b), NULL, a, &on_b, &err), RF_OK);
    rf__store_t *st = rf__store_new(4, 64);
    int64_t v = 0;
    cr_assert_neq(rf__store_put(st, "c", s_cluster(8), on_b, NULL, 0, 0, &v, &err), RF_OK, "b has no GPU used");
    cr_assert_eq(strncmp(err.path, "running[0]", 10), 0, "%s", err.path);
    cr_assert_eq(rf__store_put(st, "c", s_cluster(8), on_a, NULL, 0, 0, &v, &err), RF_OK, "%s", err.message);
    rf__store_info_t info;
    cr_assert_eq(rf__store_info(st, "c", 0, &info, &err), RF_OK);
    cr_assert_eq(info.running, 1);
    rf__snapshot_t *snap = NULL;
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    cr_assert_eq(snap->n_running, 1);
    cr_assert_str_eq(rf__doc_get(&snap->running[0], "name")->u.s, "low");
    rf__store_unref(st, &snap);
    const char *gone[] = {"a"};
    rf__patch_t rm_node = {.remove = gone, .n_remove = 1};
    cr_assert_neq(rf__store_patch(st, "c", v, &rm_node, NULL, 0, &v, &err), RF_OK, "low runs on a");
    cr_assert_eq(strncmp(err.path, "running[0]", 10), 0, "%s", err.path);
    const char *low[] = {"low"};
    rf__patch_t rm = {.remove = gone, .n_remove = 1, .running_remove = low, .n_running_remove = 1};
    cr_assert_eq(rf__store_patch(st, "c", v, &rm, NULL, 0, &v, &err), RF_OK, "%s", err.message);
    cr_assert_eq(rf__store_info(st, "c", 0, &info, &err), RF_OK);
    cr_assert_eq(info.running, 0);
    cr_assert_eq(info.nodes, 1);
    rf__patch_t up = {.running_upsert = on_b};
    cr_assert_neq(rf__store_patch(st, "c", v, &up, NULL, 0, &v, &err), RF_OK, "b's used has no GPU");
    cr_assert_eq(strncmp(err.path, "running_upsert[0]", 17), 0, "%s", err.path);
    rf__store_destroy(&st);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

/* Solver caches: taken per solve, given back to the base's pool (at most
 * max_caches kept), matching every snapshot of the base (commits change
 * only `used`), none for a new base's snapshots until built from them, and
 * none at all with max_caches 0. */
Test(store, solver_caches_pooled_per_base)
{
    rf__store_t *st = rf__store_new(4, 100);
    rf__store_set_caches(st, 1, NULL);
    rf_error_t err;
    int64_t v = 0;
    cr_assert_eq(rf__store_put(st, "c", s_cluster(0), NULL, NULL, 0, 0, &v, &err), RF_OK);
    rf__snapshot_t *snap = NULL;
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    rf_cluster_cache_t *a = rf__store_cache_take(st, snap), *b = rf__store_cache_take(st, snap);
    cr_assert(a && b && a != b, "two solves at once: two caches");
    cr_assert(rf_cluster_cache_matches(a, snap->problem));
    rf__store_cache_give(st, snap, &a);
    rf__store_cache_give(st, snap, &b); /* the pool keeps one: this one is destroyed */
    cr_assert_null(a);
    cr_assert_null(b);
    /* a commit moves the version; the next snapshot still matches the kept cache */
    rf_problem_t *pb;
    rf_answer_t *ans;
    s_place(snap, "g1", 1, 0, &pb, &ans);
    cr_assert_eq(rf__store_commit(st, snap, pb, ans, 1000, 0, &v, &err), RF_OK, "%s", err.message);
    s_done(&pb, &ans);
    rf__store_unref(st, &snap);
    cr_assert_eq(rf__store_acquire(st, "c", v, 0, &snap, &err), RF_OK);
    rf_cluster_cache_t *c = rf__store_cache_take(st, snap);
    cr_assert(c && rf_cluster_cache_matches(c, snap->problem));
    int32_t changed = 0;
    cr_assert_eq(rf_cluster_cache_sync(c, snap->problem, &changed, &err), RF_OK);
    cr_assert_eq(changed, 1, "the commit's one node");
    rf__store_cache_give(st, snap, &c);
    rf__store_unref(st, &snap);
    /* a new base (put) starts without caches; off means none */
    cr_assert_eq(rf__store_put(st, "c", s_cluster(2), NULL, NULL, -1, 0, &v, &err), RF_OK);
    cr_assert_eq(rf__store_acquire(st, "c", -1, 0, &snap, &err), RF_OK);
    c = rf__store_cache_take(st, snap);
    cr_assert(c && rf_cluster_cache_matches(c, snap->problem));
    rf_cluster_cache_info_t info;
    rf_cluster_cache_info(c, &info);
    cr_assert_eq(info.syncs, 0, "built for this base, not a kept one");
    rf__store_cache_give(st, snap, &c);
    /* the limit raised after the pool was made: the pool grows (it once wrote past its first size) */
    rf__store_set_caches(st, 3, NULL);
    rf_cluster_cache_t *t[3], *given[3];
    for (int i = 0; i < 3; i++) {
        t[i] = given[i] = rf__store_cache_take(st, snap);
        cr_assert_not_null(t[i]);
    }
    for (int i = 0; i < 3; i++) {
        rf__store_cache_give(st, snap, &t[i]);
        cr_assert_null(t[i]);
    }
    for (int i = 0; i < 3; i++) { /* all three were kept: taken again, none built anew */
        rf_cluster_cache_t *again = rf__store_cache_take(st, snap);
        cr_assert(again == given[0] || again == given[1] || again == given[2], "cache %d was not kept", i);
        t[i] = again;
    }
    for (int i = 0; i < 3; i++)
        rf__store_cache_give(st, snap, &t[i]);
    rf__store_set_caches(st, 0, NULL);
    cr_assert_null(rf__store_cache_take(st, snap));
    rf__store_unref(st, &snap);
    rf__store_destroy(&st);
    rf_test_no_leaks();
}
