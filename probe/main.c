/* probe/main.c: rackfit-probe, the per-node topology labeller (docs/probe.md).
 *
 *   rackfit-probe [--hwloc-xml FILE] [--lldp-json FILE] [--ib-file FILE] --dry-run
 *   rackfit-probe [--kubeconfig FILE [--context NAME] | --in-cluster] [--node NAME] [--KEY VALUE]...
 *
 * Live mode (no input file given): hwloc on this system, NVML if the driver
 * ships it, lldpcli against the host's lldpd, SMPs out of every local
 * InfiniBand port. Offline mode (any input file given): only the files
 * given are read (a saved topology says nothing about this machine). Then
 * the labels are derived and, without --dry-run, written onto the Node with
 * one merge patch (or none when nothing changed). With --interval-s N it
 * probes again every N seconds until SIGTERM (the DaemonSet's mode).
 *
 * Exit status: 0 done (sources that failed are reported, not fatal), 1 the
 * node could not be patched, 2 bad flags or credentials. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtopo.h"
#include "ib.h"
#include "kube_http.h"
#include "kubeconfig.h"
#include "labels.h"
#include "lldp.h"
#include "log.h"
#include "nodepatch.h"
#include "nvml.h"
#include "report.h"

typedef struct {
    const char *hwloc_xml, *lldp_json, *ib_file;
    const char *kubeconfig, *context, *node, *nvml_lib, *lldpcli, *lldp_socket;
    bool dry_run, in_cluster, no_lldp, no_ib, no_nvml;
    long ib_timeout_ms, ib_retries, lldp_timeout_ms, request_timeout_ms, interval_s, max_conflicts;
    rf_probe_label_cfg_t labels;
} s_cfg_t;

static atomic_int s_stop;

static void s_on_signal(int sig)
{
    (void)sig;
    s_stop = 1;
}

static void s_usage(FILE *out)
{
    fputs("usage: rackfit-probe [--hwloc-xml FILE] [--lldp-json FILE] [--ib-file FILE] --dry-run\n"
          "       rackfit-probe [--kubeconfig FILE [--context NAME] | --in-cluster] [--node NAME] [--KEY VALUE]...\n"
          "\n"
          "Finds this node's GPUs, NICs, NUMA nodes, GPU-NIC paths, NVLink domains, its LLDP switch and its\n"
          "InfiniBand leaf, and writes them as node labels with one merge patch (docs/probe.md).\n"
          "Inputs (any file given: offline, only the files given are read; none: this node, live):\n"
          "  --hwloc-xml FILE   --lldp-json FILE (lldpcli -f json0|json show neighbors details)\n"
          "  --ib-file FILE (smpquery -D nodeinfo/nodedesc 0,N and iblinkinfo -D 0 -l output)\n"
          "  --no-lldp --no-ib --no-nvml   --nvml-lib [libnvidia-ml.so.1]   --lldpcli [lldpcli]\n"
          "  --lldp-socket PATH [lldpd's default]   --lldp-timeout-ms [5000]\n"
          "  --ib-timeout-ms [1000] --ib-retries [2]: each directed-route SMP\n"
          "Labels (every key configurable):\n"
          "  --tier0-key [fabric.topograph.run/tier-0]   --domain-key [accelerator.topograph.run/domain]\n"
          "  --tier0-source auto|ib|lldp [auto: InfiniBand when a port has a link, else LLDP]\n"
          "  --ib-rail CA [the leaf with the smallest GUID]   --lldp-interface IF [all must agree]\n"
          "  --lldp-chassis-id (name a switch without System Name by its chassis id)\n"
          "  --locality-prefix PREFIX [off; e.g. rackfit.io/: PREFIXgpu-nic-path, PREFIXgpu-nic-pix, ...]\n"
          "  --owner-annotation [rackfit.io/probe-labels]\n"
          "Writing:\n"
          "  --dry-run (print the JSON report, write nothing)   --node NAME [the hostname]\n"
          "  --kubeconfig FILE [--context NAME] | --in-cluster [when KUBERNETES_SERVICE_HOST is set]\n"
          "  --request-timeout-ms [10000] --max-conflicts [5] --interval-s [0: once]\n"
          "  --log-level error|warn|info|debug [info]\n",
          out);
}

static bool s_long(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

/* One flag with a value. Returns 0 ok, 1 unknown flag, 2 bad value. */
static int s_set(s_cfg_t *c, const char *k, const char *v)
{
    const char **strs[] = {&c->hwloc_xml,
                           &c->lldp_json,
                           &c->ib_file,
                           &c->kubeconfig,
                           &c->context,
                           &c->node,
                           &c->nvml_lib,
                           &c->lldpcli,
                           &c->lldp_socket,
                           &c->labels.tier0_key,
                           &c->labels.domain_key,
                           &c->labels.locality_prefix,
                           &c->labels.owner_annotation,
                           &c->labels.tier0_source,
                           &c->labels.ib_rail,
                           &c->labels.lldp_interface};
    static const char *const snames[] = {"hwloc-xml",        "lldp-json",    "ib-file",    "kubeconfig",
                                         "context",          "node",         "nvml-lib",   "lldpcli",
                                         "lldp-socket",      "tier0-key",    "domain-key", "locality-prefix",
                                         "owner-annotation", "tier0-source", "ib-rail",    "lldp-interface"};
    for (size_t i = 0; i < sizeof snames / sizeof snames[0]; i++)
        if (!strcmp(k, snames[i])) {
            *strs[i] = v;
            return 0;
        }
    struct {
        const char *name;
        long *p, lo, hi;
    } nums[] = {
        {"ib-timeout-ms", &c->ib_timeout_ms, 1, 600000},     {"ib-retries", &c->ib_retries, 0, 100},
        {"lldp-timeout-ms", &c->lldp_timeout_ms, 1, 600000}, {"request-timeout-ms", &c->request_timeout_ms, 1, 600000},
        {"interval-s", &c->interval_s, 0, 86400 * 7},        {"max-conflicts", &c->max_conflicts, 0, 100}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (!strcmp(k, nums[i].name))
            return s_long(v, nums[i].lo, nums[i].hi, nums[i].p) ? 0 : 2;
    if (!strcmp(k, "log-level")) {
        static const char *const lv[] = {"error", "warn", "info", "debug"};
        for (int i = 0; i < 4; i++)
            if (!strcmp(v, lv[i])) {
                rf__log_threshold = i;
                return 0;
            }
        return 2;
    }
    return 1;
}

static int s_parse(int argc, char **argv, s_cfg_t *c)
{
    memset(c, 0, sizeof *c);
    rf__label_cfg_defaults(&c->labels);
    c->lldpcli = "lldpcli";
    c->ib_timeout_ms = 1000;
    c->ib_retries = 2;
    c->lldp_timeout_ms = 5000;
    c->request_timeout_ms = 10000;
    c->max_conflicts = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            s_usage(stdout);
            exit(0);
        }
        if (strncmp(a, "--", 2)) {
            fprintf(stderr, "rackfit-probe: unexpected argument \"%s\"\n", a);
            return 2;
        }
        a += 2;
        char key[64];
        const char *eq = strchr(a, '='), *inline_value = NULL;
        if (eq) { /* --key=value */
            snprintf(key, sizeof key, "%.*s", (int)(eq - a), a);
            a = key;
            inline_value = eq + 1;
        }
        bool *flags[] = {&c->dry_run, &c->in_cluster, &c->no_lldp, &c->no_ib, &c->no_nvml, &c->labels.lldp_chassis_id};
        static const char *const fnames[] = {"dry-run", "in-cluster", "no-lldp", "no-ib", "no-nvml", "lldp-chassis-id"};
        bool done = false;
        for (size_t f = 0; f < sizeof fnames / sizeof fnames[0] && !done; f++)
            if (!strcmp(a, fnames[f]))
                *flags[f] = done = true;
        if (done && !inline_value)
            continue;
        if (done || (!inline_value && i + 1 >= argc)) {
            fprintf(stderr, done ? "rackfit-probe: --%s takes no value\n" : "rackfit-probe: --%s needs a value\n", a);
            return 2;
        }
        const char *v = inline_value ? inline_value : argv[++i];
        int r = s_set(c, a, v);
        if (r == 1) {
            fprintf(stderr, "rackfit-probe: unknown flag --%s (see --help)\n", a);
            return 2;
        }
        if (r) {
            fprintf(stderr, "rackfit-probe: bad value \"%s\" for --%s\n", v, a);
            return 2;
        }
    }
    rf_error_t err;
    if (rf__label_cfg_check(&c->labels, &err) != RF_OK) {
        fprintf(stderr, "rackfit-probe: %s\n", err.message);
        return 2;
    }
    if (c->kubeconfig && c->in_cluster) {
        fprintf(stderr, "rackfit-probe: --kubeconfig and --in-cluster exclude each other\n");
        return 2;
    }
    return 0;
}

static void s_collect(const s_cfg_t *c, rf_probe_facts_t *f)
{
    rf__facts_init(f);
    if (c->node)
        snprintf(f->hostname, sizeof f->hostname, "%s", c->node);
    else if (gethostname(f->hostname, sizeof f->hostname - 1) != 0)
        snprintf(f->hostname, sizeof f->hostname, "unknown");
    bool offline = c->hwloc_xml || c->lldp_json || c->ib_file;
    rf_error_t err;
    if (c->hwloc_xml || !offline)
        rf__hwtopo_read(c->hwloc_xml, f, &err);
    if (!offline && !c->no_nvml)
        rf__nvml_read(c->nvml_lib, f, &err);
    if (c->lldp_json)
        rf__lldp_read_file(c->lldp_json, f, &err);
    else if (!offline && !c->no_lldp)
        rf__lldp_live(c->lldpcli, c->lldp_socket, c->lldp_timeout_ms, f, &err);
    if (c->ib_file)
        rf__ib_read_file(c->ib_file, f, &err);
    else if (!offline && !c->no_ib)
        rf__ib_live(c->ib_timeout_ms, (int)c->ib_retries, f, &err);
    const rf_probe_src_t *srcs[] = {&f->hwloc, &f->nvml, &f->lldp, &f->ib};
    for (int i = 0; i < 4; i++)
        if (srcs[i]->state == RF_SRC_ERROR)
            rf__log(RF_LOG_WARN, "%s", srcs[i]->error);
}

static rf_status s_credentials(const s_cfg_t *c, rf__kube_t **kube, rf_error_t *err)
{
    rf__kubeconfig_t kc;
    memset(&kc, 0, sizeof kc);
    bool in_cluster = c->in_cluster || (!c->kubeconfig && getenv("KUBERNETES_SERVICE_HOST"));
    if (!in_cluster && !c->kubeconfig)
        return rf_error_set(err, RF_EINVAL, "",
                            "no credentials: give --kubeconfig FILE or --in-cluster (or --dry-run)");
    rf_status rc = in_cluster ? rf__kubeconfig_in_cluster(NULL, &kc, err)
                              : rf__kubeconfig_load(c->kubeconfig, c->context, &kc, err);
    if (rc == RF_OK && !(*kube = rf__kube_new(&kc, err)))
        rc = err->code ? err->code : RF_ENOMEM;
    rf__kubeconfig_fini(&kc);
    return rc;
}

static int s_once(const s_cfg_t *c, rf__kube_t *kube)
{
    rf_probe_facts_t *f = malloc(sizeof *f);
    rf_probe_labels_t labels;
    if (!f) {
        rf__log(RF_LOG_ERROR, "out of memory");
        return 1;
    }
    s_collect(c, f);
    rf__labels_derive(f, &c->labels, &labels);
    int rc = 0;
    if (c->dry_run) {
        char *json = rf__report_json(f, &labels, NULL);
        if (!json || fputs(json, stdout) == EOF || fflush(stdout) != 0)
            rc = 1;
        free(json);
    } else {
        rf_probe_patch_opts_t opts = {.timeout_ms = c->request_timeout_ms, .max_conflicts = (int)c->max_conflicts};
        bool patched = false;
        char *patch = NULL;
        rf_error_t err;
        if (rf__node_apply(kube, f->hostname, &labels, &c->labels, &opts, &patched, &patch, &err) != RF_OK) {
            rf__log(RF_LOG_ERROR, "node %s: %s", f->hostname, err.message);
            rc = 1;
        } else if (patched)
            rf__log(RF_LOG_INFO, "node %s patched: %s", f->hostname, patch);
        else
            rf__log(RF_LOG_INFO, "node %s: labels already up to date", f->hostname);
        free(patch);
        for (int i = 0; i < labels.n; i++)
            if (labels.l[i].action == RF_LABEL_LEAVE)
                rf__log(RF_LOG_INFO, "%s left alone: %s", labels.l[i].key, labels.l[i].reason);
    }
    free(f);
    return rc;
}

int main(int argc, char **argv)
{
    rf__log_program("rackfit-probe");
    s_cfg_t cfg;
    int rc = s_parse(argc, argv, &cfg);
    if (rc)
        return rc;
    rf__kube_t *kube = NULL;
    rf_error_t err;
    if (!cfg.dry_run) {
        if (rf__kube_global_init(&err) != RF_OK || s_credentials(&cfg, &kube, &err) != RF_OK) {
            fprintf(stderr, "rackfit-probe: %s%s%s\n", err.path, err.path[0] ? ": " : "", err.message);
            rf__kube_destroy(&kube);
            rf__kube_global_fini();
            return 2;
        }
    }
    struct sigaction sa = {.sa_handler = s_on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    do {
        rc = s_once(&cfg, kube);
        for (long s = 0; cfg.interval_s > 0 && s < cfg.interval_s && !s_stop; s++) {
            struct timespec one = {.tv_sec = 1};
            nanosleep(&one, NULL);
        }
    } while (cfg.interval_s > 0 && !s_stop);
    if (!cfg.dry_run) {
        rf__kube_destroy(&kube);
        rf__kube_global_fini();
    }
    return rc;
}
