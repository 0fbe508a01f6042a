/* watcher/kdoc.h: lookups in a decoded Kubernetes object (base/doc.h) by a
 * dotted path ("metadata.name", "status.conditions"). Keys are at most 127
 * bytes; a path through something that is not a map finds nothing. Used by
 * every module that reads API objects (kobj.c, requests.c, binder, leader,
 * watch), so none of them needs another's internals. */
#ifndef RACKFIT_WATCHER_KDOC_H
#define RACKFIT_WATCHER_KDOC_H

#include "doc.h"

/* A nested field, or NULL. Borrowed from `doc`. */
const rf_doc_t *rf__doc_at(const rf_doc_t *doc, const char *dotted);
/* A string field, or NULL (absent, or not a string). Borrowed from `doc`. */
const char *rf__doc_str(const rf_doc_t *doc, const char *dotted);

#endif
