/* tests/unit/test_probe_report.c: the probe's dry-run JSON (probe/report.c)
 * for facts filled by hand, parsed back through the JSON boundary (base/json.h,
 * jansson): sources and their states, GPUs with their paths to NICs and other
 * GPUs, NICs, NVLink domains, LLDP and InfiniBand peers, labels, notes;
 * strings with quotes, backslashes and control characters round-trip; empty
 * facts give empty arrays and maps and nulls, never missing keys. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "report.h"

static rf__arena_t *s_arena;

static void s_setup(void)
{
    s_arena = rf__arena_new(0);
}

static void s_teardown(void)
{
    rf__arena_destroy(&s_arena);
}

TestSuite(probe_report, .init = s_setup, .fini = s_teardown);

/* The report for f, parsed back; checks it ends in a newline and its length. */
static const rf_doc_t *s_report(const rf_probe_facts_t *f, const rf_probe_labels_t *labels)
{
    size_t len = 0;
    char *text = rf__report_json(f, labels, &len);
    cr_assert_not_null(text);
    cr_assert_eq(len, strlen(text));
    cr_assert_gt(len, 0);
    cr_assert_eq(text[len - 1], '\n', "the report ends in a newline");
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_doc_t *d = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(text, len, &lim, s_arena, &d, &err), RF_OK, "%s: %s", err.message, text);
    free(text);
    cr_assert_eq(d->type, RF_DOC_MAP);
    return d;
}

static const rf_doc_t *s_get(const rf_doc_t *m, const char *key, rf_doc_type type)
{
    cr_assert_eq(m->type, RF_DOC_MAP);
    const rf_doc_t *v = rf__doc_get(m, key);
    cr_assert_not_null(v, "key %s is present", key);
    cr_assert_eq(v->type, type, "key %s is %s, not %s", key, rf__doc_type_name(v->type), rf__doc_type_name(type));
    return v;
}

static const char *s_str(const rf_doc_t *m, const char *key)
{
    return s_get(m, key, RF_DOC_STR)->u.s;
}

static int64_t s_int(const rf_doc_t *m, const char *key)
{
    return s_get(m, key, RF_DOC_INT)->u.i;
}

static void s_gpu(rf_probe_dev_t *d, const char *busid, const char *osdevs, int numa, int pkg, int domain)
{
    strcpy(d->busid, busid);
    d->vendor = 0x10de;
    d->device = 0x2330;
    d->class_id = 0x0302;
    strcpy(d->osdevs, osdevs);
    strcpy(d->model, "NVIDIA H100 80GB HBM3");
    snprintf(d->uuid, sizeof d->uuid, "GPU-%s", busid);
    d->numa = 1ull << numa;
    d->package = pkg;
    d->nvlink_domain = domain;
}

static void s_nic(rf_probe_dev_t *d, const char *busid, const char *osdevs, uint64_t numa, bool rdma)
{
    strcpy(d->busid, busid);
    d->vendor = 0x15b3;
    d->device = 0x1021;
    d->class_id = 0x0207;
    strcpy(d->osdevs, osdevs);
    d->numa = numa;
    d->package = 0;
    d->rdma = rdma;
    d->nvlink_domain = -1;
}

Test(probe_report, full_facts)
{
    static rf_probe_facts_t f;
    rf__facts_init(&f);
    strcpy(f.hostname, "gpu-007");
    f.hwloc.state = RF_SRC_OK;
    strcpy(f.hwloc.origin, "hwloc: this system");
    f.nvml.state = RF_SRC_ERROR;
    strcpy(f.nvml.error, "libnvidia-ml.so.1: not found");
    f.lldp.state = RF_SRC_OK;
    strcpy(f.lldp.origin, "/run/lldp.json");
    f.n_numa = 2;
    f.numa = 0x3;
    f.n_packages = 2;
    f.n_gpus = 3;
    s_gpu(&f.gpus[0], "0000:18:00.0", "nvml0,cuda0", 0, 0, 0);
    s_gpu(&f.gpus[1], "0000:2a:00.0", "nvml1", 0, 0, 0);
    s_gpu(&f.gpus[2], "0000:9a:00.0", "", 1, 1, 1);
    f.n_nics = 2;
    s_nic(&f.nics[0], "0000:19:00.0", "mlx5_0,ib0", 0x1, true);
    s_nic(&f.nics[1], "0000:9b:00.0", "eth1", 0x3, false);
    f.gpu_nic[0][0] = RF_PATH_PIX;
    f.gpu_nic[0][1] = RF_PATH_SYS;
    f.gpu_nic[1][0] = RF_PATH_PXB;
    f.gpu_gpu[0][1] = RF_PATH_NODE; /* [1][0] left unknown, [2][*] too */
    f.gpu_gpu[0][2] = RF_PATH_PACKAGE;
    f.n_nvlink_domains = 2;
    strcpy(f.nvlink_matrix, "NVLinkBandwidth");
    strcpy(f.accel_domain, "9277d399-0674-44a9-b64e-d85bb19ce2b0.32766");
    f.n_lldp = 2;
    rf_probe_lldp_t *l = &f.lldp_nbrs[0];
    strcpy(l->ifname, "eth1");
    strcpy(l->chassis_name, "leaf07.r07");
    strcpy(l->chassis_id, "00:11:22:33:44:55");
    strcpy(l->chassis_id_type, "mac");
    strcpy(l->port_id, "Ethernet12");
    strcpy(l->port_id_type, "ifname");
    strcpy(l->port_descr, "to gpu-007");
    l->caps_known = true;
    l->bridge = true;
    l = &f.lldp_nbrs[1]; /* no System Name, no capability list */
    strcpy(l->ifname, "eth2");
    strcpy(l->chassis_id, "10.0.0.1");
    strcpy(l->chassis_id_type, "ip");
    f.n_ib = 3;
    rf_probe_ib_t *p = &f.ib_ports[0];
    strcpy(p->ca, "mlx5_0");
    p->port = 1;
    p->peer_type = RF_IB_PEER_SWITCH;
    p->peer_guid = 0x0c42a1030012ab01ull;
    p->peer_port = 17;
    strcpy(p->peer_desc, "MF0;ibleaf-04:MQM9700/U1");
    p = &f.ib_ports[1];
    strcpy(p->ca, "mlx5_1");
    p->port = 1;
    p->down = true;
    p = &f.ib_ports[2];
    strcpy(p->ca, "mlx5_2");
    p->port = 2;
    p->peer_type = RF_IB_PEER_UNKNOWN;
    strcpy(p->error, "timeout");
    rf__facts_note(&f, "GPU %s: no NUMA node", "0000:9a:00.0");
    rf__facts_note(&f, "second note");
    static rf_probe_labels_t lab;
    memset(&lab, 0, sizeof lab);
    lab.n = 3;
    strcpy(lab.l[0].key, "rackfit.io/leaf");
    lab.l[0].action = RF_LABEL_SET;
    strcpy(lab.l[0].value, "leaf07.r07");
    strcpy(lab.l[0].reason, "LLDP on eth1");
    strcpy(lab.l[1].key, "rackfit.io/nvlink-domain");
    lab.l[1].action = RF_LABEL_LEAVE;
    strcpy(lab.l[1].value, "ignored");
    strcpy(lab.l[1].reason, "nvml failed");
    strcpy(lab.l[2].key, "rackfit.io/ib-leaf");
    lab.l[2].action = RF_LABEL_REMOVE;
    strcpy(lab.l[2].reason, "no IB peer");

    const rf_doc_t *d = s_report(&f, &lab);
    cr_expect_str_eq(s_str(d, "node"), "gpu-007");
    const rf_doc_t *src = s_get(d, "sources", RF_DOC_MAP);
    cr_assert_eq(src->len, 4);
    const rf_doc_t *s = s_get(src, "hwloc", RF_DOC_MAP);
    cr_expect_str_eq(s_str(s, "state"), "ok");
    cr_expect_str_eq(s_str(s, "origin"), "hwloc: this system");
    cr_expect_null(rf__doc_get(s, "error"), "an ok source has no error");
    s = s_get(src, "nvml", RF_DOC_MAP);
    cr_expect_str_eq(s_str(s, "state"), "error");
    cr_expect_str_eq(s_str(s, "error"), "libnvidia-ml.so.1: not found");
    cr_expect_null(rf__doc_get(s, "origin"), "no origin when none was recorded");
    cr_expect_str_eq(s_str(s_get(src, "lldp", RF_DOC_MAP), "state"), "ok");
    s = s_get(src, "ib", RF_DOC_MAP);
    cr_expect_str_eq(s_str(s, "state"), "not used");
    cr_expect_eq(s->len, 1);

    const rf_doc_t *numa = s_get(d, "numa", RF_DOC_ARRAY);
    cr_assert_eq(numa->len, 2);
    cr_expect_eq(numa->u.items[0].u.i, 0);
    cr_expect_eq(numa->u.items[1].u.i, 1);
    cr_expect_eq(s_int(d, "packages"), 2);

    const rf_doc_t *gpus = s_get(d, "gpus", RF_DOC_ARRAY);
    cr_assert_eq(gpus->len, 3);
    const rf_doc_t *g0 = &gpus->u.items[0];
    cr_expect_str_eq(s_str(g0, "busid"), "0000:18:00.0");
    cr_expect_str_eq(s_str(g0, "vendor"), "0x10de");
    cr_expect_str_eq(s_str(g0, "device"), "0x2330");
    cr_expect_str_eq(s_str(g0, "class"), "0x0302");
    const rf_doc_t *os = s_get(g0, "osdevs", RF_DOC_ARRAY);
    cr_assert_eq(os->len, 2, "the comma-separated OS devices, split");
    cr_expect_str_eq(os->u.items[0].u.s, "nvml0");
    cr_expect_str_eq(os->u.items[1].u.s, "cuda0");
    cr_expect_str_eq(s_str(g0, "model"), "NVIDIA H100 80GB HBM3");
    cr_expect_str_eq(s_str(g0, "uuid"), "GPU-0000:18:00.0");
    cr_expect_eq(s_get(g0, "numa", RF_DOC_ARRAY)->len, 1);
    cr_expect_eq(s_get(g0, "numa", RF_DOC_ARRAY)->u.items[0].u.i, 0);
    cr_expect_eq(s_int(g0, "package"), 0);
    cr_expect_eq(s_int(g0, "nvlink_domain"), 0);
    cr_expect_null(rf__doc_get(g0, "rdma"), "rdma is a NIC's");
    const rf_doc_t *np = s_get(g0, "nic_paths", RF_DOC_MAP);
    cr_assert_eq(np->len, 2);
    cr_expect_str_eq(s_str(np, "0000:19:00.0"), "pix");
    cr_expect_str_eq(s_str(np, "0000:9b:00.0"), "sys");
    const rf_doc_t *gp = s_get(g0, "gpu_paths", RF_DOC_MAP);
    cr_assert_eq(gp->len, 2, "every other GPU, not itself");
    cr_expect_null(rf__doc_get(gp, "0000:18:00.0"));
    cr_expect_str_eq(s_str(gp, "0000:2a:00.0"), "node");
    cr_expect_str_eq(s_str(gp, "0000:9a:00.0"), "package");
    const rf_doc_t *g1 = &gpus->u.items[1];
    cr_expect_str_eq(s_str(s_get(g1, "nic_paths", RF_DOC_MAP), "0000:19:00.0"), "pxb");
    cr_expect_str_eq(s_str(s_get(g1, "nic_paths", RF_DOC_MAP), "0000:9b:00.0"), "unknown");
    cr_expect_str_eq(s_str(s_get(g1, "gpu_paths", RF_DOC_MAP), "0000:18:00.0"), "unknown",
                     "paths are the row's own, not mirrored");
    const rf_doc_t *g2 = &gpus->u.items[2];
    cr_expect_eq(s_get(g2, "osdevs", RF_DOC_ARRAY)->len, 0, "no OS device: an empty list");
    cr_expect_eq(s_int(g2, "package"), 1);
    cr_expect_eq(s_get(g2, "numa", RF_DOC_ARRAY)->u.items[0].u.i, 1);

    const rf_doc_t *nics = s_get(d, "nics", RF_DOC_ARRAY);
    cr_assert_eq(nics->len, 2);
    const rf_doc_t *n0 = &nics->u.items[0], *n1 = &nics->u.items[1];
    cr_expect_str_eq(s_str(n0, "vendor"), "0x15b3");
    cr_expect_str_eq(s_str(n0, "class"), "0x0207");
    cr_expect_eq(s_get(n0, "rdma", RF_DOC_BOOL)->u.b, true);
    cr_expect_eq(s_get(n1, "rdma", RF_DOC_BOOL)->u.b, false);
    cr_expect_null(rf__doc_get(n0, "model"), "no model: the key is left out");
    cr_expect_null(rf__doc_get(n0, "uuid"));
    cr_expect_null(rf__doc_get(n0, "nic_paths"), "paths are a GPU's");
    cr_expect_null(rf__doc_get(n0, "nvlink_domain"));
    cr_expect_eq(s_get(n1, "numa", RF_DOC_ARRAY)->len, 2);

    const rf_doc_t *nv = s_get(d, "nvlink", RF_DOC_MAP);
    cr_expect_str_eq(s_str(nv, "matrix"), "NVLinkBandwidth");
    const rf_doc_t *dom = s_get(nv, "domains", RF_DOC_ARRAY);
    cr_assert_eq(dom->len, 2);
    cr_assert_eq(dom->u.items[0].len, 2);
    cr_expect_str_eq(dom->u.items[0].u.items[0].u.s, "0000:18:00.0");
    cr_expect_str_eq(dom->u.items[0].u.items[1].u.s, "0000:2a:00.0");
    cr_assert_eq(dom->u.items[1].len, 1);
    cr_expect_str_eq(dom->u.items[1].u.items[0].u.s, "0000:9a:00.0");
    cr_expect_str_eq(s_str(d, "accelerator_domain"), "9277d399-0674-44a9-b64e-d85bb19ce2b0.32766");

    const rf_doc_t *ll = s_get(d, "lldp", RF_DOC_ARRAY);
    cr_assert_eq(ll->len, 2);
    const rf_doc_t *l0 = &ll->u.items[0], *l1 = &ll->u.items[1];
    cr_expect_str_eq(s_str(l0, "interface"), "eth1");
    cr_expect_str_eq(s_str(l0, "chassis_name"), "leaf07.r07");
    cr_expect_str_eq(s_str(l0, "chassis_id"), "00:11:22:33:44:55");
    cr_expect_str_eq(s_str(l0, "chassis_id_type"), "mac");
    cr_expect_str_eq(s_str(l0, "port_id"), "Ethernet12");
    cr_expect_str_eq(s_str(l0, "port_id_type"), "ifname");
    cr_expect_str_eq(s_str(l0, "port_descr"), "to gpu-007");
    cr_expect_eq(s_get(l0, "switch", RF_DOC_BOOL)->u.b, true);
    s_get(l1, "chassis_name", RF_DOC_NULL); /* none sent: null */
    s_get(l1, "switch", RF_DOC_NULL);       /* capabilities unknown: null */
    cr_expect_str_eq(s_str(l1, "port_id"), "");

    const rf_doc_t *ib = s_get(d, "ib", RF_DOC_ARRAY);
    cr_assert_eq(ib->len, 3);
    const rf_doc_t *i0 = &ib->u.items[0], *i1 = &ib->u.items[1], *i2 = &ib->u.items[2];
    cr_expect_str_eq(s_str(i0, "ca"), "mlx5_0");
    cr_expect_eq(s_int(i0, "port"), 1);
    cr_expect_eq(s_get(i0, "linked", RF_DOC_BOOL)->u.b, true);
    cr_expect_str_eq(s_str(i0, "peer_type"), "switch");
    cr_expect_str_eq(s_str(i0, "peer_guid"), "0x0c42a1030012ab01", "16 hex digits, zero-padded");
    cr_expect_eq(s_int(i0, "peer_port"), 17);
    cr_expect_str_eq(s_str(i0, "peer_desc"), "MF0;ibleaf-04:MQM9700/U1");
    cr_expect_null(rf__doc_get(i0, "error"));
    cr_expect_eq(s_get(i1, "linked", RF_DOC_BOOL)->u.b, false);
    cr_expect_null(rf__doc_get(i1, "peer_type"), "a port without link has no peer");
    cr_expect_null(rf__doc_get(i1, "peer_guid"));
    cr_expect_eq(i1->len, 3, "ca, port, linked");
    cr_expect_str_eq(s_str(i2, "peer_type"), "unknown");
    cr_expect_str_eq(s_str(i2, "error"), "timeout");

    const rf_doc_t *lb = s_get(d, "labels", RF_DOC_MAP);
    cr_assert_eq(lb->len, 3);
    const rf_doc_t *x = s_get(lb, "rackfit.io/leaf", RF_DOC_MAP);
    cr_expect_str_eq(s_str(x, "action"), "set");
    cr_expect_str_eq(s_str(x, "value"), "leaf07.r07");
    cr_expect_str_eq(s_str(x, "reason"), "LLDP on eth1");
    x = s_get(lb, "rackfit.io/nvlink-domain", RF_DOC_MAP);
    cr_expect_str_eq(s_str(x, "action"), "leave");
    cr_expect_null(rf__doc_get(x, "value"), "only a label set has a value");
    cr_expect_str_eq(s_str(x, "reason"), "nvml failed");
    x = s_get(lb, "rackfit.io/ib-leaf", RF_DOC_MAP);
    cr_expect_str_eq(s_str(x, "action"), "remove");
    cr_expect_null(rf__doc_get(x, "value"));

    const rf_doc_t *notes = s_get(d, "notes", RF_DOC_ARRAY);
    cr_assert_eq(notes->len, 2);
    cr_expect_str_eq(notes->u.items[0].u.s, "GPU 0000:9a:00.0: no NUMA node");
    cr_expect_str_eq(notes->u.items[1].u.s, "second note");
    rf_test_no_leaks();
}

/* Nothing found: every section present and empty, unknowns null, the labels an empty map (also when NULL). */
Test(probe_report, empty_sections)
{
    static rf_probe_facts_t f;
    rf__facts_init(&f);
    static rf_probe_labels_t lab;
    memset(&lab, 0, sizeof lab);
    for (int k = 0; k < 2; k++) {
        const rf_doc_t *d = s_report(&f, k ? &lab : NULL);
        cr_expect_str_eq(s_str(d, "node"), "");
        const rf_doc_t *src = s_get(d, "sources", RF_DOC_MAP);
        const char *names[] = {"hwloc", "nvml", "lldp", "ib"};
        for (int i = 0; i < 4; i++) {
            const rf_doc_t *s = s_get(src, names[i], RF_DOC_MAP);
            cr_expect_eq(s->len, 1, "%s: only its state", names[i]);
            cr_expect_str_eq(s_str(s, "state"), "not used");
        }
        cr_expect_eq(s_get(d, "numa", RF_DOC_ARRAY)->len, 0);
        cr_expect_eq(s_int(d, "packages"), 0);
        cr_expect_eq(s_get(d, "gpus", RF_DOC_ARRAY)->len, 0);
        cr_expect_eq(s_get(d, "nics", RF_DOC_ARRAY)->len, 0);
        const rf_doc_t *nv = s_get(d, "nvlink", RF_DOC_MAP);
        s_get(nv, "matrix", RF_DOC_NULL);
        cr_expect_eq(s_get(nv, "domains", RF_DOC_ARRAY)->len, 0);
        s_get(d, "accelerator_domain", RF_DOC_NULL);
        cr_expect_eq(s_get(d, "lldp", RF_DOC_ARRAY)->len, 0);
        cr_expect_eq(s_get(d, "ib", RF_DOC_ARRAY)->len, 0);
        cr_expect_eq(s_get(d, "labels", RF_DOC_MAP)->len, 0);
        cr_expect_eq(s_get(d, "notes", RF_DOC_ARRAY)->len, 0);
        cr_expect_eq(d->len, 12,
                     "node, sources, numa, packages, gpus, nics, nvlink, accelerator_domain, lldp, ib, "
                     "labels, notes");
    }
    rf_test_no_leaks();
}

/* What a neighbour or a file may put in a string (quotes, backslashes, control characters, UTF-8) comes back as it
 * was; a GPU with an NVLink domain of its own and a NIC-less GPU give an empty nic_paths. */
Test(probe_report, escaping)
{
    static rf_probe_facts_t f;
    rf__facts_init(&f);
    const char *host = "node \"7\"\\x";
    strcpy(f.hostname, host);
    f.lldp.state = RF_SRC_ERROR;
    strcpy(f.lldp.error, "bad line:\n\t\"}{\" \x01 end");
    strcpy(f.lldp.origin, "C:\\lldp\\out.json");
    f.n_lldp = 1;
    strcpy(f.lldp_nbrs[0].ifname, "eth0");
    strcpy(f.lldp_nbrs[0].port_descr, "Uplink \xc3\xa9t\xc3\xa9 \"A\"\r\n");
    strcpy(f.lldp_nbrs[0].chassis_name, "sw/\\1");
    f.n_gpus = 1;
    s_gpu(&f.gpus[0], "0000:01:00.0", "a\"b,c\\d", 0, 0, 0);
    f.n_nvlink_domains = 1;
    f.n_notes = 1;
    strcpy(f.notes[0], "path \"/sys/x\"\tfailed\\");
    static rf_probe_labels_t lab;
    memset(&lab, 0, sizeof lab);
    lab.n = 1;
    strcpy(lab.l[0].key, "rackfit.io/\"odd\"");
    lab.l[0].action = RF_LABEL_SET;
    strcpy(lab.l[0].value, "v\\1");
    strcpy(lab.l[0].reason, "line1\nline2");
    const rf_doc_t *d = s_report(&f, &lab);
    cr_expect_str_eq(s_str(d, "node"), host);
    const rf_doc_t *s = s_get(s_get(d, "sources", RF_DOC_MAP), "lldp", RF_DOC_MAP);
    cr_expect_str_eq(s_str(s, "error"), "bad line:\n\t\"}{\" \x01 end");
    cr_expect_str_eq(s_str(s, "origin"), "C:\\lldp\\out.json");
    const rf_doc_t *l = &s_get(d, "lldp", RF_DOC_ARRAY)->u.items[0];
    cr_expect_str_eq(s_str(l, "port_descr"), "Uplink \xc3\xa9t\xc3\xa9 \"A\"\r\n");
    cr_expect_str_eq(s_str(l, "chassis_name"), "sw/\\1");
    const rf_doc_t *g = &s_get(d, "gpus", RF_DOC_ARRAY)->u.items[0];
    const rf_doc_t *os = s_get(g, "osdevs", RF_DOC_ARRAY);
    cr_assert_eq(os->len, 2);
    cr_expect_str_eq(os->u.items[0].u.s, "a\"b");
    cr_expect_str_eq(os->u.items[1].u.s, "c\\d");
    cr_expect_eq(s_get(g, "nic_paths", RF_DOC_MAP)->len, 0);
    cr_expect_eq(s_get(g, "gpu_paths", RF_DOC_MAP)->len, 0);
    const rf_doc_t *dom = s_get(s_get(d, "nvlink", RF_DOC_MAP), "domains", RF_DOC_ARRAY);
    cr_assert_eq(dom->len, 1);
    cr_expect_str_eq(dom->u.items[0].u.items[0].u.s, "0000:01:00.0");
    cr_expect_str_eq(s_get(d, "notes", RF_DOC_ARRAY)->u.items[0].u.s, "path \"/sys/x\"\tfailed\\");
    const rf_doc_t *x = s_get(s_get(d, "labels", RF_DOC_MAP), "rackfit.io/\"odd\"", RF_DOC_MAP);
    cr_expect_str_eq(s_str(x, "value"), "v\\1");
    cr_expect_str_eq(s_str(x, "reason"), "line1\nline2");
    rf_test_no_leaks();
}
