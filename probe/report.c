/* probe/report.c: what the probe found and the labels it would write, as
 * one JSON object (base/jw.h), printed by --dry-run and logged before a
 * patch. Shape (docs/probe.md): {node, sources{hwloc,nvml,lldp,ib}, numa,
 * packages, gpus[{busid, vendor, class, osdevs, model, uuid, numa,
 * package, nvlink_domain, nic_paths{busid: class}, gpu_paths{...}}],
 * nics[...], nvlink{matrix, domains}, accelerator_domain, lldp[...],
 * ib[...], labels{key: {action, value?, reason}}, notes[]}. */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>

#include "jw.h"

/* `"key":` and a string (NULL: null), or a whole number. */
static void s_kstr(rf__jw_t *w, const char *key, const char *value)
{
    rf__jw_key(w, key);
    rf__jw_str(w, value);
}

static void s_kint(rf__jw_t *w, const char *key, long long value)
{
    rf__jw_key(w, key);
    rf__jw_printf(w, "%lld", value);
}

static void s_src(rf__jw_t *w, const char *name, const rf_probe_src_t *s)
{
    static const char *const states[] = {"not used", "ok", "error"};
    rf__jw_key(w, name);
    rf__jw_puts(w, "{");
    s_kstr(w, "state", states[s->state]);
    if (s->origin[0]) {
        s_kstr(w, "origin", s->origin);
    }
    if (s->state == RF_SRC_ERROR) {
        s_kstr(w, "error", s->error);
    }
    rf__jw_puts(w, "}");
}

static void s_numa(rf__jw_t *w, uint64_t mask)
{
    rf__jw_puts(w, "[");
    for (int i = 0; i < 64; i++)
        if (mask >> i & 1) {
            rf__jw_sep(w);
            rf__jw_printf(w, "%d", i);
        }
    rf__jw_puts(w, "]");
}

static void s_list(rf__jw_t *w, const char *csv)
{
    rf__jw_puts(w, "[");
    for (const char *p = csv; *p;) {
        const char *e = p;
        while (*e && *e != ',')
            e++;
        rf__jw_sep(w);
        rf__jw_strn(w, p, (size_t)(e - p));
        p = *e ? e + 1 : e;
    }
    rf__jw_puts(w, "]");
}

static void s_dev(rf__jw_t *w, const rf_probe_facts_t *f, const rf_probe_dev_t *d, int gpu)
{
    rf__jw_sep(w);
    rf__jw_puts(w, "{");
    s_kstr(w, "busid", d->busid);
    rf__jw_key(w, "vendor");
    rf__jw_printf(w, "\"0x%04x\"", d->vendor);
    rf__jw_key(w, "device");
    rf__jw_printf(w, "\"0x%04x\"", d->device);
    rf__jw_key(w, "class");
    rf__jw_printf(w, "\"0x%04x\"", d->class_id);
    rf__jw_key(w, "osdevs");
    s_list(w, d->osdevs);
    if (d->model[0]) {
        s_kstr(w, "model", d->model);
    }
    if (d->uuid[0]) {
        s_kstr(w, "uuid", d->uuid);
    }
    rf__jw_key(w, "numa");
    s_numa(w, d->numa);
    s_kint(w, "package", d->package);
    if (gpu < 0) {
        rf__jw_key(w, "rdma");
        rf__jw_puts(w, d->rdma ? "true" : "false");
    } else {
        s_kint(w, "nvlink_domain", d->nvlink_domain);
        rf__jw_key(w, "nic_paths");
        rf__jw_puts(w, "{");
        for (int n = 0; n < f->n_nics; n++) {
            s_kstr(w, f->nics[n].busid, rf__path_name((rf_probe_path)f->gpu_nic[gpu][n]));
        }
        rf__jw_puts(w, "}");
        rf__jw_key(w, "gpu_paths");
        rf__jw_puts(w, "{");
        for (int h = 0; h < f->n_gpus; h++)
            if (h != gpu) {
                s_kstr(w, f->gpus[h].busid, rf__path_name((rf_probe_path)f->gpu_gpu[gpu][h]));
            }
        rf__jw_puts(w, "}");
    }
    rf__jw_puts(w, "}");
}

static void s_lldp(rf__jw_t *w, const rf_probe_lldp_t *n)
{
    rf__jw_sep(w);
    rf__jw_puts(w, "{");
    s_kstr(w, "interface", n->ifname);
    s_kstr(w, "chassis_name", n->chassis_name[0] ? n->chassis_name : NULL);
    s_kstr(w, "chassis_id", n->chassis_id);
    s_kstr(w, "chassis_id_type", n->chassis_id_type);
    s_kstr(w, "port_id", n->port_id);
    s_kstr(w, "port_id_type", n->port_id_type);
    s_kstr(w, "port_descr", n->port_descr);
    rf__jw_key(w, "switch");
    rf__jw_puts(w, !n->caps_known ? "null" : n->bridge ? "true" : "false");
    rf__jw_puts(w, "}");
}

static void s_ib(rf__jw_t *w, const rf_probe_ib_t *p)
{
    static const char *const types[] = {"unknown", "ca", "switch", "router"};
    rf__jw_sep(w);
    rf__jw_puts(w, "{");
    s_kstr(w, "ca", p->ca);
    s_kint(w, "port", p->port);
    rf__jw_key(w, "linked");
    rf__jw_puts(w, p->down ? "false" : "true");
    if (!p->down) {
        s_kstr(w, "peer_type", types[p->peer_type]);
        rf__jw_key(w, "peer_guid");
        rf__jw_printf(w, "\"0x%016" PRIx64 "\"", p->peer_guid);
        s_kint(w, "peer_port", p->peer_port);
        s_kstr(w, "peer_desc", p->peer_desc);
    }
    if (p->error[0]) {
        s_kstr(w, "error", p->error);
    }
    rf__jw_puts(w, "}");
}

static void s_labels(rf__jw_t *w, const rf_probe_labels_t *labels)
{
    static const char *const actions[] = {"leave", "set", "remove"};
    rf__jw_puts(w, "{");
    for (int i = 0; labels && i < labels->n; i++) {
        const rf_probe_label_t *l = &labels->l[i];
        rf__jw_key(w, l->key);
        rf__jw_puts(w, "{");
        s_kstr(w, "action", actions[l->action]);
        if (l->action == RF_LABEL_SET) {
            s_kstr(w, "value", l->value);
        }
        s_kstr(w, "reason", l->reason);
        rf__jw_puts(w, "}");
    }
    rf__jw_puts(w, "}");
}

char *rf__report_json(const rf_probe_facts_t *f, const rf_probe_labels_t *labels, size_t *len)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "{");
    rf__jw_key(&w, "node");
    rf__jw_str(&w, f->hostname);
    rf__jw_key(&w, "sources");
    rf__jw_puts(&w, "{");
    s_src(&w, "hwloc", &f->hwloc);
    s_src(&w, "nvml", &f->nvml);
    s_src(&w, "lldp", &f->lldp);
    s_src(&w, "ib", &f->ib);
    rf__jw_puts(&w, "}");
    rf__jw_key(&w, "numa");
    s_numa(&w, f->numa);
    rf__jw_key(&w, "packages");
    rf__jw_printf(&w, "%d", f->n_packages);
    rf__jw_key(&w, "gpus");
    rf__jw_puts(&w, "[");
    for (int g = 0; g < f->n_gpus; g++)
        s_dev(&w, f, &f->gpus[g], g);
    rf__jw_puts(&w, "]");
    rf__jw_key(&w, "nics");
    rf__jw_puts(&w, "[");
    for (int n = 0; n < f->n_nics; n++)
        s_dev(&w, f, &f->nics[n], -1);
    rf__jw_puts(&w, "]");
    rf__jw_key(&w, "nvlink");
    rf__jw_puts(&w, "{");
    rf__jw_key(&w, "matrix");
    rf__jw_str(&w, f->nvlink_matrix[0] ? f->nvlink_matrix : NULL);
    rf__jw_key(&w, "domains");
    rf__jw_puts(&w, "[");
    for (int d = 0; d < f->n_nvlink_domains; d++) {
        rf__jw_sep(&w);
        rf__jw_puts(&w, "[");
        for (int g = 0; g < f->n_gpus; g++)
            if (f->gpus[g].nvlink_domain == d) {
                rf__jw_sep(&w);
                rf__jw_str(&w, f->gpus[g].busid);
            }
        rf__jw_puts(&w, "]");
    }
    rf__jw_puts(&w, "]}");
    rf__jw_key(&w, "accelerator_domain");
    rf__jw_str(&w, f->accel_domain[0] ? f->accel_domain : NULL);
    rf__jw_key(&w, "lldp");
    rf__jw_puts(&w, "[");
    for (int i = 0; i < f->n_lldp; i++)
        s_lldp(&w, &f->lldp_nbrs[i]);
    rf__jw_puts(&w, "]");
    rf__jw_key(&w, "ib");
    rf__jw_puts(&w, "[");
    for (int i = 0; i < f->n_ib; i++)
        s_ib(&w, &f->ib_ports[i]);
    rf__jw_puts(&w, "]");
    rf__jw_key(&w, "labels");
    s_labels(&w, labels);
    rf__jw_key(&w, "notes");
    rf__jw_puts(&w, "[");
    for (int i = 0; i < f->n_notes; i++) {
        rf__jw_sep(&w);
        rf__jw_str(&w, f->notes[i]);
    }
    rf__jw_puts(&w, "]}\n");
    if (w.oom) {
        rf__jw_fini(&w);
        return NULL;
    }
    return rf__jw_take(&w, len);
}
