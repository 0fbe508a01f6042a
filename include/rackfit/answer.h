/* rackfit/answer.h: an answer to a placement problem (PLACEMENT-MODEL.md
 * section 3), and its JSON form.
 *
 * An answer refers to its problem by index: gangs[i] answers problem gang i,
 * pod_sets[j] its pod set j, placements name node indices. It holds only the
 * new pods, in rank order. An answer is owned by its caller and freed with
 * rf_answer_destroy; it does not own the problem.
 *
 * Who fills what:
 * - solvers add placements (rf_answer_add, which also marks the gang
 *   admitted), reject gangs (rf_answer_reject), set `admitted` themselves
 *   for a gang whose bound pods already suffice, preempt running gangs
 *   (rf_answer_preempt), then call rf_answer_finish;
 * - rf_answer_finish computes every gang's domains and penalty, each
 *   preempted running gang's `by` (the admitted gangs of higher priority with
 *   new pods on its nodes), and the summary's counts, value and penalty
 *   (kept running gangs included), and sets the has_* flags. It never
 *   touches summary.penalty_bound, optimal, mode_used or solve_ms: those
 *   belong to the solver. rf_answer_new starts them at 0 (a valid lower
 *   bound: penalties are never negative), false, NULL ("none") and 0.
 * - rf_answer_from_json sets the has_* flags for what the text held, so the
 *   checker compares reported totals only when they were reported.
 *
 * A gang admitted with no pods at all has domains 0 and penalty 0: a level
 * term is level_costs[l] * max(D(g,l) - 1, 0). */
#ifndef RACKFIT_ANSWER_H
#define RACKFIT_ANSWER_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"
#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t node;
    int32_t count;
} rf_placement_t;

typedef struct {
    rf_placement_t *placements;
    int32_t n_placements;
    int32_t cap_placements;
} rf_pod_set_answer_t;

/* Why a gang was rejected, in fields: each is -1 when it does not apply. */
typedef struct {
    int32_t level;    /* level index */
    int32_t resource; /* resource index */
    int64_t fits;
    int64_t needs;
} rf_why_t;

typedef struct {
    bool admitted;
    rf_pod_set_answer_t *pod_sets;  /* [n_pod_sets of the gang]; empty when rejected */
    int32_t domains[RF_MAX_LEVELS]; /* D(g,l) per level; 0 when rejected */
    double penalty;
    char *reason; /* owned; NULL when admitted */
    rf_why_t why;
    bool has_domains; /* `domains` is set (by rf_answer_finish, or read from JSON) */
    bool has_penalty; /* `penalty` is set (likewise) */
} rf_gang_answer_t;

/* What the answer does with one running gang of the problem: kept, or
 * preempted whole for the gangs in `by`. */
typedef struct {
    bool preempted;
    int32_t *by; /* owned; gang indices of its preemptors, increasing (problem order) */
    int32_t n_by;
} rf_running_answer_t;

typedef struct {
    int64_t priority;
    int64_t units;
    int64_t pods;
} rf_value_t;

typedef struct {
    int32_t admitted;
    int32_t rejected;
    int32_t preempted; /* running gangs preempted */
    rf_value_t *value; /* one per distinct priority (gangs' and running gangs'), highest first;
                        * kept running gangs count in it */
    int32_t n_value;
    double penalty;
    double penalty_bound;
    bool optimal;
    const char *mode_used; /* static string: "greedy", "ilp", ...; NULL: "none" */
    double solve_ms;
    bool has_counts;    /* admitted/rejected are set (finish, or read from JSON) */
    bool has_preempted; /* preempted is set (likewise) */
    bool has_value;     /* value is set (likewise) */
    bool has_penalty;   /* penalty is set (likewise) */
} rf_summary_t;

typedef struct rf_answer {
    const rf_problem_t *problem; /* borrowed */
    rf_gang_answer_t *gangs;     /* [problem->n_gangs] */
    int32_t n_gangs;
    rf_running_answer_t *running; /* [problem->n_running]; all kept in a new answer */
    int32_t n_running;
    bool has_running; /* `running` was written (finish, or read from JSON) */
    rf_summary_t summary;
    char *mode_owned; /* internal: an owned mode_used read from JSON, or NULL */
} rf_answer_t;

/* An answer for `problem` that admits nothing. NULL on ENOMEM. */
rf_answer_t *rf_answer_new(const rf_problem_t *problem);
/* NULL-safe; sets *answer to NULL. */
void rf_answer_destroy(rf_answer_t **answer);
/* Forget gang g's placements and reason (keeps allocated memory). */
void rf_answer_gang_reset(rf_answer_t *answer, int32_t gang);
/* Append `count` pods on `node` to a pod set's list (merging with the last
 * entry when it is the same node) and mark the gang admitted. count 0 is a
 * no-op; bad indices or a negative count are RF_EINVAL. */
rf_status rf_answer_add(rf_answer_t *answer, int32_t gang, int32_t pod_set, int32_t node, int32_t count);
/* Reject gang g (dropping its placements) with a reason (printf-style) and
 * its fields (-1 where they do not apply). */
rf_status rf_answer_reject(rf_answer_t *answer, int32_t gang, rf_why_t why, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Mark running gang r preempted (true) or kept (false); `by` is left to
 * rf_answer_finish. Bad indices are RF_EINVAL. */
rf_status rf_answer_preempt(rf_answer_t *answer, int32_t running, bool preempted);
/* The penalty of the running gangs `answer` keeps (a constant once the
 * preempted set is chosen): solvers add it to a penalty_bound computed over
 * the admitted gangs, so that the bound covers the same total as
 * summary.penalty. */
double rf_answer_kept_penalty(const rf_answer_t *answer);

/* Copy `src` (same problem) into `dst`, reusing dst's memory. RF_EINVAL when
 * the problems differ. */
rf_status rf_answer_copy(rf_answer_t *dst, const rf_answer_t *src);

/* Fill every gang's `domains` and `penalty` and the summary's counts, value
 * and penalty from the placements (solvers and baselines call it once their
 * placements are final; the checker does NOT use it). Bound pods count
 * toward domains and value. Leaves penalty_bound, optimal, mode_used and
 * solve_ms alone. RF_ENOMEM (answer unchanged) when scratch memory fails;
 * callers may ignore the result only where they ignore ENOMEM elsewhere. */
rf_status rf_answer_finish(rf_answer_t *answer);

/* Compare two finished answers to one problem by the contract's objective:
 * for each priority, highest first, the value admitted and kept (units,
 * then pods: more is better) - with `ordered` admission, first the number of gangs
 * admitted at that priority (the longest prefix) - then the total penalty
 * (less is better). < 0 when `a` is better, > 0 when `b` is, 0 when equal
 * (penalties within 1e-9, relative to the larger when it exceeds 1). */
int rf_answer_compare(const rf_answer_t *a, const rf_answer_t *b);

/* The answer as a document tree (base/doc.h: rf_doc_t), the one encoder
 * that the JSON writer and rackfitd's MessagePack codec both serialise
 * generically: the contract's keys in a fixed order (gangs, running when the
 * problem has running gangs, summary), penalties and times as floats. The
 * tree's maps and arrays are allocated in `arena` (NULL: the problem's own
 * arena, only for a caller that owns the problem and uses it from one
 * thread); its strings are borrowed from the problem and the answer, so the
 * tree must not outlive either. Writes the stored figures as they are
 * (finish first). */
struct rf_doc;
struct rf__arena;
rf_status rf_answer_to_doc(const rf_answer_t *answer, struct rf__arena *arena, struct rf_doc **out, rf_error_t *err);

/* The answer as JSON text (contract shape, gangs one per line). *out is
 * malloc'ed and NUL-terminated, *len excludes the NUL; free() it. Writes the
 * stored domains/penalty/summary as they are (finish first). */
rf_status rf_answer_to_json(const rf_answer_t *answer, char **out, size_t *len, rf_error_t *err);
/* Read an answer in JSON for `problem` (names resolved to indices; unknown
 * names and malformed fields are errors with their path). Strict on shape,
 * lenient on meaning, so that the checker can judge it: placements are kept
 * as written (a node listed twice stays twice; placements of a rejected gang
 * are kept), pod sets are matched by name (any order, each at most once,
 * missing ones hold no new pods), gangs must be the problem's, in order, and
 * so must `running` (required when the problem has running gangs; `by`
 * names gangs of the problem, kept as written for the checker to judge).
 * `domains`, `penalty` and `summary` (and each summary key) are optional; the
 * has_* flags say which were present. */
rf_status rf_answer_from_json(const rf_problem_t *problem, const char *text, size_t len, rf_answer_t **out,
                              rf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
