/* probe/ib.h: the InfiniBand leaf switch of each of this node's HCA ports.
 *
 * Live (probe/ibmad.c, the only file including libibmad/libibumad headers):
 * one directed-route SMP NodeInfo and one NodeDescription query out of
 * every linked local port (DR path "0,<port>"), which names the switch, its
 * GUID and the switch port the cable lands on. It needs /dev/infiniband/umad*
 * (root or a privileged pod) and works without a subnet manager.
 *
 * Saved (probe/ib.c): the same answers as text, as infiniband-diags print
 * them: `smpquery -D nodeinfo 0,<port>` and `smpquery -D nodedesc
 * 0,<port>` output (optionally as a transcript with "$ smpquery ..." command
 * lines, `-C <ca>` naming the CA), and `iblinkinfo -D 0 -l` lines (own port
 * GUID, own description, own port, peer GUID, peer port, peer description).
 * A failed query (an "iberror:" or "_do_madrpc failed" line) marks its port
 * failed. The peer's type comes from NodeInfo; a peer seen only in an
 * iblinkinfo line has type "unknown" and names no leaf (labels.c). */
#ifndef RACKFIT_PROBE_IB_H
#define RACKFIT_PROBE_IB_H

#include <stddef.h>

#include "facts.h"
#include "rackfit/status.h"

#define RF_PROBE_MAX_IB_BYTES (4u << 20)

rf_status rf__ib_parse(const char *text, size_t len, const char *origin, rf_probe_facts_t *f, rf_error_t *err);
rf_status rf__ib_read_file(const char *path, rf_probe_facts_t *f, rf_error_t *err);

/* Ask every local InfiniBand port (probe/ibmad.c). `timeout_ms` per SMP,
 * `retries` more tries each. No HCA is not an error: the source is OK with
 * no ports, and a note says so. */
rf_status rf__ib_live(long timeout_ms, int retries, rf_probe_facts_t *f, rf_error_t *err);

#endif
