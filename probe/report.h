/* probe/report.h: the probe's findings and intended labels as JSON (the
 * --dry-run output; shape in probe/report.c and docs/probe.md). */
#ifndef RACKFIT_PROBE_REPORT_H
#define RACKFIT_PROBE_REPORT_H

#include <stddef.h>

#include "facts.h"
#include "labels.h"

/* malloc'ed, NUL-terminated, ends in a newline; NULL when out of memory.
 * `labels` may be NULL. */
char *rf__report_json(const rf_probe_facts_t *f, const rf_probe_labels_t *labels, size_t *len);

#endif
