/* solver/machine.c: what this machine lets rackfit use (rackfit/machine.h).
 * The only file that includes <hwloc.h>.
 *
 * Probed once (pthread_once) and cached for the life of the process:
 * - the cpuset: the process's binding as hwloc reports it, intersected with
 *   the topology's allowed cpuset (so a container's cpuset and a `taskset`
 *   are both honoured); the allowed cpuset alone when the binding is unknown;
 * - cores: the HWLOC_OBJ_CORE objects whose cpuset intersects it (PUs stand
 *   in for cores on platforms that report none); pus: its weight;
 * - the CPU quota from cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` /
 *   `cpu.cfs_period_us`, the tightest one found from the process's own
 *   cgroup up to the root;
 * - usable = max(1, min(cores, ceil(quota))); when hwloc fails, cores and
 *   pus come from sysconf(_SC_NPROCESSORS_ONLN) and binding is unsupported.
 * The topology and the usable cores' cpusets stay alive until exit, so that
 * rf_machine_bind_thread can be called from any thread at any time; after
 * the probe they are only read (hwloc allows concurrent readers). */
#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine_internal.h"
#include "rackfit/machine.h"

/* ---- data structures ---------------------------------------------------- */

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static rf_machine_t s_machine;
static hwloc_topology_t s_topology; /* NULL when hwloc failed */
static hwloc_bitmap_t *s_core_sets; /* [s_n_core_sets]: core cpusets within the process's cpuset */
static int32_t s_n_core_sets;

#define S_CGROUP_ROOT "/sys/fs/cgroup"

/* ---- local methods ------------------------------------------------------ */

/* Read a small text file into buf (NUL-terminated). 0 on success. */
static int s_read_small(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

/* Parse a whole decimal integer at *p (leading blanks skipped), advancing *p. */
static int s_parse_int(const char **p, long long *out)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
    if (!((**p >= '0' && **p <= '9') || **p == '-'))
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(*p, &end, 10);
    if (errno != 0 || end == *p)
        return -1;
    *p = end;
    *out = v;
    return 0;
}

static int s_only_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return *p == '\0';
}

/* Keep the tighter of two quotas (0 = none). */
static double s_tighter(double a, double b)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

/* The process's cgroup path for controller `ctl` ("" for the v2 line "0::"),
 * from /proc/self/cgroup, into `out`. 0 when found. */
static int s_cgroup_path(const char *ctl, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found != 0 && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctls = c1 + 1;
        int match = 0;
        if (ctl[0] == '\0') {
            match = ctls[0] == '\0';
        } else {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "%s", ctls);
            for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                match |= strcmp(tok, ctl) == 0;
        }
        if (match) {
            char *path = c2 + 1;
            path[strcspn(path, "\n")] = '\0';
            snprintf(out, cap, "%s", path);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* cgroup v2: cpu.max in the process's cgroup and every ancestor. */
static double s_quota_v2(void)
{
    char rel[512] = "";
    if (s_cgroup_path("", rel, sizeof rel) != 0)
        snprintf(rel, sizeof rel, "/");
    double quota = 0;
    char dir[800], file[900], text[128];
    snprintf(dir, sizeof dir, "%s%s", S_CGROUP_ROOT, rel);
    for (;;) {
        snprintf(file, sizeof file, "%s/cpu.max", dir);
        double q = 0;
        if (s_read_small(file, text, sizeof text) == 0 && rf__machine_parse_cpu_max(text, &q) == RF_OK)
            quota = s_tighter(quota, q);
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < strlen(S_CGROUP_ROOT))
            break;
        *slash = '\0';
    }
    return quota;
}

/* cgroup v1: cfs quota and period under the cpu controller's mount. */
static double s_quota_v1(void)
{
    static const char *const mounts[] = {S_CGROUP_ROOT "/cpu", S_CGROUP_ROOT "/cpu,cpuacct",
                                         S_CGROUP_ROOT "/cpuacct,cpu"};
    char rel[512] = "";
    if (s_cgroup_path("cpu", rel, sizeof rel) != 0)
        rel[0] = '\0';
    double quota = 0;
    for (size_t m = 0; m < sizeof mounts / sizeof mounts[0]; m++) {
        const char *rels[2] = {rel, ""}; /* the process's cgroup, then the (namespace's) root */
        for (int k = 0; k < 2; k++) {
            char qf[900], pf[900], qt[64], pt[64];
            snprintf(qf, sizeof qf, "%s%s/cpu.cfs_quota_us", mounts[m], rels[k]);
            snprintf(pf, sizeof pf, "%s%s/cpu.cfs_period_us", mounts[m], rels[k]);
            double q = 0;
            if (s_read_small(qf, qt, sizeof qt) == 0 && s_read_small(pf, pt, sizeof pt) == 0 &&
                rf__machine_parse_cfs(qt, pt, &q) == RF_OK)
                quota = s_tighter(quota, q);
        }
    }
    return quota;
}

/* Cores and PUs from hwloc; 0 cores when hwloc cannot tell. */
static void s_probe_hwloc(void)
{
    hwloc_topology_t topo = NULL;
    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, allowed);
    else
        hwloc_bitmap_and(set, set, allowed);
    hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(topo));

    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n <= 0) {
        type = HWLOC_OBJ_PU;
        n = hwloc_get_nbobjs_by_type(topo, type);
    }
    int pus = hwloc_bitmap_weight(set);
    if (n <= 0 || pus <= 0) {
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t *cores = calloc((size_t)n, sizeof *cores);
    int32_t n_cores = 0;
    for (int i = 0; cores && i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (!obj || !obj->cpuset || !hwloc_bitmap_intersects(obj->cpuset, set))
            continue;
        hwloc_bitmap_t core = hwloc_bitmap_alloc();
        if (!core)
            break;
        hwloc_bitmap_and(core, obj->cpuset, set);
        cores[n_cores++] = core;
    }
    hwloc_bitmap_free(set);
    if (!cores || n_cores == 0) {
        for (int32_t i = 0; i < n_cores; i++)
            hwloc_bitmap_free(cores[i]);
        free(cores);
        hwloc_topology_destroy(topo);
        return;
    }
    s_topology = topo;
    s_core_sets = cores;
    s_n_core_sets = n_cores;
    s_machine.cores = n_cores;
    s_machine.pus = pus;
}

static void s_probe(void)
{
    memset(&s_machine, 0, sizeof s_machine);
    s_probe_hwloc();
    if (s_machine.cores <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        s_machine.cores = n > 0 && n < INT32_MAX ? (int32_t)n : 1;
        s_machine.pus = s_machine.cores;
    }
    s_machine.quota_cpus = s_tighter(s_quota_v2(), s_quota_v1());
    s_machine.usable = rf__machine_usable(s_machine.cores, s_machine.quota_cpus);
}

/* ---- interface ---------------------------------------------------------- */

rf_status rf__machine_parse_cpu_max(const char *text, double *cpus)
{
    if (!text || !cpus)
        return RF_EINVAL;
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    long long quota = -1, period = 100000;
    if (strncmp(p, "max", 3) == 0) {
        p += 3;
    } else if (s_parse_int(&p, &quota) != 0 || quota <= 0) {
        return RF_EINVAL;
    }
    if (!s_only_blanks(p) && (s_parse_int(&p, &period) != 0 || period <= 0))
        return RF_EINVAL;
    if (!s_only_blanks(p))
        return RF_EINVAL;
    *cpus = quota < 0 ? 0.0 : (double)quota / (double)period;
    return RF_OK;
}

rf_status rf__machine_parse_cfs(const char *quota_text, const char *period_text, double *cpus)
{
    if (!quota_text || !period_text || !cpus)
        return RF_EINVAL;
    const char *q = quota_text, *p = period_text;
    long long quota, period;
    if (s_parse_int(&q, &quota) != 0 || !s_only_blanks(q))
        return RF_EINVAL;
    if (quota < 0) {
        *cpus = 0.0;
        return RF_OK;
    }
    if (quota == 0 || s_parse_int(&p, &period) != 0 || !s_only_blanks(p) || period <= 0)
        return RF_EINVAL;
    *cpus = (double)quota / (double)period;
    return RF_OK;
}

int32_t rf__machine_usable(int32_t cores, double quota_cpus)
{
    int32_t usable = cores;
    if (quota_cpus > 0) {
        /* a hair below an integer is that integer: 200000/100000 is 2 CPUs */
        double q = ceil(quota_cpus - 1e-9);
        if (q < (double)usable)
            usable = (int32_t)q;
    }
    return usable < 1 ? 1 : usable;
}

const rf_machine_t *rf_machine(void)
{
    pthread_once(&s_once, s_probe);
    return &s_machine;
}

int32_t rf_machine_threads(int32_t threads)
{
    int32_t usable = rf_machine()->usable;
    if (threads <= 0 || threads > usable)
        return usable;
    return threads;
}

rf_status rf_machine_bind_thread(int32_t index)
{
    const rf_machine_t *m = rf_machine();
    if (!s_topology || s_n_core_sets <= 0)
        return RF_EUNSUPPORTED;
    int32_t n = m->usable < s_n_core_sets ? m->usable : s_n_core_sets;
    int32_t i = index % n;
    if (i < 0)
        i += n;
    if (hwloc_set_cpubind(s_topology, s_core_sets[i], HWLOC_CPUBIND_THREAD) != 0)
        return RF_EUNSUPPORTED;
    return RF_OK;
}

rf_status rf_machine_bind_team(void)
{
    const rf_machine_t *m = rf_machine();
    if (!s_topology || s_n_core_sets <= 0)
        return RF_EUNSUPPORTED;
    int32_t n = m->usable < s_n_core_sets ? m->usable : s_n_core_sets;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return RF_ENOMEM;
    for (int32_t i = 0; i < n; i++)
        hwloc_bitmap_or(set, set, s_core_sets[i]);
    int rc = hwloc_set_cpubind(s_topology, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    return rc == 0 ? RF_OK : RF_EUNSUPPORTED;
}
