/* solver/ilp_internal.h: the integer program's shared state, for its three
 * layers inside solver/ (never included elsewhere):
 * - solver/ilp_model.c: the units (identical nodes merged) and the rows and
 *   columns of docs/ilp.md, with the stage objectives;
 * - solver/ilp_decode.c: an answer as a vector of the program (the
 *   incumbent given to GLPK) and a solution as an answer (units packed onto
 *   nodes);
 * - solver/ilp.c: rf__ilp_improve, which wires them to the MIP boundary
 *   (solver/mip.h) and judges the result.
 *
 * Invariants: column lists are grouped per gang (hs, zs) or per flattened
 * pod set (xs, ps_dom, sl) in problem order, with [start[i], start[i+1])
 * the range of gang or pod set i (empty for kept gangs); every x column's
 * unit lies in the tree; `free` is the capacity left after the kept gangs.
 * Running gangs (docs/ilp.md, "Running gangs and preemption"): each has a
 * column q (preempted) or a fixed decision; every node holding a pod of one
 * that is or may be preempted (`vnode`) is a unit of its own, whose
 * capacity is the per-priority rows instead of the plain one; `vfree` is
 * `free` plus everything the running gangs there could free (a bound for
 * the fit of a pod set, never a capacity). */
#ifndef RACKFIT_SOLVER_ILP_INTERNAL_H
#define RACKFIT_SOLVER_ILP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ilp.h"
#include "mip.h"
#include "rackfit/answer.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"
#include "tree.h"

typedef struct {
    int32_t first, count; /* its nodes: unit_nodes[first .. first+count) */
    int32_t group;        /* the domain that holds it at the deepest z level */
} rf__ilp_unit_t;

/* One column keyed by a unit or a domain. */
typedef struct {
    int32_t unit; /* or the domain, for z, z' and w columns */
    int32_t col;
} rf__ilp_uc_t;

/* An indicator "new pods of priority <= prio on node that request res"
 * (docs/ilp.md row 8, where used exceeds allocatable in res). */
typedef struct {
    int32_t col, node, res;
    int64_t prio;
} rf__ilp_delta_t;

/* New pods of a kept gang on a node with running gangs that may be preempted. */
typedef struct {
    int32_t node, gang, ps, count;
} rf__ilp_kept_t;

typedef struct {
    const rf_problem_t *pb;
    rf__tree_t tree;
    int32_t L, N, R;
    bool host_level;             /* the last level is the host: counted by h, not z */
    bool tight;                  /* one linking row per (x, domain), else one per domain */
    const uint8_t *node_allowed; /* [N] nodes new pods may use, or NULL */
    bool isolating;              /* one gang alone: no ordered chains */
    bool tree_owned;             /* the tree was built here (else the problem's hint) */
    int32_t zl;                  /* levels with z variables: L - 1 or L */
    const bool *keep;            /* [n_gangs] gangs kept as in the incumbent */
    const bool *kept_admitted;   /* [n_gangs] their decision there */
    bool unmodelled;             /* the batch's program keeps a gang it cannot model: it proves nothing */
    bool orphan_victim;          /* a victim fixed preempted with no possible preemptor here */
    int64_t *free;               /* [N * R] residual after the kept gangs */
    int64_t *vfree;              /* [N * R] free + what preemptable running gangs there use */
    uint8_t *vnode;              /* [N] holds a running gang that is or may be preempted */
    int32_t *qcol;               /* [n_running] column "preempted", -1: fixed (qfix) */
    bool *qfix;                  /* [n_running] the fixed decision where qcol < 0 */
    bool run_link;               /* preemptor rows and running terms in the objective (not isolating) */
    double run_const;            /* penalty of the running gangs not fixed preempted (program's constant) */
    bool *qkept;                 /* [n_running] a kept gang of higher priority has new pods on its nodes */
    rf__ilp_kept_t *kept_on_v;   /* kept gangs' new pods on vnodes */
    int64_t n_kept_on_v;
    rf__ilp_delta_t *deltas; /* the indicators of row 8 */
    int64_t n_deltas, cap_deltas;
    bool *keep_buf, *kept_adm_buf; /* [n_gangs] what keep and kept_admitted point to */
    bool *own_unit;                /* [N] nodes that are units of their own (bound pods, vnodes) */
    rf__ilp_unit_t *units;
    int32_t n_units;
    int32_t *unit_nodes; /* [N] */
    int32_t *node_unit;  /* [N], -1 outside the tree */
    int32_t *ps0;        /* [n_gangs + 1] first flattened pod set */
    int32_t n_ps;
    /* per flattened free pod set: candidate units and their x columns */
    int64_t *xs_start; /* [n_ps + 1] */
    rf__ilp_uc_t *xs;
    /* per free gang: h columns (host level), y column */
    int64_t *hs_start; /* [n_gangs + 1] */
    rf__ilp_uc_t *hs;
    int32_t *ycol; /* [n_gangs], -1 none */
    int32_t *acol; /* [n_gangs]: "has new pods" for gangs admissible with none (else = ycol) */
    /* z columns: (gang, domain) -> col */
    int64_t *zs_start; /* [n_gangs + 1] */
    rf__ilp_uc_t *zs;
    /* pod-set level and slice columns: (flattened pod set, domain) -> col */
    int64_t *ps_dom_start; /* [n_ps + 1] */
    rf__ilp_uc_t *ps_dom;  /* z' columns */
    int64_t *sl_start;     /* [n_ps + 1] */
    rf__ilp_uc_t *sl;      /* w columns */
    rf__mip_t mip;
    /* rf_now_ms() past which the build gives up (the caller's deadline:
     * the build is not free on large programs, and the incumbent stands) */
    double build_deadline;
    /* the stage objectives, built with the rows */
    int32_t n_stages;
    int32_t *stage_cols[RF_MIP_MAX_STAGES];
    double *stage_vals[RF_MIP_MAX_STAGES];
    int64_t stage_n[RF_MIP_MAX_STAGES], stage_cap[RF_MIP_MAX_STAGES];
} rf__ilp_t;

/* Free everything s holds (NULL-safe on a zeroed s). */
void rf__ilp_fini(rf__ilp_t *s);

/* ilp.c: the program rf__ilp_improve would solve, built into s (zeroed
 * here): the tree, the kept gangs, the residual capacity, the running
 * gangs' decisions, the units, the rows and columns. *skip when there is
 * nothing to model (an isolated gang the program keeps, more priorities
 * than the stages hold, or a region where a victim the run keeps preempted
 * has no possible preemptor); RF_ENOMEM. Free s with rf__ilp_fini whatever
 * happened. For tests and tools; rf__ilp_improve is the one that solves. */
rf_status rf__ilp_open(rf__ilp_t *s, const rf_problem_t *pb, const rf_answer_t *inc, const rf__ilp_opts_t *opts,
                       bool *skip, rf_error_t *err);

/* ilp_model.c */
/* Pods of `req` that fit in the free row `fr` (R resources; unlimited ones
 * never bind), at most `cap`. */
int64_t rf__ilp_fits(const int64_t *fr, int32_t R, const int64_t *req, int64_t cap);
/* Pods of pod set ps that fit on node n in the residual capacity, with
 * what preemptable running gangs there could free (an upper bound). */
int32_t rf__ilp_fit_node(const rf__ilp_t *s, int32_t n, const rf_pod_set_t *ps);
/* Merge nodes into units: same deepest-z-level domain, free vector and
 * eligibility for every free pod set; nodes with bound pods (bound_node)
 * and every node when !aggregate are units of their own. */
rf_status rf__ilp_units(rf__ilp_t *s, bool aggregate, const bool *bound_node);
/* The whole program into s->mip and its stage objectives into s (n_stages:
 * per priority [prefix,] units, pods; the penalty last). RF_ENOMEM, or
 * RF_EINVAL when the free gangs span more priorities than the stages hold,
 * or a victim fixed preempted has no possible preemptor (orphan_victim):
 * the incumbent then stands. */
rf_status rf__ilp_build(rf__ilp_t *s);

/* ilp_decode.c */
/* The incumbent's placements of the free gangs as a vector x[n_cols];
 * false when they do not map onto the program's columns. */
bool rf__ilp_map_incumbent(const rf__ilp_t *s, const rf_answer_t *inc, double *x);
/* The solution x as an answer: kept gangs copied from the incumbent, free
 * gangs' units packed onto nodes. False when packing fails; *oom on ENOMEM. */
bool rf__ilp_decode(const rf__ilp_t *s, const double *x, const rf_answer_t *inc, rf_answer_t *ans, bool *oom);

#endif
