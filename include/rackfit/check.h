/* rackfit/check.h: the independent checker of answers.
 *
 * rf_check validates an answer against its problem and the contract, and
 * recomputes domains, penalties and value from the placements alone. It
 * shares no code with the solvers' search (it builds no topology tree and
 * uses none of solver/'s internal headers), so that a bug in one is not
 * hidden by the same bug in the other.
 *
 * Every broken rule is a violation sentence naming the gang, pod set, node,
 * resource and amounts ("node h-3: nvidia.com/gpu 10 > free 8"). Reported
 * figures the answer carries (per-gang domains and penalty, the summary's
 * counts, value and penalty: only those present, see the has_* flags in
 * answer.h) that differ from the recomputed ones clear
 * reported_totals_match and are violations too. Rules and conventions (ranks
 * of bound pods, ordered admission): docs/decisions.md, "Answers and
 * checking". */
#ifndef RACKFIT_CHECK_H
#define RACKFIT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/answer.h"
#include "rackfit/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_CHECK_MAX_VIOLATIONS 64

typedef struct {
    bool feasible;                             /* no violation found (totals included) */
    int32_t n_violations;                      /* total found (may exceed the stored ones) */
    char *violations[RF_CHECK_MAX_VIOLATIONS]; /* owned, one sentence each */
    /* recomputed from the placements */
    double penalty;    /* total over admitted gangs */
    rf_value_t *value; /* one per distinct priority, highest first */
    int32_t n_value;
    int32_t admitted;
    bool reported_totals_match; /* the answer's own domains/penalty/summary agree */
} rf_check_report_t;

/* Check `answer` against `problem`. Returns RF_OK when the check ran (the
 * verdict is in the report), an error only when it could not run (ENOMEM,
 * an answer for another problem). `report` needs no initialisation; free it
 * with rf_check_report_fini (also after an error; NULL-safe, idempotent). */
rf_status rf_check(const rf_problem_t *problem, const rf_answer_t *answer, rf_check_report_t *report, rf_error_t *err);
void rf_check_report_fini(rf_check_report_t *report);

#ifdef __cplusplus
}
#endif
#endif
