/* probe/ibmad.c: the libibmad/libibumad boundary (the only file of probe/
 * including <infiniband/mad.h> and <infiniband/umad.h>): one
 * directed-route SMP NodeInfo and NodeDescription query out of each linked
 * local InfiniBand port (rf__ib_live in probe/ib.h). Ports whose link layer
 * is Ethernet (RoCE) are skipped: they have no SMPs, and LLDP covers them. */
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ib.h"

#define S_MAX_CAS 32

/* Ask the node at DR path 0,<port> for NodeInfo and NodeDescription. */
static void s_query(const char *ca, int port, long timeout_ms, int retries, rf_probe_ib_t *p)
{
    int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
    struct ibmad_port *src = mad_rpc_open_port((char *)ca, port, classes, 2);
    if (!src) {
        snprintf(p->error, sizeof p->error,
                 "cannot open the MAD port of %.*s port %d (is /dev/infiniband/umad* there "
                 "and writable?)",
                 64, ca, port);
        return;
    }
    mad_rpc_set_timeout(src, (int)timeout_ms);
    mad_rpc_set_retries(src, retries);
    ib_portid_t id;
    memset(&id, 0, sizeof id);
    char path[16];
    snprintf(path, sizeof path, "0,%d", port);
    if (str2drpath(&id.drpath, path, 0, 0) < 0) {
        snprintf(p->error, sizeof p->error, "bad DR path %s", path);
        mad_rpc_close_port(src);
        return;
    }
    uint8_t info[IB_SMP_DATA_SIZE] = {0}, desc[IB_SMP_DATA_SIZE] = {0};
    if (!smp_query_via(info, &id, IB_ATTR_NODE_INFO, 0, 0, src)) {
        snprintf(p->error, sizeof p->error, "SMP NodeInfo over DR path %s: no answer within %ld ms (%d retries)", path,
                 timeout_ms, retries);
        mad_rpc_close_port(src);
        return;
    }
    uint32_t type = 0, local_port = 0;
    uint64_t guid = 0;
    mad_decode_field(info, IB_NODE_TYPE_F, &type);
    mad_decode_field(info, IB_NODE_GUID_F, &guid);
    mad_decode_field(info, IB_NODE_LOCAL_PORT_F, &local_port);
    p->peer_type = type == IB_NODE_SWITCH ? RF_IB_PEER_SWITCH
                   : type == IB_NODE_CA   ? RF_IB_PEER_CA
                   : type == 3            ? RF_IB_PEER_ROUTER
                                          : RF_IB_PEER_UNKNOWN;
    p->peer_guid = guid;
    p->peer_port = (int)local_port;
    if (!smp_query_via(desc, &id, IB_ATTR_NODE_DESC, 0, 0, src))
        snprintf(p->error, sizeof p->error, "SMP NodeDescription over DR path %s: no answer within %ld ms", path,
                 timeout_ms);
    else
        snprintf(p->peer_desc, sizeof p->peer_desc, "%.*s", IB_SMP_DATA_SIZE, (const char *)desc);
    mad_rpc_close_port(src);
}

rf_status rf__ib_live(long timeout_ms, int retries, rf_probe_facts_t *f, rf_error_t *err)
{
    snprintf(f->ib.origin, sizeof f->ib.origin, "libibmad: directed-route SMPs out of each local port");
    f->n_ib = 0;
    if (umad_init() < 0)
        return rf__src_fail(&f->ib, RF_EIO, err, "InfiniBand: umad_init failed (no ib_umad kernel module?)");
    char names[S_MAX_CAS][UMAD_CA_NAME_LEN];
    int n = umad_get_cas_names(names, S_MAX_CAS);
    if (n < 0) {
        umad_done();
        return rf__src_fail(&f->ib, RF_EIO, err, "InfiniBand: cannot list the HCAs (umad_get_cas_names)");
    }
    int n_read = 0; /* libibumad names a default CA when it finds none: count those it could read */
    for (int c = 0; c < n; c++) {
        umad_ca_t ca;
        if (umad_get_ca(names[c], &ca) < 0) {
            rf__facts_note(f, "InfiniBand: cannot read CA %s (umad_get_ca)", names[c]);
            continue;
        }
        n_read++;
        for (int i = 1; i <= ca.numports && i < UMAD_CA_MAX_PORTS; i++) {
            umad_port_t *port = ca.ports[i];
            if (!port || (strcmp(port->link_layer, "InfiniBand") && strcmp(port->link_layer, "IB")))
                continue;
            if (f->n_ib >= RF_PROBE_MAX_IB) {
                umad_release_ca(&ca);
                umad_done();
                return rf__src_fail(&f->ib, RF_ELIMIT, err, "InfiniBand: more than %d ports", RF_PROBE_MAX_IB);
            }
            rf_probe_ib_t *p = &f->ib_ports[f->n_ib++];
            memset(p, 0, sizeof *p);
            snprintf(p->ca, sizeof p->ca, "%.*s", (int)sizeof p->ca - 1, names[c]); /* truncated to fit */
            p->port = port->portnum;
            p->down = port->state <= 1; /* 1: Down (physically no link); Initialize and up have a peer */
            if (!p->down)
                s_query(names[c], port->portnum, timeout_ms, retries, p);
        }
        umad_release_ca(&ca);
    }
    umad_done();
    if (f->n_ib == 0)
        rf__facts_note(f, "InfiniBand: no InfiniBand port on this node (%d HCA%s read)", n_read,
                       n_read == 1 ? "" : "s");
    f->ib.state = RF_SRC_OK;
    return RF_OK;
}
