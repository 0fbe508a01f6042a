/* solver/mip_backend.h: what solver/mip.c and the two MIP backends
 * (solver/mip_glpk.c, solver/mip_cbc.c) share; nothing else includes it.
 *
 * A backend solves the stages of solver/mip.h in order, each from the best
 * solution known (the caller's incumbent first, if rf__mip_feasible), and
 * records every stage with rf__mip_stage_done so both report values, bounds
 * and proofs by the same rules. */
#ifndef RACKFIT_SOLVER_MIP_BACKEND_H
#define RACKFIT_SOLVER_MIP_BACKEND_H

#include "mip.h"

/* Is x (0-based) within every bound and row of the program? */
bool rf__mip_feasible(const rf__mip_t *mip, const double *x);
/* The grain of a stage's objective: g > 0 when every column it touches is
 * integer and every coefficient an integer multiple of g (then every
 * solution's value is a multiple of g, and a branch whose bound is less
 * than g better than the incumbent holds nothing better); 0 otherwise. */
double rf__mip_stage_grain(const rf__mip_t *mip, const rf__mip_stage_t *st);
/* Row factors (malloc'ed, [n_rows]) that make each row's largest
 * coefficient 1: resource rows in bytes (1Ti = 2^40) otherwise wreck the
 * simplex's numerics. NULL on ENOMEM. */
double *rf__mip_row_scales(const rf__mip_t *mip);
/* The stage's objective at x. */
double rf__mip_stage_value(const rf__mip_stage_t *st, const double *x);
/* Record stage k solved with best solution x: its value, its bound rounded
 * to whole grains and never worse than the value, and whether it is proven
 * (`proven`: the backend proved it; `whole_grains`: the backend's bound is
 * sound, so a gap under half a grain proves it too). */
void rf__mip_stage_done(const rf__mip_t *mip, const rf__mip_stage_t *st, const rf__mip_opts_t *opts, int32_t k,
                        const double *x, bool proven, bool whole_grains, double bound, rf__mip_result_t *res);

rf_status rf__mip_solve_glpk(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                             const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err);
bool rf__mip_glpk_thread_safe(void);
rf_status rf__mip_solve_cbc(const rf__mip_t *mip, const rf__mip_stage_t *stages, int32_t n_stages,
                            const rf__mip_opts_t *opts, rf__mip_result_t *res, rf_error_t *err);
bool rf__mip_cbc_thread_safe(void);

#endif
