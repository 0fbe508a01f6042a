/* rackfit/rackfit.h: the whole public API of librackfit. */
#ifndef RACKFIT_RACKFIT_H
#define RACKFIT_RACKFIT_H

#include "rackfit/answer.h"
#include "rackfit/check.h"
#include "rackfit/machine.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"
#include "rackfit/solve.h"
#include "rackfit/status.h"

#define RACKFIT_VERSION "0.1.0"

#endif
