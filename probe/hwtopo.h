/* probe/hwtopo.h: inside the node, with hwloc (probe/hwtopo.c is the only
 * file of probe/ that includes <hwloc.h>): GPUs, NICs, NUMA nodes and
 * packages, the PCIe path class between every GPU and every NIC (and
 * between GPUs), and NVLink/XGMI domains when the topology carries an
 * `NVLinkBandwidth` or `XGMIBandwidth` matrix (XML dumps made with hwloc's
 * NVML/RSMI plug-ins do; Debian's hwloc never writes one).
 *
 * Common ancestors are found by walking the parent chains by hand:
 * hwloc_get_common_ancestor_obj() compares depths, and I/O objects have
 * negative virtual depths, so it walks off the root for two I/O objects. */
#ifndef RACKFIT_PROBE_HWTOPO_H
#define RACKFIT_PROBE_HWTOPO_H

#include <stddef.h>

#include "facts.h"
#include "rackfit/status.h"

#define RF_PROBE_MAX_XML_BYTES (64u << 20) /* an XML dump larger than this is refused */

/* Fill f->hwloc, the NUMA/package counts, GPUs, NICs, paths and NVLink
 * domains from the XML file `xml_path`, or from this system when it is
 * NULL. On failure f->hwloc says why and no device is recorded. */
rf_status rf__hwtopo_read(const char *xml_path, rf_probe_facts_t *f, rf_error_t *err);

#endif
