/* rackfit/quantity.h: Kubernetes resource quantities, exact, as int64 base units.
 *
 * CPU ("cpu") is counted in millicores; every other resource in whole units
 * (bytes for memory, ephemeral-storage and hugepages-*). Values are rounded up
 * the way Kubernetes rounds them (`0.1m` cpu is 1 millicore, `1.5` bytes is 2).
 * Accepted forms are Kubernetes': an optional sign, digits with an optional
 * fraction, then an optional suffix: binary (Ki Mi Gi Ti Pi Ei), decimal
 * (n u m "" k M G T P E) or an exponent (e3, E-2). */
#ifndef RACKFIT_QUANTITY_H
#define RACKFIT_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest base-unit amount the contract accepts (2^62). */
#define RF_QTY_MAX (INT64_C(1) << 62)
/* Free or allocatable capacity that has no limit (a node without `pods`). */
#define RF_QTY_UNLIMITED INT64_MAX

/* How a resource is counted. */
typedef enum {
    RF_QTY_MILLI = 0, /* cpu: millicores */
    RF_QTY_UNITS,     /* memory, storage, hugepages-*: bytes, rounded up */
    RF_QTY_WHOLE      /* extended resources (nvidia.com/gpu, pods): integers only */
} rf_qty_kind;

/* The kind of a resource by its name: "cpu" -> MILLI; "memory",
 * "ephemeral-storage", "storage", "hugepages-*" -> UNITS; anything else WHOLE. */
rf_qty_kind rf_qty_kind_of(const char *resource);

/* Parse the text of a quantity (`len` bytes, not necessarily NUL-terminated)
 * into base units of `kind`. Errors (RF_ESCHEMA, message in `err`, path left
 * empty for the caller to fill): empty or malformed text, a negative amount,
 * an amount above RF_QTY_MAX, a fraction of a WHOLE resource. */
rf_status rf_qty_parse(const char *text, size_t len, rf_qty_kind kind, int64_t *out, rf_error_t *err);

/* The same for a number given as JSON/MessagePack integer or float. */
rf_status rf_qty_from_int(int64_t value, rf_qty_kind kind, int64_t *out, rf_error_t *err);
rf_status rf_qty_from_double(double value, rf_qty_kind kind, int64_t *out, rf_error_t *err);

/* Write `value` (base units of `kind`) as canonical text: "42500m" or "96" for
 * cpu, plain integers otherwise. Returns the length written (< cap), or the
 * length needed if it did not fit. */
int rf_qty_format(int64_t value, rf_qty_kind kind, char *buf, int cap);

#ifdef __cplusplus
}
#endif
#endif
