/* solver/machine_internal.h: the pure parts of solver/machine.c, exposed so
 * that tests can feed them strings instead of the running machine's files.
 *
 * The quota parsers read the text of cgroup files and give the quota in CPUs,
 * 0 when there is none; a malformed text is RF_EINVAL and leaves *cpus alone.
 * rf__machine_usable applies the rule of rackfit/machine.h. */
#ifndef RACKFIT_SOLVER_MACHINE_INTERNAL_H
#define RACKFIT_SOLVER_MACHINE_INTERNAL_H

#include <stdint.h>

#include "rackfit/status.h"

/* cgroup v2 `cpu.max`: "max 100000" (no quota), "150000 100000" (1.5 CPUs),
 * or "150000" alone (the period defaults to 100000). */
rf_status rf__machine_parse_cpu_max(const char *text, double *cpus);
/* cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: a quota of -1 (or
 * any negative) is no quota. */
rf_status rf__machine_parse_cfs(const char *quota_text, const char *period_text, double *cpus);
/* max(1, min(cores, ceil(quota_cpus))), quota 0 meaning none. */
int32_t rf__machine_usable(int32_t cores, double quota_cpus);

#endif
