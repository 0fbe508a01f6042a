/* solver/capacity.h: per-shape capacity roll-ups over the topology tree,
 * shared by the greedy search (solver/greedy.c: one solve's working copy,
 * changed as it places pods) and the cluster cache (solver/cluster_cache.c:
 * kept across solves, changed when a node's `used` does).
 *
 * A shape is a pod set's requests and its eligibility mask. For a shape and
 * the free capacity `free[N * R]`:
 * - fit[n] == the pods of the shape node n takes (0 where the mask says no),
 *   capped at RF__FIT_CAP;
 * - cnt[d] == the sum of fit over the nodes under domain d; maxfit[d] their
 *   largest fit; nmax[d] how many children (nodes, at the leaves) hold it;
 * - on levels with more than RF__BUCKET_LEVEL domains (bucketed), each domain
 *   with cnt > 0 sits in exactly one bucket of its level, by cnt (counts of
 *   RF__BUCKETS and more share the last); rf__shape_index lays the lists out
 *   in one canonical order (a pure function of cnt), which placements then
 *   change as they go;
 * - maxcnt0[l] == the largest cnt at level l when last indexed.
 * Everything is deterministic: ties break by index. */
#ifndef RACKFIT_SOLVER_CAPACITY_H
#define RACKFIT_SOLVER_CAPACITY_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"
#include "rackfit/quantity.h"
#include "rackfit/status.h"
#include "tree.h"

#define RF__BUCKETS      256       /* cnt values with a bucket of their own; more go to overflow */
#define RF__FIT_CAP      (1 << 24) /* pods of one shape on one node are capped here */
#define RF__BUCKET_LEVEL 512       /* levels with more domains keep buckets; others are scanned */

/* What the roll-ups of one tree and one free-capacity table share. */
typedef struct {
    const rf__tree_t *tree;
    int32_t L, N, R, D;
    const int64_t *free;          /* [N * R]; RF_QTY_UNLIMITED stays so */
    bool bucketed[RF_MAX_LEVELS]; /* levels with enough domains to keep buckets for */
} rf__cap_t;

typedef struct {
    const int64_t *req;             /* [R], borrowed (a pod set's, or the cache's copy) */
    int32_t elig;                   /* its eligibility class, numbered by the owner */
    const uint8_t *ok;              /* [N] its eligibility mask, borrowed */
    int32_t n_used;                 /* resources the shape requests */
    int32_t used_res[16];           /* their indices, when n_used <= 16 */
    int32_t *fit;                   /* [N] */
    int64_t *cnt;                   /* [D] */
    int32_t *maxfit;                /* [D] */
    int32_t *nmax;                  /* [D] children (nodes, at the leaves) whose value is maxfit */
    int32_t *bnext;                 /* [D] bucket links, -1 ends */
    int32_t *bprev;                 /* [D] */
    int32_t *bucket;                /* [D] -1: in no bucket (cnt == 0) */
    int32_t *head;                  /* [L * (RF__BUCKETS + 1)] */
    int64_t maxcnt0[RF_MAX_LEVELS]; /* largest cnt per level when last indexed */
} rf__shape_t;

/* Free capacity of one resource on a node: allocatable - used, never below
 * zero; unlimited stays unlimited. */
static inline int64_t rf__cap_free(int64_t allocatable, int64_t used)
{
    return allocatable == RF_QTY_UNLIMITED ? RF_QTY_UNLIMITED : (allocatable > used ? allocatable - used : 0);
}

/* Fill cap's sizes and bucketed levels for `tree` (free still to be set). */
void rf__cap_init(rf__cap_t *cap, const rf__tree_t *tree, int32_t n_resources);

/* The pods of shape `sh` node n takes now. */
int32_t rf__cap_fit(const rf__cap_t *cap, const rf__shape_t *sh, int32_t n);

/* Set req, elig, ok and the requested resources of a shape (nothing else). */
void rf__shape_set(rf__shape_t *sh, const rf__cap_t *cap, const int64_t *req, int32_t elig, const uint8_t *ok);
/* Allocate the tables and compute them from cap->free (RF_ENOMEM; the
 * shape is then safe to rf__shape_fini). */
rf_status rf__shape_build(const rf__cap_t *cap, rf__shape_t *sh);
/* A copy of `src` (tables included) into `dst` (RF_ENOMEM as above). */
rf_status rf__shape_copy(const rf__cap_t *cap, rf__shape_t *dst, const rf__shape_t *src);
/* NULL-safe on a zeroed shape; leaves its tables NULL. */
void rf__shape_fini(rf__shape_t *sh);

/* Node n's free capacity changed: recompute fit[n] and mend cnt, maxfit,
 * nmax and the buckets on its path. Returns whether fit[n] changed. */
bool rf__shape_node(const rf__cap_t *cap, rf__shape_t *sh, int32_t n);
/* Lay the buckets out again in their canonical order and recompute
 * maxcnt0, from cnt. */
void rf__shape_index(const rf__cap_t *cap, rf__shape_t *sh);

#endif
