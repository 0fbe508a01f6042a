/* watcher/kres.h: a resource list (names and base-unit amounts, as
 * rackfit/quantity.h defines them: millicores for cpu, bytes, units), as the
 * watcher sums pod requests and node usage.
 *
 * Invariant: names are unique; order is insertion order. The list owns its
 * strings; rf__res_fini frees them and empties it. */
#ifndef RACKFIT_WATCHER_KRES_H
#define RACKFIT_WATCHER_KRES_H

#include <stdint.h>

#include "rackfit/status.h"

typedef struct {
    char **names;
    int64_t *vals;
    int32_t n;
} rf__res_t;

/* The amount of `name`, 0 when absent. */
int64_t rf__res_get(const rf__res_t *res, const char *name);
/* Add `v` to resource `name` (creating it). RF_ENOMEM. */
rf_status rf__res_add(rf__res_t *res, const char *name, int64_t v);
/* res[name] = max(res[name], v). RF_ENOMEM. */
rf_status rf__res_max(rf__res_t *res, const char *name, int64_t v);
void rf__res_fini(rf__res_t *res);

#endif
