/* tests/support/testutil.h: what the solver tests share: read a problem,
 * solve it, and fail the test when rf_check does not accept the answer.
 * The functions assert with Criterion, so they belong in tests only. */
#ifndef RF_TEST_TESTUTIL_H
#define RF_TEST_TESTUTIL_H

#include <stdint.h>

#include "rackfit/rackfit.h"

/* A validated problem from JSON text (asserts it reads). */
rf_problem_t *rf_test_parse(const char *json);
/* rf_solve in `mode` (an rf_mode) with `threads` and a time limit. */
rf_answer_t *rf_test_solve(const rf_problem_t *pb, int mode, int threads, int64_t limit_ms);
/* Fails the test (logging the answer and every violation) unless rf_check
 * finds the answer feasible and its reported totals right. */
void rf_test_assert_feasible(const rf_problem_t *pb, const rf_answer_t *ans, const char *what);

/* The contended batches of tests/data/ilp/misses-NAME.json (NAME one of
 * RF_TEST_MISSES), and their optimum from an independent exact solver
 * (misses-NAME.optimum.answer.json), read and finished (asserts both read). */
#define RF_TEST_N_MISSES 3
extern const char *const RF_TEST_MISSES[RF_TEST_N_MISSES];
void rf_test_missed_batch(const char *name, rf_problem_t **pb, rf_answer_t **optimum);

/* Preemption fixture: levels rack/host; nodes h-0..h-7, h-0..h-3 in rack r1,
 * h-4..h-7 in rack r2, each with 8 nvidia.com/gpu and no pod limit, node i
 * with used_gpu[i] GPUs used (NULL: none). `running` and `gangs` are JSON
 * arrays, `options` a JSON map or NULL. Returns malloc'ed JSON text. */
char *rf_test_preempt_json(const int *used_gpu, const char *running, const char *gangs, const char *options);

#endif
