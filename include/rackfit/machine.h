/* rackfit/machine.h: what this machine lets rackfit use, from hwloc.
 *
 * The cores the process may run on are the cores of its cpuset (as hwloc
 * reports them, so a container's cpuset is honoured), capped by the
 * container's CPU quota (cgroup v2 cpu.max, or v1 cfs_quota/cfs_period)
 * rounded up. Solver threads are kept on those cores. <hwloc.h> is included
 * by solver/machine.c only. */
#ifndef RACKFIT_MACHINE_H
#define RACKFIT_MACHINE_H

#include <stdint.h>

#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t cores;     /* physical cores in the process's cpuset */
    int32_t pus;       /* hardware threads in the cpuset */
    double quota_cpus; /* the CPU quota in CPUs, 0 when none */
    int32_t usable;    /* min(cores, ceil(quota)), at least 1 */
} rf_machine_t;

/* Probe once (thread-safe, cached after the first call). Never fails: when
 * hwloc cannot tell, it falls back to sysconf. */
const rf_machine_t *rf_machine(void);
/* The number of solver threads to use for a request of `threads` (0: all
 * usable cores), never more than the usable cores. */
int32_t rf_machine_threads(int32_t threads);
/* Bind the calling thread to the usable core `index` (modulo their count).
 * Best effort: returns RF_EUNSUPPORTED where binding is not possible. */
rf_status rf_machine_bind_thread(int32_t index);
/* Bind the calling thread to the usable cores as a set (the first `usable`
 * cores of the cpuset): what the solver's threads do, so that concurrent
 * solves in one process (rackfitd) never pile onto one core while another
 * idles, and a CPU quota below the cpuset keeps them on that many cores. */
rf_status rf_machine_bind_team(void);

#ifdef __cplusplus
}
#endif
#endif
