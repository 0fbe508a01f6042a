/* probe/labels.c: label derivation and the node patch (probe/labels.h).
 *
 * tier-0 (the nearest switch, so a rack is the set of nodes under one
 * leaf): from InfiniBand, the leaf switch on the other end of this node's
 * HCA ports (one per rail on rail-optimised fabrics: the leaf with the
 * smallest GUID, which every node of one leaf group shares, or the leaf of
 * one chosen CA); from LLDP, the System Name of the switch the node's
 * Ethernet ports see. Any doubt (a port whose query failed, a neighbour
 * without a name, two switches that disagree) leaves the label alone. */
#include "labels.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"

void rf__label_cfg_defaults(rf_probe_label_cfg_t *c)
{
    memset(c, 0, sizeof *c);
    c->tier0_key = "fabric.topograph.run/tier-0";
    c->domain_key = "accelerator.topograph.run/domain";
    c->owner_annotation = "rackfit.io/probe-labels";
    c->tier0_source = "auto";
}

static bool s_name_ok(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

bool rf__label_key_valid(const char *key)
{
    if (!key)
        return false;
    const char *slash = strchr(key, '/');
    if (!slash)
        return s_name_ok(key, strlen(key), 63);
    size_t plen = (size_t)(slash - key);
    if (plen == 0 || plen > 253)
        return false;
    for (size_t i = 0; i < plen; i++) /* a DNS subdomain: lower-case alphanumerics, '-', '.' */
        if (!islower((unsigned char)key[i]) && !isdigit((unsigned char)key[i]) && key[i] != '-' && key[i] != '.')
            return false;
    return isalnum((unsigned char)key[0]) && isalnum((unsigned char)key[plen - 1]) &&
           s_name_ok(slash + 1, strlen(slash + 1), 63);
}

rf_status rf__label_cfg_check(const rf_probe_label_cfg_t *c, rf_error_t *err)
{
    const char *keys[] = {c->tier0_key, c->domain_key, c->owner_annotation};
    const char *what[] = {"tier0-key", "domain-key", "owner-annotation"};
    for (int i = 0; i < 3; i++)
        if (!rf__label_key_valid(keys[i]))
            return rf_error_set(err, RF_EINVAL, what[i], "--%s \"%s\" is not a valid Kubernetes label key", what[i],
                                keys[i] ? keys[i] : "");
    if (c->locality_prefix && c->locality_prefix[0]) {
        char k[320];
        snprintf(k, sizeof k, "%sgpu-nic-path", c->locality_prefix);
        if (!rf__label_key_valid(k))
            return rf_error_set(err, RF_EINVAL, "locality-prefix",
                                "--locality-prefix \"%s\" does not make valid label keys (\"%s\")", c->locality_prefix,
                                k);
    }
    if (strcmp(c->tier0_source, "auto") && strcmp(c->tier0_source, "ib") && strcmp(c->tier0_source, "lldp"))
        return rf_error_set(err, RF_EINVAL, "tier0-source", "--tier0-source must be auto, ib or lldp, not \"%s\"",
                            c->tier0_source);
    return RF_OK;
}

void rf__label_value(const char *raw, char out[RF_LABEL_VALUE_MAX + 1])
{
    size_t n = strlen(raw);
    if (s_name_ok(raw, n, RF_LABEL_VALUE_MAX)) {
        memcpy(out, raw, n + 1);
        return;
    }
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)raw[i]) * 0x100000001b3u;
    snprintf(out, RF_LABEL_VALUE_MAX + 1, "x%016" PRIx64, h);
}

static rf_probe_label_t *s_add(rf_probe_labels_t *out, const char *prefix, const char *key)
{
    if (out->n >= RF_PROBE_MAX_LABELS)
        return NULL;
    rf_probe_label_t *l = &out->l[out->n++];
    memset(l, 0, sizeof *l);
    snprintf(l->key, sizeof l->key, "%s%s", prefix, key);
    return l;
}

static void s_why(rf_probe_label_t *l, rf_label_action a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void s_why(rf_probe_label_t *l, rf_label_action a, const char *fmt, ...)
{
    l->action = a;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->reason, sizeof l->reason, fmt, ap);
    va_end(ap);
}

/* A Mellanox switch description "MF0;<name>:<model>/U1" names the switch
 * <name> (topograph's rule); any other non-empty description is used whole. */
static void s_switch_name(const rf_probe_ib_t *p, char *out, size_t cap)
{
    const char *d = p->peer_desc, *semi = strchr(d, ';'), *colon = semi ? strchr(semi + 1, ':') : NULL;
    if (semi && colon && colon > semi + 1 && !strchr(colon + 1, ':') && !strchr(colon + 1, ';'))
        snprintf(out, cap, "%.*s", (int)(colon - semi - 1), semi + 1);
    else if (d[0])
        snprintf(out, cap, "%s", d);
    else
        snprintf(out, cap, "0x%016" PRIx64, p->peer_guid);
}

static bool s_ib_linked(const rf_probe_facts_t *f)
{
    if (f->ib.state != RF_SRC_OK)
        return false;
    for (int i = 0; i < f->n_ib; i++)
        if (!f->ib_ports[i].down)
            return true;
    return false;
}

static void s_tier0_ib(const rf_probe_facts_t *f, const rf_probe_label_cfg_t *c, rf_probe_label_t *l)
{
    if (f->ib.state != RF_SRC_OK) {
        s_why(l, RF_LABEL_LEAVE, "%s", f->ib.state == RF_SRC_ERROR ? f->ib.error : "InfiniBand: not read");
        return;
    }
    const rf_probe_ib_t *best = NULL;
    int linked = 0;
    for (int i = 0; i < f->n_ib; i++) {
        const rf_probe_ib_t *p = &f->ib_ports[i];
        if (p->down || (c->ib_rail && strcmp(p->ca, c->ib_rail)))
            continue;
        linked++;
        if (p->error[0]) {
            s_why(l, RF_LABEL_LEAVE, "InfiniBand: %s port %d: %s", p->ca[0] ? p->ca : "?", p->port, p->error);
            return;
        }
        if (p->peer_type != RF_IB_PEER_SWITCH)
            continue; /* a back-to-back CA link names no leaf */
        if (!best || p->peer_guid < best->peer_guid)
            best = p;
    }
    if (!f->n_ib) {
        s_why(l, RF_LABEL_LEAVE, "InfiniBand: this node has no InfiniBand port");
        return;
    }
    if (!linked) {
        s_why(l, RF_LABEL_LEAVE, c->ib_rail ? "InfiniBand: CA %s has no linked port" : "InfiniBand: no linked port",
              c->ib_rail);
        return;
    }
    if (!best) {
        s_why(l, RF_LABEL_LEAVE, "InfiniBand: no port is cabled to a switch");
        return;
    }
    char name[128];
    s_switch_name(best, name, sizeof name);
    rf__label_value(name, l->value);
    s_why(l, RF_LABEL_SET, "InfiniBand leaf 0x%016" PRIx64 " \"%s\" (port %d) seen from %s port %d%s", best->peer_guid,
          best->peer_desc, best->peer_port, best->ca[0] ? best->ca : "?", best->port,
          c->ib_rail ? "" : ", the smallest leaf GUID of this node's ports");
}

static void s_tier0_lldp(const rf_probe_facts_t *f, const rf_probe_label_cfg_t *c, rf_probe_label_t *l)
{
    if (f->lldp.state != RF_SRC_OK) {
        s_why(l, RF_LABEL_LEAVE, "%s", f->lldp.state == RF_SRC_ERROR ? f->lldp.error : "LLDP: not read");
        return;
    }
    const rf_probe_lldp_t *pick = NULL;
    char pick_name[256] = "";
    for (int i = 0; i < f->n_lldp; i++) {
        const rf_probe_lldp_t *n = &f->lldp_nbrs[i];
        if (c->lldp_interface && strcmp(n->ifname, c->lldp_interface))
            continue;
        if (n->caps_known && !n->bridge)
            continue; /* says it is neither a bridge nor a router: a host, not a switch */
        const char *name = n->chassis_name[0] ? n->chassis_name : c->lldp_chassis_id ? n->chassis_id : "";
        if (!name[0]) {
            s_why(l, RF_LABEL_LEAVE, "LLDP: the neighbour on %s (chassis %s %s, port %s) sends no System Name",
                  n->ifname, n->chassis_id_type, n->chassis_id, n->port_id);
            return;
        }
        if (pick && strcmp(pick_name, name)) {
            s_why(l, RF_LABEL_LEAVE, "LLDP: %s sees \"%s\" and %s sees \"%s\"; choose one with --lldp-interface",
                  pick->ifname, pick_name, n->ifname, name);
            return;
        }
        pick = n;
        snprintf(pick_name, sizeof pick_name, "%s", name);
    }
    if (!pick) {
        s_why(l, RF_LABEL_LEAVE, "LLDP: no switch neighbour%s%s", c->lldp_interface ? " on " : "",
              c->lldp_interface ? c->lldp_interface : "");
        return;
    }
    char clean[256];
    size_t k = 0;
    for (const char *s = pick_name; *s && k + 1 < sizeof clean; s++)
        if (*s != ':') /* a MAC chassis id becomes 46a173e6dd48 */
            clean[k++] = *s;
    clean[k] = 0;
    rf__label_value(clean, l->value);
    s_why(l, RF_LABEL_SET, "LLDP: switch \"%s\" on %s, port %s", pick_name, pick->ifname, pick->port_id);
}

static void s_domain(const rf_probe_facts_t *f, rf_probe_label_t *l)
{
    if (f->accel_domain[0]) {
        rf__label_value(f->accel_domain, l->value);
        s_why(l, RF_LABEL_SET, "NVML: every GPU is in NVLink fabric clique %s", f->accel_domain);
    } else if (f->accel_none)
        s_why(l, RF_LABEL_REMOVE, "NVML: no GPU is in a multi-node NVLink fabric");
    else
        s_why(l, RF_LABEL_LEAVE, "NVML: %s", f->nvml.state == RF_SRC_ERROR ? f->nvml.error : "not asked");
}

/* The opt-in GPU-NIC locality set: <prefix>gpu-nic-path is the worst, over
 * the GPUs, of each GPU's nearest NIC (RDMA NICs when there are any);
 * <prefix>gpu-nic-<class> counts the GPUs whose nearest NIC is at that class
 * or nearer (for node affinity `Gt`). */
static void s_locality(const rf_probe_facts_t *f, const char *prefix, rf_probe_labels_t *out)
{
    static const char *const names[] = {"gpu-nic-path", "gpu-nic-pix", "gpu-nic-pxb", "gpu-nic-phb", "gpu-nic-node"};
    rf_probe_label_t *ls[5];
    for (int i = 0; i < 5; i++)
        if (!(ls[i] = s_add(out, prefix, names[i])))
            return;
    if (f->hwloc.state != RF_SRC_OK) {
        for (int i = 0; i < 5; i++)
            s_why(ls[i], RF_LABEL_LEAVE, "%s", f->hwloc.state == RF_SRC_ERROR ? f->hwloc.error : "hwloc: not read");
        return;
    }
    if (!f->n_gpus || !f->n_nics) {
        for (int i = 0; i < 5; i++)
            s_why(ls[i], RF_LABEL_REMOVE, "hwloc: no %s", f->n_gpus ? "NIC" : "GPU");
        return;
    }
    bool any_rdma = false;
    for (int n = 0; n < f->n_nics; n++)
        any_rdma |= f->nics[n].rdma;
    int worst = RF_PATH_PIX, count[RF_PATH_UNKNOWN + 1] = {0};
    for (int g = 0; g < f->n_gpus; g++) {
        int best = RF_PATH_UNKNOWN;
        for (int n = 0; n < f->n_nics; n++)
            if ((!any_rdma || f->nics[n].rdma) && f->gpu_nic[g][n] < best)
                best = f->gpu_nic[g][n];
        worst = best > worst ? best : worst;
        for (int k = best; k <= RF_PATH_UNKNOWN; k++)
            count[k]++;
    }
    snprintf(ls[0]->value, sizeof ls[0]->value, "%s", rf__path_name((rf_probe_path)worst));
    s_why(ls[0], RF_LABEL_SET, "hwloc: every GPU has a%s NIC at %s or nearer", any_rdma ? "n RDMA" : "",
          rf__path_name((rf_probe_path)worst));
    for (int i = 1; i < 5; i++) {
        snprintf(ls[i]->value, sizeof ls[i]->value, "%d", count[i - 1]);
        s_why(ls[i], RF_LABEL_SET, "hwloc: %d of %d GPUs have a NIC at %s or nearer", count[i - 1], f->n_gpus,
              rf__path_name((rf_probe_path)(i - 1)));
    }
}

void rf__labels_derive(const rf_probe_facts_t *f, const rf_probe_label_cfg_t *c, rf_probe_labels_t *out)
{
    out->n = 0;
    rf_probe_label_t *t0 = s_add(out, "", c->tier0_key);
    bool ib = !strcmp(c->tier0_source, "ib") || (!strcmp(c->tier0_source, "auto") && s_ib_linked(f));
    if (ib)
        s_tier0_ib(f, c, t0);
    else
        s_tier0_lldp(f, c, t0);
    s_domain(f, s_add(out, "", c->domain_key));
    if (c->locality_prefix && c->locality_prefix[0])
        s_locality(f, c->locality_prefix, out);
}

/* ---- the patch ---- */

static const char *s_map_str(const rf_doc_t *map, const char *key)
{
    const rf_doc_t *v = map && map->type == RF_DOC_MAP ? rf__doc_get(map, key) : NULL;
    return v && v->type == RF_DOC_STR ? v->u.s : NULL;
}

static bool s_listed(const char *list, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == k && !strncmp(p, key, k))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

rf_status rf__labels_patch(const rf_probe_labels_t *want, const rf_probe_label_cfg_t *c, const rf_doc_t *node,
                           char **patch, rf_error_t *err)
{
    *patch = NULL;
    const rf_doc_t *meta = node && node->type == RF_DOC_MAP ? rf__doc_get(node, "metadata") : NULL;
    if (!meta || meta->type != RF_DOC_MAP || !s_map_str(meta, "name"))
        return rf_error_set(err, RF_EPARSE, "metadata", "the API server's answer is not a Node object");
    const rf_doc_t *labels = rf__doc_get(meta, "labels"), *ann = rf__doc_get(meta, "annotations");
    const char *owned = s_map_str(ann, c->owner_annotation), *rv = s_map_str(meta, "resourceVersion");
    rf__jw_t w, own;
    rf__jw_init(&w);
    rf__jw_init(&own);
    int changes = 0;
    rf__jw_puts(&w, "{\"metadata\":{");
    if (rv) {
        rf__jw_key(&w, "resourceVersion");
        rf__jw_str(&w, rv);
    }
    rf__jw_key(&w, "labels");
    rf__jw_puts(&w, "{");
    for (int i = 0; i < want->n; i++) {
        const rf_probe_label_t *l = &want->l[i];
        const char *cur = s_map_str(labels, l->key);
        bool mine = s_listed(owned, l->key);
        if (l->action == RF_LABEL_SET && (!cur || strcmp(cur, l->value))) {
            rf__jw_key(&w, l->key);
            rf__jw_str(&w, l->value);
            changes++;
        } else if (l->action == RF_LABEL_REMOVE && cur && mine) {
            rf__jw_key(&w, l->key);
            rf__jw_puts(&w, "null");
            changes++;
        }
        /* The keys owned afterwards: set now, or owned before and not removed. */
        if (l->action == RF_LABEL_SET || (l->action == RF_LABEL_LEAVE && mine && cur)) {
            rf__jw_sep(&own);
            rf__jw_puts(&own, l->key);
        }
    }
    /* Keys owned before that are no longer configured stay owned (untouched). */
    for (const char *p = owned; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        bool configured = false;
        for (int i = 0; i < want->n; i++)
            configured |= strlen(want->l[i].key) == n && !strncmp(want->l[i].key, p, n);
        if (!configured && n) {
            rf__jw_sep(&own);
            rf__jw_raw(&own, p, n);
        }
        p = e ? e + 1 : NULL;
    }
    rf__jw_puts(&w, "}");
    const char *own_now = own.len ? own.p : "";
    if (strcmp(owned ? owned : "", own_now)) {
        rf__jw_key(&w, "annotations");
        rf__jw_puts(&w, "{");
        rf__jw_key(&w, c->owner_annotation);
        if (own.len)
            rf__jw_str(&w, own_now);
        else
            rf__jw_puts(&w, "null");
        rf__jw_puts(&w, "}");
        changes++;
    }
    rf__jw_puts(&w, "}}");
    bool oom = w.oom || own.oom;
    rf__jw_fini(&own);
    if (oom) {
        rf__jw_fini(&w);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory building the node patch");
    }
    if (changes)
        *patch = rf__jw_take(&w, NULL);
    rf__jw_fini(&w);
    return RF_OK;
}
