/* service/codec.h: the MessagePack boundary. service/codec.c is the only file
 * that includes <msgpack.h>; nothing borrowed from msgpack-c crosses it.
 *
 * Decoding untrusted bytes is four stages (STYLE.md, "Untrusted input"):
 * 1. a size cap (the socket's ZMQ_MAXMSGSIZE, and rf__mp_decode again);
 * 2. rf__mp_prescan: walks the raw bytes and allocates nothing. It refuses
 *    truncated input, nesting deeper than the limit, and a total of declared
 *    container elements above the budget: every element takes at least one
 *    byte, so the sum of all declared counts can never exceed the bytes that
 *    follow, and a header such as `dd ff 00 00 00` (an array of 4 billion
 *    items in five bytes) is refused before anything is allocated for it
 *    (msgpack-c issue 1013 is why). Also refuses bin and ext, map keys that
 *    are not strings, and trailing bytes after the one top-level value;
 * 3+4. one walk of the pre-scanned bytes straight into an rf_doc
 *    (base/doc.h) in the caller's arena (msgpack-c's object tree is not
 *    built: it was one more copy of every element; 13.1 -> 9.4 ms on the
 *    16,384-node problem, bench/RESULTS.md; msgpack-c remains the writer):
 *    every string copied, duplicate keys refused, integers above INT64_MAX
 *    refused, strings longer than the limit refused, each error with its
 *    field path.
 *
 * Encoding builds MessagePack in a growable buffer through rf__mp_writer_t,
 * an opaque writer, so that callers (the service's replies, the client's
 * requests) never see msgpack-c either. */
#ifndef RACKFIT_SERVICE_CODEC_H
#define RACKFIT_SERVICE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "doc.h"
#include "rackfit/answer.h"
#include "rackfit/status.h"

/* Decoder limits beyond rf_limits_t (which supplies max_string, max_depth
 * and max_input_bytes). */
typedef struct {
    int64_t max_bytes;    /* whole message; <= 0: no cap beyond the input */
    int32_t max_depth;    /* nesting; clamped to RF__MP_MAX_DEPTH */
    int64_t max_elements; /* declared container elements in total; <= 0: the byte count */
    int32_t max_string;   /* bytes in one string or key */
} rf__mp_limits_t;

/* msgpack-c's own unpacker keeps an explicit stack of this many levels. */
#define RF__MP_MAX_DEPTH 32

void rf__mp_limits_from(rf__mp_limits_t *mp, const rf_limits_t *limits);

/* What the pre-scan learned about a request without decoding it. */
typedef struct {
    int64_t elements;  /* declared elements in total */
    int32_t depth;     /* deepest nesting */
    bool top_map;      /* the top-level value is a map */
    char op[32];       /* top-level "op" when it is a short string, else "" */
    char mode[16];     /* "options"."mode" when a short string, else "" */
    bool has_cluster;  /* top-level "cluster" key present */
    bool has_name_ref; /* top-level "cluster_name" key present */
    size_t id_off;     /* top-level "id" when a string or an integer: its bytes */
    size_t id_len;     /* 0: none */
} rf__mp_scan_t;

/* Stage 2. RF_EPARSE (truncated, bin/ext, non-string key, trailing bytes)
 * or RF_ELIMIT (size, depth, element budget), with `err->offset`. `scan` may
 * be NULL. Allocates nothing; O(len). */
rf_status rf__mp_prescan(const void *data, size_t len, const rf__mp_limits_t *limits, rf__mp_scan_t *scan,
                         rf_error_t *err);

/* Stages 1 to 4: bytes to a document in `arena`. */
rf_status rf__mp_decode(const void *data, size_t len, const rf__mp_limits_t *limits, rf__arena_t *arena, rf_doc_t **out,
                        rf_error_t *err);

/* Stages 3 and 4 only: the caller ran rf__mp_prescan on exactly these
 * bytes with these limits and it passed (rackfitd's main thread does, to
 * choose a lane), so the bytes are not walked twice. */
rf_status rf__mp_decode_prescanned(const void *data, size_t len, const rf__mp_limits_t *limits, rf__arena_t *arena,
                                   rf_doc_t **out, rf_error_t *err);

/* ------------------------------------------------------------- encoding */

typedef struct rf__mp_writer rf__mp_writer_t;

/* NULL on ENOMEM. */
rf__mp_writer_t *rf__mp_writer_new(void);
void rf__mp_writer_destroy(rf__mp_writer_t **w);
/* Forget what was written (keeps the buffer). */
void rf__mp_writer_reset(rf__mp_writer_t *w);
/* The bytes written so far; borrowed until the next write or destroy. */
const void *rf__mp_writer_data(const rf__mp_writer_t *w, size_t *len);
/* Hand the buffer over (malloc'ed; free() it) and reset the writer. */
void *rf__mp_writer_take(rf__mp_writer_t *w, size_t *len);
/* False once any write failed for memory (sticky until reset). */
bool rf__mp_writer_ok(const rf__mp_writer_t *w);

void rf__mp_map(rf__mp_writer_t *w, uint32_t n);
void rf__mp_array(rf__mp_writer_t *w, uint32_t n);
void rf__mp_str(rf__mp_writer_t *w, const char *s); /* NULL: nil */
void rf__mp_strn(rf__mp_writer_t *w, const char *s, size_t n);
void rf__mp_int(rf__mp_writer_t *w, int64_t v);
void rf__mp_double(rf__mp_writer_t *w, double v);
void rf__mp_bool(rf__mp_writer_t *w, bool v);
void rf__mp_nil(rf__mp_writer_t *w);
/* A key followed by nothing: the caller writes the value. */
void rf__mp_key(rf__mp_writer_t *w, const char *key);
/* Bytes already in MessagePack (an id the pre-scan found), copied as they are. */
void rf__mp_raw(rf__mp_writer_t *w, const void *bytes, size_t len);
/* A whole document (the client sends a JSON problem this way). */
void rf__mp_doc(rf__mp_writer_t *w, const rf_doc_t *doc);

/* Answers are not encoded here: rackfitd writes rf_answer_to_doc's
 * document (include/rackfit/answer.h, the one answer encoder) with
 * rf__mp_doc, as the JSON writer writes the same document. */

/* {"id"?: id, "error": {"code", "message", "path"}}: `id` NULL when the
 * request had none (or could not be read). */
void rf__mp_error_reply(rf__mp_writer_t *w, const rf_doc_t *id, rf_status code, const char *message, const char *path);
/* The same with the id as raw MessagePack bytes (id_len 0: none). */
void rf__mp_error_reply_raw(rf__mp_writer_t *w, const void *id, size_t id_len, rf_status code, const char *message,
                            const char *path);

#endif
