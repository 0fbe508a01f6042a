/* base/json.h: the JSON boundary. The only file that includes <jansson.h>
 * is base/json.c; it turns JSON text into an rf_doc (base/doc.h), with
 * limits on size and depth, duplicate keys rejected, and errors that carry
 * the byte offset and line. */
#ifndef RACKFIT_BASE_JSON_H
#define RACKFIT_BASE_JSON_H

#include <stddef.h>

#include "arena.h"
#include "doc.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"

/* Parse `len` bytes of JSON into a document allocated in `arena`.
 * Errors: RF_EPARSE (with offset and a message naming line and column),
 * RF_ELIMIT (input larger than limits->max_input_bytes, nesting deeper than
 * limits->max_depth, a string longer than limits->max_string). */
rf_status rf__json_parse(const char *text, size_t len, const rf_limits_t *limits, rf__arena_t *arena, rf_doc_t **out,
                         rf_error_t *err);

#endif
