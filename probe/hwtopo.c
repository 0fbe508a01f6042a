/* probe/hwtopo.c: the hwloc boundary of rackfit-probe (the only file of
 * probe/ that includes <hwloc.h>); see hwtopo.h.
 *
 * GPUs are PCI devices of display class (0x03xx) from NVIDIA (0x10de) or AMD
 * (0x1002), or any PCI device carrying a GPU-backend OS device (NVML, CUDA,
 * RSMI, LevelZero), so that both Debian's plug-in-less hwloc and dumps made
 * with the vendor plug-ins are read. NICs are PCI devices of network class
 * (0x02xx) or carrying a Network/OpenFabrics OS device; `rdma` marks the
 * latter kind. The I/O filter is raised to KEEP_IMPORTANT: with hwloc's
 * default (KEEP_NONE) no PCI or OS device survives loading. */
#include "hwtopo.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

#define S_MAX_DEPTH 64 /* parent chains are < 20 deep in real topologies */

static bool s_prefix(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

/* A GPU-backend OS device (nvml*, cuda*, rsmi*, ze*; or its subtype/Backend says so). */
static bool s_gpu_osdev(hwloc_obj_t o)
{
    const char *sub = o->subtype ? o->subtype : hwloc_obj_get_info_by_name(o, "Backend");
    if (sub && (!strcmp(sub, "NVML") || !strcmp(sub, "CUDA") || !strcmp(sub, "RSMI") || !strcmp(sub, "LevelZero")))
        return true;
    return s_prefix(o->name, "nvml") || s_prefix(o->name, "cuda") || s_prefix(o->name, "rsmi");
}

static bool s_osdev_is(hwloc_obj_t o, int kind)
{
#if HWLOC_API_VERSION >= 0x00030000
    return (o->attr->osdev.types & (kind == 0 ? HWLOC_OBJ_OSDEV_NETWORK : HWLOC_OBJ_OSDEV_OPENFABRICS)) != 0;
#else
    return o->attr->osdev.type == (kind == 0 ? HWLOC_OBJ_OSDEV_NETWORK : HWLOC_OBJ_OSDEV_OPENFABRICS);
#endif
}

static void s_append(char *buf, size_t cap, const char *name)
{
    size_t len = strlen(buf);
    if (name && len + strlen(name) + 2 < cap)
        snprintf(buf + len, cap - len, "%s%s", len ? "," : "", name);
}

/* Locality of an I/O object: the NUMA nodes and the package of its first non-I/O ancestor. */
static rf_status s_locality(hwloc_topology_t t, hwloc_obj_t o, rf_probe_dev_t *d, rf_error_t *err)
{
    hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(t, o);
    d->package = -1;
    if (!cpu)
        return RF_OK;
    if (cpu->nodeset) {
        int i;
        hwloc_bitmap_foreach_begin(i, cpu->nodeset)
        {
            if (i >= RF_PROBE_MAX_NUMA)
                return rf_error_set(err, RF_ELIMIT, "", "NUMA node os index %d is beyond the limit of %d", i,
                                    RF_PROBE_MAX_NUMA - 1);
            d->numa |= UINT64_C(1) << i;
        }
        hwloc_bitmap_foreach_end();
    }
    for (hwloc_obj_t p = cpu; p; p = p->parent)
        if (p->type == HWLOC_OBJ_PACKAGE) {
            d->package = (int)p->os_index;
            break;
        }
    return RF_OK;
}

/* Record one PCI device as a GPU or NIC (or skip it). */
static rf_status s_device(hwloc_topology_t t, hwloc_obj_t pci, rf_probe_facts_t *f, hwloc_obj_t *gpu_objs,
                          hwloc_obj_t *nic_objs, rf_error_t *err)
{
    const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
    bool gpu = (a->class_id >> 8) == 0x03 && (a->vendor_id == 0x10de || a->vendor_id == 0x1002);
    bool net = (a->class_id >> 8) == 0x02, rdma = false;
    char osdevs[128] = "", model[64] = "", uuid[64] = "";
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        s_append(osdevs, sizeof osdevs, c->name);
        if (s_gpu_osdev(c))
            gpu = true;
        if (s_osdev_is(c, 0))
            net = true;
        if (s_osdev_is(c, 1))
            net = rdma = true;
        const char *m = hwloc_obj_get_info_by_name(c, "GPUModel"), *u = hwloc_obj_get_info_by_name(c, "NVIDIAUUID");
        if (m && !model[0])
            snprintf(model, sizeof model, "%s", m);
        if (u && !uuid[0])
            snprintf(uuid, sizeof uuid, "%s", u);
    }
    if (!gpu && !net)
        return RF_OK;
    int *n = gpu ? &f->n_gpus : &f->n_nics;
    int cap = gpu ? RF_PROBE_MAX_GPUS : RF_PROBE_MAX_NICS;
    if (*n >= cap)
        return rf_error_set(err, RF_ELIMIT, "", "more than %d %s in the topology", cap, gpu ? "GPUs" : "NICs");
    rf_probe_dev_t *d = gpu ? &f->gpus[*n] : &f->nics[*n];
    memset(d, 0, sizeof *d);
    (gpu ? gpu_objs : nic_objs)[*n] = pci;
    (*n)++;
    snprintf(d->busid, sizeof d->busid, "%04x:%02x:%02x.%x", a->domain, a->bus, a->dev, a->func);
    d->vendor = a->vendor_id;
    d->device = a->device_id;
    d->class_id = a->class_id;
    d->rdma = rdma;
    d->nvlink_domain = -1;
    memcpy(d->osdevs, osdevs, sizeof osdevs);
    if (!model[0] && hwloc_obj_get_info_by_name(pci, "PCIDevice"))
        snprintf(model, sizeof model, "%s", hwloc_obj_get_info_by_name(pci, "PCIDevice"));
    memcpy(d->model, model, sizeof model);
    memcpy(d->uuid, uuid, sizeof uuid);
    return s_locality(t, pci, d, err);
}

/* Bridges strictly between `o` and its ancestor `top`. */
static int s_bridges_below(hwloc_obj_t o, hwloc_obj_t top)
{
    int n = 0;
    for (hwloc_obj_t p = o->parent; p && p != top; p = p->parent)
        n += p->type == HWLOC_OBJ_BRIDGE;
    return n;
}

/* The path class between two PCI devices: their lowest common ancestor,
 * found by walking both parent chains (never hwloc_get_common_ancestor_obj). */
static rf_probe_path s_path(hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t chain[S_MAX_DEPTH];
    int n = 0;
    for (hwloc_obj_t p = a; p && n < S_MAX_DEPTH; p = p->parent)
        chain[n++] = p;
    hwloc_obj_t lca = NULL;
    for (hwloc_obj_t p = b; p && !lca; p = p->parent)
        for (int i = 0; i < n; i++)
            if (chain[i] == p) {
                lca = p;
                break;
            }
    if (!lca)
        return RF_PATH_UNKNOWN;
    if (lca->type == HWLOC_OBJ_PCI_DEVICE)
        return RF_PATH_PIX; /* functions of one device */
    if (lca->type == HWLOC_OBJ_BRIDGE) {
        if (lca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
            return RF_PATH_PHB;
        /* A switch is an upstream-port bridge over downstream-port bridges:
         * two devices on one switch have at most one bridge (their
         * downstream port) between them and the common bridge. */
        return s_bridges_below(a, lca) <= 1 && s_bridges_below(b, lca) <= 1 ? RF_PATH_PIX : RF_PATH_PXB;
    }
    if (hwloc_obj_type_is_io(lca->type) || !lca->nodeset)
        return RF_PATH_UNKNOWN;
    if (hwloc_bitmap_weight(lca->nodeset) == 1)
        return RF_PATH_NODE;
    for (hwloc_obj_t p = lca; p; p = p->parent)
        if (p->type == HWLOC_OBJ_PACKAGE)
            return RF_PATH_PACKAGE;
    return RF_PATH_SYS;
}

static int s_find(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* NVLink (or XGMI) domains: GPUs joined by links, directly or through
 * NVSwitches, from the named bandwidth matrix. Links to CPUs (POWER's
 * Packages in the matrix) do not join GPUs. Returns false when the
 * topology has no such matrix. */
static bool s_links(hwloc_topology_t t, const char *name, rf_probe_facts_t *f, hwloc_obj_t *gpu_objs)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_name(t, name, &nr, &d, 0) != 0 || nr == 0 || !d)
        return false;
    unsigned n = d->nbobjs;
    int *parent = malloc(sizeof(int) * (n ? n : 1));
    int *gpu_of = malloc(sizeof(int) * (n ? n : 1));
    if (!parent || !gpu_of) {
        free(parent);
        free(gpu_of);
        hwloc_distances_release(t, d);
        return false;
    }
    for (unsigned i = 0; i < n; i++) {
        parent[i] = (int)i;
        gpu_of[i] = -1;
        hwloc_obj_t o = d->objs[i];
        while (o && o->type == HWLOC_OBJ_OS_DEVICE)
            o = o->parent;
        for (int g = 0; o && g < f->n_gpus; g++)
            if (gpu_objs[g] == o)
                gpu_of[i] = g;
    }
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            bool cpu = d->objs[i]->type == HWLOC_OBJ_PACKAGE || d->objs[j]->type == HWLOC_OBJ_PACKAGE;
            if (i != j && !cpu && d->values[i * n + j] > 0)
                parent[s_find(parent, (int)i)] = s_find(parent, (int)j);
        }
    /* Number the components holding two or more GPUs, in GPU order. */
    int *dom_of_root = malloc(sizeof(int) * (n ? n : 1));
    if (dom_of_root) {
        for (unsigned i = 0; i < n; i++)
            dom_of_root[i] = -1;
        for (int g = 0; g < f->n_gpus; g++) {
            int root = -1, members = 0;
            for (unsigned i = 0; i < n; i++)
                if (gpu_of[i] == g)
                    root = s_find(parent, (int)i);
            if (root < 0)
                continue;
            for (unsigned i = 0; i < n; i++)
                members += gpu_of[i] >= 0 && s_find(parent, (int)i) == root;
            if (members < 2)
                continue;
            if (dom_of_root[root] < 0)
                dom_of_root[root] = f->n_nvlink_domains++;
            f->gpus[g].nvlink_domain = dom_of_root[root];
        }
    }
    snprintf(f->nvlink_matrix, sizeof f->nvlink_matrix, "%s", name);
    free(dom_of_root);
    free(parent);
    free(gpu_of);
    hwloc_distances_release(t, d);
    return true;
}

static rf_status s_load(hwloc_topology_t t, const char *xml_path, rf_probe_facts_t *f, rf_error_t *err)
{
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
        return rf__src_fail(&f->hwloc, RF_EINTERNAL, err, "hwloc: cannot raise the I/O filter");
    if (xml_path) {
        char *text = NULL;
        size_t len = 0;
        rf_status rc = rf__read_file(xml_path, RF_PROBE_MAX_XML_BYTES, &text, &len, err);
        if (rc != RF_OK)
            return rf__src_fail(&f->hwloc, rc, err, "hwloc XML: %s", err->message);
        /* A cut-off dump (a copy that stopped, a full disk) lacks the closing
         * tag: say so before hwloc, whose failed imports also leak objects. */
        if (!strstr(text, "<topology") || !strstr(text, "</topology>")) {
            const char *why = strstr(text, "<topology") ? "truncated (no closing </topology>)"
                                                        : "no <topology> element: not an hwloc XML";
            free(text);
            return rf__src_fail(&f->hwloc, RF_EPARSE, err, "hwloc XML %s: %s", xml_path, why);
        }
        int set = hwloc_topology_set_xmlbuffer(t, text, (int)len + 1);
        int loaded = set == 0 ? hwloc_topology_load(t) : -1;
        free(text);
        if (loaded != 0)
            return rf__src_fail(&f->hwloc, RF_EPARSE, err,
                                "hwloc XML %s: not a topology hwloc %s can read (truncated, not XML, or a "
                                "newer format)",
                                xml_path, HWLOC_API_VERSION >= 0x00030000 ? "3" : "2");
        return RF_OK;
    }
    if (hwloc_topology_load(t) != 0)
        return rf__src_fail(&f->hwloc, RF_EIO, err, "hwloc: cannot read this system's topology: %s", strerror(errno));
    return RF_OK;
}

rf_status rf__hwtopo_read(const char *xml_path, rf_probe_facts_t *f, rf_error_t *err)
{
    snprintf(f->hwloc.origin, sizeof f->hwloc.origin, "%s", xml_path ? xml_path : "this system");
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return rf__src_fail(&f->hwloc, RF_ENOMEM, err, "hwloc: cannot initialise a topology");
    hwloc_obj_t gpu_objs[RF_PROBE_MAX_GPUS], nic_objs[RF_PROBE_MAX_NICS];
    rf_status rc = s_load(t, xml_path, f, err);
    if (rc != RF_OK)
        goto out;
    f->n_numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    f->n_packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, NULL); o;
         o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o))
        if (o->os_index < RF_PROBE_MAX_NUMA)
            f->numa |= UINT64_C(1) << o->os_index;
    for (hwloc_obj_t o = hwloc_get_next_pcidev(t, NULL); o; o = hwloc_get_next_pcidev(t, o))
        if ((rc = s_device(t, o, f, gpu_objs, nic_objs, err)) != RF_OK) {
            rc = rf__src_fail(&f->hwloc, rc, err, "hwloc: %s", err->message);
            f->n_gpus = f->n_nics = 0;
            goto out;
        }
    for (int g = 0; g < f->n_gpus; g++) {
        for (int n = 0; n < f->n_nics; n++)
            f->gpu_nic[g][n] = (uint8_t)s_path(gpu_objs[g], nic_objs[n]);
        for (int h = 0; h < f->n_gpus; h++)
            f->gpu_gpu[g][h] = (uint8_t)(g == h ? RF_PATH_UNKNOWN : s_path(gpu_objs[g], gpu_objs[h]));
    }
    if (!s_links(t, "NVLinkBandwidth", f, gpu_objs))
        s_links(t, "XGMIBandwidth", f, gpu_objs);
    f->hwloc.state = RF_SRC_OK;
out:
    hwloc_topology_destroy(t);
    return rc;
}
