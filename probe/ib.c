/* probe/ib.c: saved smpquery / iblinkinfo output into InfiniBand peer
 * records (probe/ib.h). A line-by-line reader: each line is one of a
 * command ("$ smpquery ... 0,N"), a NodeInfo header ("# Node info: DR path
 * ...; 0,N"), a "Field:....value" line, a "Node Description:.text" line, an
 * iblinkinfo -l link line, or an error; anything else is ignored. */
#include "ib.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

typedef struct {
    rf_probe_facts_t *f;
    rf_probe_ib_t *cur; /* the record the smpquery lines being read are about */
    char ca[64];        /* from the last command's -C */
    int port;           /* from the last command or header's DR path, 0 when none */
} s_reader_t;

/* The record for (ca, port) from smpquery output: the last one with that port, or a new one. */
static rf_probe_ib_t *s_record(s_reader_t *r, rf_error_t *err)
{
    rf_probe_facts_t *f = r->f;
    for (int i = f->n_ib - 1; i >= 0; i--)
        if (f->ib_ports[i].port == r->port && !strcmp(f->ib_ports[i].ca, r->ca))
            return &f->ib_ports[i];
    if (f->n_ib >= RF_PROBE_MAX_IB) {
        rf__src_fail(&f->ib, RF_ELIMIT, err, "InfiniBand: more than %d ports", RF_PROBE_MAX_IB);
        return NULL;
    }
    rf_probe_ib_t *p = &f->ib_ports[f->n_ib++];
    memset(p, 0, sizeof *p);
    snprintf(p->ca, sizeof p->ca, "%s", r->ca);
    p->port = r->port;
    return p;
}

/* The port of a DR path "0,N" at the end of `s` (after the last space or ';'). */
static int s_drpath_port(const char *s)
{
    const char *p = strstr(s, " 0,");
    if (!p)
        return 0;
    int port = 0;
    if (sscanf(p + 3, "%d", &port) != 1 || port <= 0 || port > 255)
        return 0;
    return port;
}

static const char *s_value(const char *line, const char *field)
{
    size_t n = strlen(field);
    if (strncmp(line, field, n) != 0)
        return NULL;
    line += n;
    while (*line == '.')
        line++;
    return line;
}

static void s_trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
}

/* `0x<guid> "<own desc>" <lid> <port>[..] ==(<state>)==> 0x<guid> <lid> <port>[..] "<desc>" (...)`,
 * or, for a port without link, `... ==(  Down/ Polling)==>  [  ] "" ( )`. */
static rf_status s_linkinfo(s_reader_t *r, const char *line, rf_error_t *err)
{
    const char *q1 = strchr(line, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
    const char *a = strstr(line, "==("), *b = a ? strstr(a, ")==>") : NULL;
    int lid, port;
    if (!q2 || !b || sscanf(q2 + 1, "%d %d[", &lid, &port) != 2)
        return RF_OK; /* not a link line */
    char own[128];
    const char *d = q1 + 1;
    while (*d == ' ')
        d++;
    snprintf(own, sizeof own, "%.*s", (int)(q2 - d), d);
    const char *ca = strrchr(own, ' ');
    rf_probe_facts_t *f = r->f;
    uint64_t guid = 0;
    int peer_lid, peer_port;
    const char *rest = b + 4;
    while (*rest == ' ')
        rest++;
    bool down = strstr(a, "Down") != NULL || sscanf(rest, "0x%" SCNx64 " %d %d[", &guid, &peer_lid, &peer_port) != 3;
    const char *pq1 = strchr(rest, '"'), *pq2 = pq1 ? strchr(pq1 + 1, '"') : NULL;
    if (!down)
        for (int i = 0; i < f->n_ib; i++) /* the same cable seen by smpquery: name its CA and port */
            if (f->ib_ports[i].peer_guid == guid && f->ib_ports[i].peer_port == peer_port) {
                snprintf(f->ib_ports[i].ca, sizeof f->ib_ports[i].ca, "%s", ca ? ca + 1 : "");
                f->ib_ports[i].port = port;
                return RF_OK;
            }
    if (f->n_ib >= RF_PROBE_MAX_IB)
        return rf__src_fail(&f->ib, RF_ELIMIT, err, "InfiniBand: more than %d ports", RF_PROBE_MAX_IB);
    rf_probe_ib_t *p = &f->ib_ports[f->n_ib++];
    memset(p, 0, sizeof *p);
    snprintf(p->ca, sizeof p->ca, "%s", ca ? ca + 1 : "");
    p->port = port;
    p->down = down;
    if (!down) {
        p->peer_guid = guid;
        p->peer_port = peer_port;
        if (pq2)
            snprintf(p->peer_desc, sizeof p->peer_desc, "%.*s", (int)(pq2 - pq1 - 1), pq1 + 1);
    }
    return RF_OK;
}

static rf_status s_line(s_reader_t *r, char *line, rf_error_t *err)
{
    s_trim(line);
    const char *v;
    if (line[0] == '$') { /* a transcript's command line */
        const char *c = strstr(line, " -C ");
        r->ca[0] = 0;
        if (c)
            sscanf(c + 4, "%63s", r->ca);
        r->port = strstr(line, "smpquery") ? s_drpath_port(line) : 0;
        r->cur = NULL;
        return RF_OK;
    }
    if (!strncmp(line, "# Node info:", 12)) {
        if ((r->port = s_drpath_port(line)) > 0 && !(r->cur = s_record(r, err)))
            return err->code;
        return RF_OK;
    }
    if (strstr(line, "iberror:") || strstr(line, "_do_madrpc failed")) {
        if (r->port <= 0)
            return RF_OK; /* a failure we cannot tie to a port: the port stays unknown */
        rf_probe_ib_t *p = r->cur ? r->cur : s_record(r, err);
        if (!p)
            return err->code;
        if (!p->error[0])
            snprintf(p->error, sizeof p->error, "SMP query over DR path 0,%d failed: %s", r->port, line);
        return RF_OK;
    }
    if ((v = s_value(line, "Node Description:"))) {
        if (r->port <= 0)
            return RF_OK;
        rf_probe_ib_t *p = r->cur ? r->cur : s_record(r, err);
        if (!p)
            return err->code;
        snprintf(p->peer_desc, sizeof p->peer_desc, "%.*s", (int)sizeof p->peer_desc - 1, v); /* truncated to fit */
        return RF_OK;
    }
    if (r->cur && (v = s_value(line, "NodeType:"))) {
        r->cur->peer_type = !strcmp(v, "Switch")            ? RF_IB_PEER_SWITCH
                            : !strcmp(v, "Channel Adapter") ? RF_IB_PEER_CA
                            : !strcmp(v, "Router")          ? RF_IB_PEER_ROUTER
                                                            : RF_IB_PEER_UNKNOWN;
        return RF_OK;
    }
    if (r->cur && (v = s_value(line, "Guid:"))) {
        sscanf(v, "0x%" SCNx64, &r->cur->peer_guid);
        return RF_OK;
    }
    if (r->cur && (v = s_value(line, "LocalPort:"))) {
        sscanf(v, "%d", &r->cur->peer_port);
        return RF_OK;
    }
    if (!strncmp(line, "0x", 2) && strstr(line, "==("))
        return s_linkinfo(r, line, err);
    return RF_OK;
}

rf_status rf__ib_parse(const char *text, size_t len, const char *origin, rf_probe_facts_t *f, rf_error_t *err)
{
    f->n_ib = 0;
    snprintf(f->ib.origin, sizeof f->ib.origin, "%s", origin);
    s_reader_t r = {.f = f};
    char line[1024];
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        size_t n = e - i < sizeof line - 1 ? e - i : sizeof line - 1;
        memcpy(line, text + i, n);
        line[n] = 0;
        i = e + 1;
        rf_status rc = s_line(&r, line, err);
        if (rc != RF_OK) {
            f->n_ib = 0;
            return rc;
        }
    }
    for (int i = 0; i < f->n_ib; i++) {
        rf_probe_ib_t *p = &f->ib_ports[i];
        if (!p->down && !p->error[0] && !p->peer_guid)
            snprintf(p->error, sizeof p->error, "port %d: no NodeInfo answer (no peer GUID) in the input", p->port);
    }
    f->ib.state = RF_SRC_OK;
    return RF_OK;
}

rf_status rf__ib_read_file(const char *path, rf_probe_facts_t *f, rf_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    snprintf(f->ib.origin, sizeof f->ib.origin, "%s", path);
    rf_status rc = rf__read_file(path, RF_PROBE_MAX_IB_BYTES, &text, &len, err);
    if (rc != RF_OK)
        return rf__src_fail(&f->ib, rc, err, "InfiniBand: %s", err->message);
    rc = rf__ib_parse(text, len, path, f, err);
    free(text);
    if (rc == RF_OK && f->n_ib == 0)
        rf__facts_note(f, "InfiniBand: %s holds no port (no smpquery or iblinkinfo output)", path);
    return rc;
}
