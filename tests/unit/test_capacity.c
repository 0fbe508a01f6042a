/* tests/unit/test_capacity.c: per-shape capacity roll-ups
 * (solver/capacity.c).
 *
 * - rf__cap_fit against fits computed by hand: several resources, an
 *   unlimited one, a node the mask rules out, a shape that requests nothing
 *   and the RF__FIT_CAP cap; the path for shapes of more than 16 resources
 *   against a plain reference.
 * - rf__shape_build on 2 blocks x 2 racks x 2 hosts: cnt, maxfit and nmax of
 *   every domain against values worked out by hand, and against a brute
 *   force over the nodes.
 * - rf__shape_node after a node's free capacity changes: fit, cnt, maxfit,
 *   nmax along its path, equal to a fresh rf__shape_build; nodes outside the
 *   tree stay at 0.
 * - Buckets: every domain with cnt > 0 of a bucketed level on exactly the
 *   list of its bucket (counts of RF__BUCKETS and more in the last), the
 *   others on none; rf__shape_index lays them out as a fresh build does.
 * - rf__shape_copy equals its source and owns its tables.
 * - Random small trees (some nodes outside them): after each random change
 *   of a node's free capacity, the mended shape equals a fresh build field
 *   by field, and after rf__shape_index its bucket lists and maxcnt0 too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "capacity.h"
#include "rackfit/rackfit.h"
#include "tree.h"

#define UNL RF_QTY_UNLIMITED

/* ---------------------------------------------------------------- fixtures */

/* A deterministic generator (splitmix64), so every run draws the same. */
static uint64_t s_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int s_rand(uint64_t *s, int n)
{
    return (int)(s_next(s) % (uint64_t)n);
}

/* A problem whose nodes are listed in `order` (node i of the layout is
 * input node order[i]); node i sits in block blk[i], rack rack[i] (a rack
 * name unique across blocks) and host "h<i>"; rack[i] < 0: no rack label
 * (the node is outside the tree). */
static rf_problem_t *s_cluster(int n, const int *blk, const int *rack, const int *order)
{
    size_t cap = 256 + (size_t)n * 256;
    char *json = malloc(cap);
    cr_assert_not_null(json);
    int len = snprintf(json, cap,
                       "{\"cluster\":{\"levels\":[\"example.com/block\",\"example.com/rack\","
                       "\"kubernetes.io/hostname\"],\"nodes\":[");
    for (int k = 0; k < n; k++) {
        int i = order ? order[k] : k;
        if (rack[i] >= 0)
            len += snprintf(json + len, cap - (size_t)len,
                            "%s{\"name\":\"h%d\",\"labels\":{\"example.com/block\":\"b%d\","
                            "\"example.com/rack\":\"r%d\",\"kubernetes.io/hostname\":\"h%d\"}}",
                            k ? "," : "", i, blk[i], rack[i], i);
        else
            len += snprintf(json + len, cap - (size_t)len,
                            "%s{\"name\":\"h%d\",\"labels\":{\"example.com/block\":\"b%d\","
                            "\"kubernetes.io/hostname\":\"h%d\"}}",
                            k ? "," : "", i, blk[i], i);
    }
    snprintf(json + len, cap - (size_t)len, "]},\"gangs\":[]}");
    rf_problem_t *pb = rf_test_parse(json);
    free(json);
    return pb;
}

/* The reference fit: the plain definition of capacity.h. */
static int32_t s_ref_fit(const int64_t *free_, int32_t R, const int64_t *req, const uint8_t *ok, int32_t n)
{
    if (!ok[n])
        return 0;
    int64_t best = RF__FIT_CAP;
    for (int32_t r = 0; r < R; r++) {
        int64_t q = req[r], f = free_[(int64_t)n * R + r];
        if (q <= 0 || f == UNL)
            continue;
        if (f / q < best)
            best = f / q;
    }
    return (int32_t)best;
}

/* The level-l value (maxfit) of the child domains / nodes: brute force over
 * the nodes. */
static int32_t s_ref_max(const rf__tree_t *t, const int32_t *fit, int32_t d)
{
    int32_t m = 0;
    int32_t l = t->level[d];
    for (int32_t n = 0; n < t->n_nodes; n++)
        if (rf__tree_node_dom(t, n, l) == d && fit[n] > m)
            m = fit[n];
    return m;
}

/* cnt, maxfit and nmax of every domain against a brute force over the nodes
 * from the reference fits (which sh->fit must equal). */
static void s_check_rollups(const rf__cap_t *cap, const rf__shape_t *sh, const int32_t *fit, const char *what)
{
    const rf__tree_t *t = cap->tree;
    for (int32_t n = 0; n < cap->N; n++)
        cr_assert_eq(sh->fit[n], fit[n], "%s: fit[%d] %d, expected %d", what, n, sh->fit[n], fit[n]);
    for (int32_t d = 0; d < cap->D; d++) {
        int32_t l = t->level[d];
        int64_t sum = 0;
        for (int32_t n = 0; n < cap->N; n++)
            if (rf__tree_node_dom(t, n, l) == d)
                sum += fit[n];
        int32_t m = s_ref_max(t, fit, d);
        int32_t k = 0;
        if (l == cap->L - 1) {
            for (int32_t n = 0; n < cap->N; n++)
                k += rf__tree_node_dom(t, n, l) == d && fit[n] == m;
        } else {
            for (int32_t c = 0; c < cap->D; c++)
                k += t->parent[c] == d && s_ref_max(t, fit, c) == m;
        }
        cr_assert_eq(sh->cnt[d], sum, "%s: cnt[%d] (level %d) %lld, expected %lld", what, d, l, (long long)sh->cnt[d],
                     (long long)sum);
        cr_assert_eq(sh->maxfit[d], m, "%s: maxfit[%d] %d, expected %d", what, d, sh->maxfit[d], m);
        cr_assert_eq(sh->nmax[d], k, "%s: nmax[%d] %d, expected %d", what, d, sh->nmax[d], k);
    }
}

static int32_t s_bucket_of(int64_t cnt)
{
    return cnt <= 0 ? -1 : cnt >= RF__BUCKETS ? RF__BUCKETS : (int32_t)cnt;
}

/* Every domain of a bucketed level with cnt > 0 on exactly the list of its
 * bucket, linked both ways; nothing else on any list. */
static void s_check_buckets(const rf__cap_t *cap, const rf__shape_t *sh, const char *what)
{
    const rf__tree_t *t = cap->tree;
    int32_t *seen = calloc((size_t)cap->D + 1, sizeof *seen);
    cr_assert_not_null(seen);
    for (int32_t l = 0; l < cap->L; l++) {
        const int32_t *heads = &sh->head[(int64_t)l * (RF__BUCKETS + 1)];
        for (int32_t b = 0; b <= RF__BUCKETS; b++) {
            if (!cap->bucketed[l]) {
                cr_assert_eq(heads[b], -1, "%s: level %d keeps no buckets, bucket %d has %d", what, l, b, heads[b]);
                continue;
            }
            int32_t prev = -1, steps = 0;
            for (int32_t d = heads[b]; d >= 0; d = sh->bnext[d]) {
                cr_assert(d >= t->level_start[l] && d < t->level_start[l + 1], "%s: domain %d on a list of level %d",
                          what, d, l);
                cr_assert_eq(seen[d], 0, "%s: domain %d on two lists (or twice on one)", what, d);
                seen[d] = 1;
                cr_assert_eq(sh->bucket[d], b, "%s: domain %d on list %d says bucket %d", what, d, b, sh->bucket[d]);
                cr_assert_eq(s_bucket_of(sh->cnt[d]), b, "%s: domain %d with cnt %lld on list %d", what, d,
                             (long long)sh->cnt[d], b);
                cr_assert_eq(sh->bprev[d], prev, "%s: bprev[%d] %d, expected %d", what, d, sh->bprev[d], prev);
                prev = d;
                cr_assert_leq(++steps, cap->D, "%s: list %d of level %d loops", what, b, l);
            }
        }
        for (int32_t d = t->level_start[l]; d < t->level_start[l + 1]; d++) {
            if (cap->bucketed[l] && sh->cnt[d] > 0)
                cr_assert_eq(seen[d], 1, "%s: domain %d (cnt %lld) on no list", what, d, (long long)sh->cnt[d]);
            else
                cr_assert_eq(sh->bucket[d], -1, "%s: domain %d in bucket %d (cnt %lld, bucketed %d)", what, d,
                             sh->bucket[d], (long long)sh->cnt[d], cap->bucketed[l]);
        }
    }
    free(seen);
}

/* a == b field by field; `lists`: the bucket links, heads and maxcnt0 too
 * (both laid out canonically, or one a copy of the other). */
static void s_assert_same(const rf__cap_t *cap, const rf__shape_t *a, const rf__shape_t *b, bool lists,
                          const char *what)
{
    for (int32_t n = 0; n < cap->N; n++)
        cr_assert_eq(a->fit[n], b->fit[n], "%s: fit[%d] %d vs %d", what, n, a->fit[n], b->fit[n]);
    for (int32_t d = 0; d < cap->D; d++) {
        cr_assert_eq(a->cnt[d], b->cnt[d], "%s: cnt[%d] %lld vs %lld", what, d, (long long)a->cnt[d],
                     (long long)b->cnt[d]);
        cr_assert_eq(a->maxfit[d], b->maxfit[d], "%s: maxfit[%d] %d vs %d", what, d, a->maxfit[d], b->maxfit[d]);
        cr_assert_eq(a->nmax[d], b->nmax[d], "%s: nmax[%d] %d vs %d", what, d, a->nmax[d], b->nmax[d]);
        cr_assert_eq(a->bucket[d], b->bucket[d], "%s: bucket[%d] %d vs %d", what, d, a->bucket[d], b->bucket[d]);
        if (lists) {
            cr_assert_eq(a->bnext[d], b->bnext[d], "%s: bnext[%d] %d vs %d", what, d, a->bnext[d], b->bnext[d]);
            cr_assert_eq(a->bprev[d], b->bprev[d], "%s: bprev[%d] %d vs %d", what, d, a->bprev[d], b->bprev[d]);
        }
    }
    if (!lists)
        return;
    for (int32_t i = 0; i < cap->L * (RF__BUCKETS + 1); i++)
        cr_assert_eq(a->head[i], b->head[i], "%s: head[%d] %d vs %d", what, i, a->head[i], b->head[i]);
    for (int32_t l = 0; l < cap->L; l++)
        cr_assert_eq(a->maxcnt0[l], b->maxcnt0[l], "%s: maxcnt0[%d] %lld vs %lld", what, l, (long long)a->maxcnt0[l],
                     (long long)b->maxcnt0[l]);
}

/* The hand-made cluster: blocks b0 (racks r0, r1) and b1 (r2, r3), two hosts
 * a rack, nodes listed h0..h7. */
static rf_problem_t *s_hand_cluster(void)
{
    static const int blk[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    static const int rack[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    return s_cluster(8, blk, rack, NULL);
}

/* cpu, gpu, and a third resource unlimited but on h0 */
static const int64_t s_hand_free[8 * 3] = {
    8,   4,   3,   /* h0: min(4, 4, 3) = 3 */
    3,   8,   UNL, /* h1: 1 */
    10,  0,   UNL, /* h2: 0, no gpu left */
    16,  2,   UNL, /* h3: 2 */
    UNL, 3,   UNL, /* h4: 3 */
    8,   4,   UNL, /* h5: 4, but not eligible */
    6,   UNL, UNL, /* h6: 3 */
    1,   1,   UNL, /* h7: 0, cpu below one pod */
};
static const int64_t s_hand_req[3] = {2, 1, 1};
static const uint8_t s_hand_ok[8] = {1, 1, 1, 1, 1, 0, 1, 1};

/* ---------------------------------------------------------------- rf__cap_fit */

Test(capacity, cap_init_sizes_and_bucketed_levels)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 3);
    cr_assert_eq(cap.tree, &t);
    cr_assert_eq(cap.L, 3);
    cr_assert_eq(cap.N, 8);
    cr_assert_eq(cap.R, 3);
    cr_assert_eq(cap.D, 2 + 4 + 8);
    for (int32_t l = 0; l < 3; l++)
        cr_assert_not(cap.bucketed[l], "level %d has at most 8 domains", l);
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);

    /* one block, one rack, RF__BUCKET_LEVEL + 1 hosts: only the host level keeps buckets */
    int n = RF__BUCKET_LEVEL + 1;
    int *blk = calloc((size_t)n, sizeof *blk), *rack = calloc((size_t)n, sizeof *rack);
    cr_assert(blk && rack);
    pb = s_cluster(n, blk, rack, NULL);
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_init(&cap, &t, 1);
    cr_assert_not(cap.bucketed[0]);
    cr_assert_not(cap.bucketed[1]);
    cr_assert(cap.bucketed[2], "a level of %d domains keeps buckets", n);
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    free(blk);
    free(rack);
    rf_test_no_leaks();
}

Test(capacity, cap_fit_matches_hand_computed_fits)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 3);
    cap.free = s_hand_free;
    rf__shape_t sh;
    memset(&sh, 0, sizeof sh);
    rf__shape_set(&sh, &cap, s_hand_req, 7, s_hand_ok);
    cr_assert_eq(sh.req, s_hand_req);
    cr_assert_eq(sh.elig, 7);
    cr_assert_eq(sh.ok, s_hand_ok);
    cr_assert_eq(sh.n_used, 3);
    cr_assert(sh.used_res[0] == 0 && sh.used_res[1] == 1 && sh.used_res[2] == 2);
    const int32_t want[8] = {3, 1, 0, 2, 3, 0, 3, 0};
    for (int32_t n = 0; n < 8; n++)
        cr_assert_eq(rf__cap_fit(&cap, &sh, n), want[n], "h%d: fit %d, expected %d", n, rf__cap_fit(&cap, &sh, n),
                     want[n]);

    /* only gpu requested: cpu no longer limits; h4's 3 gpus, h6's unlimited gpu */
    const int64_t gpu_only[3] = {0, 2, 0};
    rf__shape_set(&sh, &cap, gpu_only, 0, s_hand_ok);
    cr_assert_eq(sh.n_used, 1);
    cr_assert_eq(sh.used_res[0], 1);
    const int32_t want_gpu[8] = {2, 4, 0, 1, 1, 0, RF__FIT_CAP, 0};
    for (int32_t n = 0; n < 8; n++)
        cr_assert_eq(rf__cap_fit(&cap, &sh, n), want_gpu[n], "h%d: gpu fit %d, expected %d", n,
                     rf__cap_fit(&cap, &sh, n), want_gpu[n]);

    /* a shape that requests nothing takes RF__FIT_CAP wherever it may go */
    const int64_t none[3] = {0, 0, 0};
    rf__shape_set(&sh, &cap, none, 0, s_hand_ok);
    cr_assert_eq(sh.n_used, 0);
    for (int32_t n = 0; n < 8; n++)
        cr_assert_eq(rf__cap_fit(&cap, &sh, n), s_hand_ok[n] ? RF__FIT_CAP : 0, "h%d", n);

    /* huge free capacity is capped at RF__FIT_CAP */
    const int64_t big[3] = {(int64_t)1 << 40, 1, 0};
    cap.free = big;
    const int64_t one[3] = {1, 0, 0};
    rf__shape_set(&sh, &cap, one, 0, s_hand_ok);
    cr_assert_eq(rf__cap_fit(&cap, &sh, 0), RF__FIT_CAP);
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(capacity, cap_fit_with_more_than_16_resources_matches_the_reference)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    enum { R = 20 };
    rf__cap_t cap;
    rf__cap_init(&cap, &t, R);
    int64_t free_[8 * R], req[R];
    uint8_t ok[8];
    rf__shape_t sh;
    memset(&sh, 0, sizeof sh);
    uint64_t s = 17;
    for (int round = 0; round < 200; round++) {
        int used = 0;
        for (int32_t r = 0; r < R; r++) {
            req[r] = s_rand(&s, 10) < 9 ? 1 + s_rand(&s, 4) : 0;
            used += req[r] > 0;
        }
        for (int32_t i = 0; i < 8 * R; i++)
            free_[i] = s_rand(&s, 8) == 0 ? UNL : s_rand(&s, 40);
        for (int32_t n = 0; n < 8; n++)
            ok[n] = s_rand(&s, 5) != 0;
        cap.free = free_;
        rf__shape_set(&sh, &cap, req, 0, ok);
        cr_assert_eq(sh.n_used, used);
        for (int32_t n = 0; n < 8; n++)
            cr_assert_eq(rf__cap_fit(&cap, &sh, n), s_ref_fit(free_, R, req, ok, n), "round %d node %d (%d used)",
                         round, n, used);
    }
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* ---------------------------------------------------------------- build, node, index, copy */

Test(capacity, build_on_a_small_tree_matches_hand_sums)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 3);
    cap.free = s_hand_free;
    rf__shape_t sh;
    memset(&sh, 0, sizeof sh);
    rf__shape_set(&sh, &cap, s_hand_req, 0, s_hand_ok);
    cr_assert_eq(rf__shape_build(&cap, &sh), RF_OK);

    const int32_t fit[8] = {3, 1, 0, 2, 3, 0, 3, 0};
    /* racks: r0 {3,1} r1 {0,2} r2 {3,0} r3 {3,0}; blocks: b0 {r0:3, r1:2}, b1 {r2:3, r3:3} */
    struct {
        int node, level;
        int64_t cnt;
        int32_t maxfit, nmax;
    } want[] = {
        {0, 0, 6, 3, 1}, {4, 0, 6, 3, 2}, {0, 1, 4, 3, 1}, {2, 1, 2, 2, 1}, {4, 1, 3, 3, 1},
        {6, 1, 3, 3, 1}, {0, 2, 3, 3, 1}, {2, 2, 0, 0, 1}, {5, 2, 0, 0, 1}, {7, 2, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int32_t d = rf__tree_node_dom(&t, want[i].node, want[i].level);
        cr_assert_geq(d, 0);
        cr_assert_eq(sh.cnt[d], want[i].cnt, "h%d level %d: cnt %lld, expected %lld", want[i].node, want[i].level,
                     (long long)sh.cnt[d], (long long)want[i].cnt);
        cr_assert_eq(sh.maxfit[d], want[i].maxfit, "h%d level %d: maxfit %d", want[i].node, want[i].level,
                     sh.maxfit[d]);
        cr_assert_eq(sh.nmax[d], want[i].nmax, "h%d level %d: nmax %d", want[i].node, want[i].level, sh.nmax[d]);
    }
    s_check_rollups(&cap, &sh, fit, "hand build");
    s_check_buckets(&cap, &sh, "hand build");
    cr_assert_eq(sh.maxcnt0[0], 6);
    cr_assert_eq(sh.maxcnt0[1], 4);
    cr_assert_eq(sh.maxcnt0[2], 3);
    rf__shape_fini(&sh);
    cr_assert_null(sh.fit);
    cr_assert_null(sh.cnt);
    rf__shape_fini(&sh); /* a second fini is harmless */
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(capacity, node_change_mends_its_path_like_a_fresh_build)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 3);
    cap.bucketed[0] = cap.bucketed[1] = cap.bucketed[2] = true; /* keep lists on every level */
    int64_t free_[8 * 3];
    memcpy(free_, s_hand_free, sizeof free_);
    cap.free = free_;
    rf__shape_t sh, fresh;
    memset(&sh, 0, sizeof sh);
    rf__shape_set(&sh, &cap, s_hand_req, 0, s_hand_ok);
    cr_assert_eq(rf__shape_build(&cap, &sh), RF_OK);
    s_check_buckets(&cap, &sh, "bucketed build");

    int32_t b0 = rf__tree_node_dom(&t, 0, 0), r0 = rf__tree_node_dom(&t, 0, 1), h0 = rf__tree_node_dom(&t, 0, 2);
    int32_t b1 = rf__tree_node_dom(&t, 4, 0);

    /* h0 loses its gpus: fit 3 -> 0; r0 {0,1}: cnt 1 max 1; b0 {r0:1, r1:2}: cnt 3 max 2 */
    free_[0 * 3 + 1] = 0;
    cr_assert(rf__shape_node(&cap, &sh, 0));
    cr_assert_eq(sh.fit[0], 0);
    cr_assert(sh.cnt[h0] == 0 && sh.maxfit[h0] == 0 && sh.nmax[h0] == 1);
    cr_assert(sh.cnt[r0] == 1 && sh.maxfit[r0] == 1 && sh.nmax[r0] == 1);
    cr_assert(sh.cnt[b0] == 3 && sh.maxfit[b0] == 2 && sh.nmax[b0] == 1);
    cr_assert(sh.cnt[b1] == 6 && sh.maxfit[b1] == 3 && sh.nmax[b1] == 2, "b1 untouched");
    cr_assert_eq(sh.bucket[h0], -1, "a domain with cnt 0 sits in no bucket");
    cr_assert_eq(sh.bucket[b0], 3);
    s_check_buckets(&cap, &sh, "after h0");

    /* a change that leaves the fit as it is: nothing to mend */
    free_[0 * 3 + 0] = 7;
    cr_assert_not(rf__shape_node(&cap, &sh, 0));

    /* h7 gets room for 5 (cpu 10, gpu 5): r3 {3,5} max 5; b1 {r2:3, r3:5}: cnt 11 max 5 nmax 1 */
    free_[7 * 3 + 0] = 10;
    free_[7 * 3 + 1] = 5;
    cr_assert(rf__shape_node(&cap, &sh, 7));
    cr_assert(sh.cnt[b1] == 11 && sh.maxfit[b1] == 5 && sh.nmax[b1] == 1);
    /* h6 down to 0: r3 {0,5} still 5 */
    free_[6 * 3 + 0] = 0;
    cr_assert(rf__shape_node(&cap, &sh, 6));
    /* h4 up to 5 (cpu unlimited, gpu 5): b1 {r2:5, r3:5} nmax 2 */
    free_[4 * 3 + 1] = 5;
    cr_assert(rf__shape_node(&cap, &sh, 4));
    cr_assert(sh.cnt[b1] == 10 && sh.maxfit[b1] == 5 && sh.nmax[b1] == 2);
    const int32_t fit[8] = {0, 1, 0, 2, 5, 0, 0, 5};
    s_check_rollups(&cap, &sh, fit, "after four changes");
    s_check_buckets(&cap, &sh, "after four changes");

    memset(&fresh, 0, sizeof fresh);
    rf__shape_set(&fresh, &cap, s_hand_req, 0, s_hand_ok);
    cr_assert_eq(rf__shape_build(&cap, &fresh), RF_OK);
    s_assert_same(&cap, &sh, &fresh, false, "mended vs fresh");
    rf__shape_index(&cap, &sh);
    s_assert_same(&cap, &sh, &fresh, true, "mended and indexed vs fresh");
    cr_assert_eq(sh.maxcnt0[0], 10);
    rf__shape_fini(&sh);
    rf__shape_fini(&fresh);
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(capacity, index_puts_every_domain_on_the_list_of_its_bucket)
{
    /* racks of 3 hosts with fits up to 120: rack counts reach the overflow bucket */
    enum { N = 24 };
    int blk[N], rack[N];
    for (int i = 0; i < N; i++) {
        blk[i] = i / 12;
        rack[i] = i / 3;
    }
    rf_problem_t *pb = s_cluster(N, blk, rack, NULL);
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 1);
    cap.bucketed[0] = cap.bucketed[1] = cap.bucketed[2] = true;
    int64_t free_[N];
    uint8_t ok[N];
    const int64_t req[1] = {1};
    for (int i = 0; i < N; i++) {
        free_[i] = i % 4 == 0 ? 0 : (i * 37) % 121;
        ok[i] = 1;
    }
    cap.free = free_;
    rf__shape_t sh;
    memset(&sh, 0, sizeof sh);
    rf__shape_set(&sh, &cap, req, 0, ok);
    cr_assert_eq(rf__shape_build(&cap, &sh), RF_OK);
    s_check_buckets(&cap, &sh, "built");
    bool overflow = false, zero = false;
    for (int32_t d = 0; d < cap.D; d++) {
        overflow |= sh.bucket[d] == RF__BUCKETS;
        zero |= sh.cnt[d] == 0;
    }
    cr_assert(overflow, "some domain counts %d or more", RF__BUCKETS);
    cr_assert(zero, "some domain counts 0");
    for (int32_t l = 0; l < cap.L; l++) {
        int64_t m = 0;
        for (int32_t d = t.level_start[l]; d < t.level_start[l + 1]; d++)
            m = sh.cnt[d] > m ? sh.cnt[d] : m;
        cr_assert_eq(sh.maxcnt0[l], m, "maxcnt0[%d]", l);
    }
    /* mend a few nodes (lists change order), then index again: the canonical layout */
    rf__shape_t fresh;
    memset(&fresh, 0, sizeof fresh);
    for (int i = 0; i < N; i += 5) {
        free_[i] = (free_[i] + 50) % 130;
        rf__shape_node(&cap, &sh, i);
        s_check_buckets(&cap, &sh, "mended");
    }
    rf__shape_index(&cap, &sh);
    s_check_buckets(&cap, &sh, "indexed again");
    rf__shape_set(&fresh, &cap, req, 0, ok);
    cr_assert_eq(rf__shape_build(&cap, &fresh), RF_OK);
    s_assert_same(&cap, &sh, &fresh, true, "indexed vs fresh");
    /* indexing twice changes nothing */
    rf__shape_index(&cap, &fresh);
    s_assert_same(&cap, &sh, &fresh, true, "indexed twice");
    rf__shape_fini(&sh);
    rf__shape_fini(&fresh);
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(capacity, copy_equals_the_source_and_owns_its_tables)
{
    rf_problem_t *pb = s_hand_cluster();
    rf__tree_t t;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
    rf__cap_t cap;
    rf__cap_init(&cap, &t, 3);
    cap.bucketed[1] = cap.bucketed[2] = true;
    int64_t free_[8 * 3];
    memcpy(free_, s_hand_free, sizeof free_);
    cap.free = free_;
    rf__shape_t sh, cp;
    memset(&sh, 0, sizeof sh);
    memset(&cp, 0, sizeof cp);
    rf__shape_set(&sh, &cap, s_hand_req, 5, s_hand_ok);
    cr_assert_eq(rf__shape_build(&cap, &sh), RF_OK);
    /* a mended shape (lists no longer canonical) */
    free_[3 * 3 + 1] = 9;
    cr_assert(rf__shape_node(&cap, &sh, 3));
    free_[1 * 3 + 0] = 0;
    cr_assert(rf__shape_node(&cap, &sh, 1));
    cr_assert_eq(rf__shape_copy(&cap, &cp, &sh), RF_OK);
    cr_assert_eq(cp.req, sh.req);
    cr_assert_eq(cp.ok, sh.ok);
    cr_assert_eq(cp.elig, 5);
    cr_assert_eq(cp.n_used, sh.n_used);
    for (int i = 0; i < sh.n_used && i < 16; i++)
        cr_assert_eq(cp.used_res[i], sh.used_res[i]);
    cr_assert(cp.fit != sh.fit && cp.cnt != sh.cnt && cp.maxfit != sh.maxfit && cp.nmax != sh.nmax &&
              cp.bnext != sh.bnext && cp.bprev != sh.bprev && cp.bucket != sh.bucket && cp.head != sh.head);
    s_assert_same(&cap, &cp, &sh, true, "copy");
    /* the copy moves on its own */
    int32_t before = sh.fit[5];
    int64_t cnt_before = sh.cnt[rf__tree_node_dom(&t, 6, 0)];
    free_[6 * 3 + 0] = 0;
    cr_assert(rf__shape_node(&cap, &cp, 6));
    cr_assert_eq(sh.fit[5], before);
    cr_assert_eq(sh.cnt[rf__tree_node_dom(&t, 6, 0)], cnt_before, "the source did not change");
    cr_assert_eq(cp.cnt[rf__tree_node_dom(&t, 6, 0)], cnt_before - 3);
    s_check_buckets(&cap, &cp, "copy mended");
    rf__shape_fini(&sh);
    rf__shape_fini(&cp);
    rf__shape_t zero;
    memset(&zero, 0, sizeof zero);
    rf__shape_fini(&zero); /* NULL-safe on a zeroed shape */
    rf__tree_fini(&t);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* ---------------------------------------------------------------- random trees */

Test(capacity, random_changes_mended_equal_a_fresh_build, .timeout = 300)
{
    int checked = 0, changed = 0, outside = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        uint64_t s = seed * 7919;
        int nb = 1 + s_rand(&s, 3);
        int N = 0, nr = 0;
        int blk[64], rack[64], order[64];
        for (int b = 0; b < nb; b++) {
            int racks = 1 + s_rand(&s, 3);
            for (int r = 0; r < racks; r++, nr++) {
                int hosts = 1 + s_rand(&s, 4);
                for (int h = 0; h < hosts && N < 60; h++, N++) {
                    blk[N] = b;
                    rack[N] = s_rand(&s, 12) == 0 ? -1 : nr; /* now and then a node outside the tree */
                }
            }
        }
        if (N < 2) { /* at least one node in the tree */
            blk[N] = 0;
            rack[N] = 0;
            N++;
        }
        rack[0] = rack[0] < 0 ? 0 : rack[0];
        for (int i = 0; i < N; i++)
            order[i] = i;
        for (int i = N - 1; i > 0; i--) { /* listed in a random order */
            int j = s_rand(&s, i + 1), tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        rf_problem_t *pb = s_cluster(N, blk, rack, order);
        rf__tree_t t;
        rf_error_t err;
        cr_assert_eq(rf__tree_build(pb, &t, &err), RF_OK, "%s", err.message);
        int32_t R = 1 + s_rand(&s, 4);
        rf__cap_t cap;
        rf__cap_init(&cap, &t, R);
        for (int32_t l = 0; l < cap.L; l++)
            cap.bucketed[l] = s_rand(&s, 3) != 0;
        int64_t scale = s_rand(&s, 3) == 0 ? 400 : 30;
        int64_t *free_ = malloc((size_t)N * (size_t)R * sizeof *free_);
        int64_t *req = malloc((size_t)R * sizeof *req);
        uint8_t *ok = malloc((size_t)N);
        int32_t *fit = malloc((size_t)N * sizeof *fit);
        cr_assert(free_ && req && ok && fit);
        for (int32_t r = 0; r < R; r++)
            req[r] = r == 0 || s_rand(&s, 3) ? 1 + s_rand(&s, 4) : 0;
        for (int32_t i = 0; i < N * R; i++)
            free_[i] = s_rand(&s, 10) == 0 ? UNL : s_rand(&s, (int)scale);
        for (int32_t n = 0; n < N; n++)
            ok[n] = s_rand(&s, 6) != 0;
        cap.free = free_;
        rf__shape_t sh, fresh;
        memset(&sh, 0, sizeof sh);
        rf__shape_set(&sh, &cap, req, 0, ok);
        cr_assert_eq(rf__shape_build(&cap, &sh), RF_OK);
        for (int32_t n = 0; n < N; n++) {
            bool in = rf__tree_node_dom(&t, n, 0) >= 0;
            fit[n] = in ? s_ref_fit(free_, R, req, ok, n) : 0;
        }
        char what[96];
        snprintf(what, sizeof what, "seed %llu built", (unsigned long long)seed);
        s_check_rollups(&cap, &sh, fit, what);
        s_check_buckets(&cap, &sh, what);
        for (int step = 0; step < 40; step++) {
            int32_t n = s_rand(&s, N);
            bool in = rf__tree_node_dom(&t, n, 0) >= 0;
            int k = 1 + s_rand(&s, R);
            for (int i = 0; i < k; i++) {
                int32_t r = s_rand(&s, R);
                int64_t *f = &free_[(int64_t)n * R + r];
                int how = s_rand(&s, 10);
                if (how == 0)
                    *f = UNL;
                else if (how <= 2)
                    *f = 0;
                else if (*f != UNL && how <= 6) /* placements: a little less */
                    *f = *f > 3 ? *f - 1 - s_rand(&s, 3) : 0;
                else
                    *f = s_rand(&s, (int)scale);
            }
            int32_t want = in ? s_ref_fit(free_, R, req, ok, n) : 0;
            bool moved = rf__shape_node(&cap, &sh, n);
            snprintf(what, sizeof what, "seed %llu step %d node %d", (unsigned long long)seed, step, n);
            cr_assert_eq(moved, want != fit[n], "%s: returned %d, fit %d -> %d", what, moved, fit[n], want);
            changed += moved;
            outside += !in;
            fit[n] = want;
            s_check_rollups(&cap, &sh, fit, what);
            s_check_buckets(&cap, &sh, what);
            memset(&fresh, 0, sizeof fresh);
            rf__shape_set(&fresh, &cap, req, 0, ok);
            cr_assert_eq(rf__shape_build(&cap, &fresh), RF_OK);
            s_assert_same(&cap, &sh, &fresh, false, what);
            if (step % 8 == 7) {
                rf__shape_index(&cap, &sh);
                s_assert_same(&cap, &sh, &fresh, true, what);
            }
            rf__shape_fini(&fresh);
            checked++;
        }
        rf__shape_fini(&sh);
        free(free_);
        free(req);
        free(ok);
        free(fit);
        rf__tree_fini(&t);
        rf_problem_destroy(&pb);
    }
    cr_assert_gt(changed, checked / 4, "most changes moved a fit (%d of %d)", changed, checked);
    cr_assert_gt(outside, 0, "some changes hit a node outside the tree");
    rf_test_no_leaks();
}
