/* probe/lldp.h: the Ethernet neighbours of this node, from lldpd.
 *
 * Input is what `lldpcli show neighbors details` prints with `-f json0`
 * (every level an array: the stable shape) or `-f json` (objects or arrays
 * depending on how many neighbours there are, the chassis keyed by its
 * System Name when it sent one); both are read into the same records. On a
 * live node the probe runs `lldpcli -f json0` against the host's lldpd
 * (its control socket mounted into the pod). */
#ifndef RACKFIT_PROBE_LLDP_H
#define RACKFIT_PROBE_LLDP_H

#include <stddef.h>

#include "facts.h"
#include "rackfit/status.h"

#define RF_PROBE_MAX_LLDP_BYTES (16u << 20)

/* Parse lldpcli JSON text into f->lldp / f->n_lldp (origin names the text). */
rf_status rf__lldp_parse(const char *text, size_t len, const char *origin, rf_probe_facts_t *f, rf_error_t *err);
rf_status rf__lldp_read_file(const char *path, rf_probe_facts_t *f, rf_error_t *err);
/* Run `<lldpcli> [-u <socket>] -f json0 show neighbors details`, at most
 * `timeout_ms`, and parse what it prints. */
rf_status rf__lldp_live(const char *lldpcli, const char *socket, long timeout_ms, rf_probe_facts_t *f, rf_error_t *err);

#endif
