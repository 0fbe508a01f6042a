/* base/doc.h: a small read-only document tree (null, bool, integer, float,
 * string, array, map) that both encodings of a problem decode into.
 *
 * The JSON boundary (base/json.c, jansson) and the MessagePack codec
 * (service/, msgpack-c) each convert their library's tree into an rf_doc,
 * copying every string into an arena, so nothing borrowed from a library
 * buffer crosses the boundary and one schema reader (solver/problem_read.c)
 * serves both. Map keys keep their input order; duplicate keys are rejected by
 * the boundaries. */
#ifndef RACKFIT_BASE_DOC_H
#define RACKFIT_BASE_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

typedef enum {
    RF_DOC_NULL = 0,
    RF_DOC_BOOL,
    RF_DOC_INT,
    RF_DOC_FLOAT,
    RF_DOC_STR,
    RF_DOC_ARRAY,
    RF_DOC_MAP
} rf_doc_type;

typedef struct rf_doc rf_doc_t;
typedef struct rf_doc_kv rf_doc_kv_t;

struct rf_doc {
    rf_doc_type type;
    uint32_t len; /* STR: bytes; ARRAY: items; MAP: pairs */
    long offset;  /* byte offset in the input, -1 when unknown */
    union {
        bool b;
        int64_t i;
        double f;
        const char *s; /* NUL-terminated copy, `len` bytes before the NUL */
        rf_doc_t *items;
        rf_doc_kv_t *pairs;
    } u;
};

struct rf_doc_kv {
    const char *key; /* NUL-terminated copy */
    uint32_t key_len;
    rf_doc_t value;
};

/* Name of a type for messages ("a string", "a map"). Static storage. */
const char *rf__doc_type_name(rf_doc_type type);
/* The value of `key` in a MAP, or NULL. Linear: maps in the contract are small. */
const rf_doc_t *rf__doc_get(const rf_doc_t *map, const char *key);

/* Contract paths: append ".name" for plain keys (letters, digits, `_`, not
 * starting with a digit) or `["key"]` (JSON-escaped) for any other key, and
 * "[i]" for array items. Truncates safely at `cap`; returns the new length. */
int rf__path_key(char *path, int len, int cap, const char *key);
int rf__path_index(char *path, int len, int cap, long index);

#endif
