/* solver/strategy.h: the built-in strategies, one file each
 * (solver/greedy.c, solver/ilp_strategy.c), listed by solver/solve.c. */
#ifndef RACKFIT_SOLVER_STRATEGY_H
#define RACKFIT_SOLVER_STRATEGY_H

#include "rackfit/solve.h"

extern const rf_strategy_t rf__strategy_greedy; /* solver/greedy.c */
extern const rf_strategy_t rf__strategy_ilp;    /* solver/ilp_strategy.c */
extern const rf_strategy_t rf__strategy_auto;   /* solver/ilp_strategy.c */

#endif
