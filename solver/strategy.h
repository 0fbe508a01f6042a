/* solver/strategy.h: the built-in strategies, one file each
 * (solver/greedy.c, later solver/ilp.c), listed by solver/solve.c. */
#ifndef RACKFIT_SOLVER_STRATEGY_H
#define RACKFIT_SOLVER_STRATEGY_H

#include "rackfit/solve.h"

extern const rf_strategy_t rf__strategy_greedy;

#endif
