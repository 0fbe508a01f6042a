/* service/codec.c: the MessagePack boundary (service/codec.h), the only file
 * that includes <msgpack.h>.
 *
 * Invariants:
 * - rf__mp_decode reads only bytes that rf__mp_prescan accepted, straight
 *   into the document (s_read: no msgpack-c object tree in between); every
 *   read is bounds-checked again, and a container is allocated only when
 *   the bytes left can hold its declared elements, so the document holds at
 *   most ~(16 + 32) bytes per input byte and nesting stays within
 *   RF__MP_MAX_DEPTH even for bytes that were not scanned;
 * - every string in a decoded document is a NUL-terminated copy in the
 *   caller's arena;
 * - the writer's buffer is malloc'ed (msgpack_sbuffer uses realloc), so a
 *   taken buffer is released with free(). */
#include "codec.h"

#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- limits */

void rf__mp_limits_from(rf__mp_limits_t *mp, const rf_limits_t *limits)
{
    rf_limits_t def;
    if (!limits) {
        rf_limits_default(&def);
        limits = &def;
    }
    mp->max_bytes = limits->max_input_bytes;
    mp->max_depth = limits->max_depth;
    mp->max_elements = 0;
    mp->max_string = limits->max_string;
}

static int32_t s_depth_limit(const rf__mp_limits_t *l)
{
    if (!l || l->max_depth <= 0 || l->max_depth > RF__MP_MAX_DEPTH)
        return RF__MP_MAX_DEPTH;
    return l->max_depth;
}

/* -------------------------------------------------------------- prescan */

typedef struct {
    uint64_t left;  /* items (map: keys and values) still to read */
    bool is_map;    /* odd items are values */
    uint8_t tag;    /* what this container is, for the peek (s_tag_*) */
    uint8_t key_id; /* at a value: which interesting key it belongs to */
} s_frame_t;

enum { S_TAG_OTHER = 0, S_TAG_TOP, S_TAG_OPTIONS };
enum { S_KEY_NONE = 0, S_KEY_OP, S_KEY_OPTIONS, S_KEY_MODE, S_KEY_CLUSTER, S_KEY_NAME_REF, S_KEY_ID };

static rf_status s_scan_fail(rf_error_t *err, rf_status code, size_t at, const char *fmt, const char *what)
{
    rf_error_set(err, code, "", fmt, what);
    if (err)
        err->offset = (long)at;
    return code;
}

static uint64_t s_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static uint8_t s_key_id(uint8_t tag, const unsigned char *s, uint64_t n)
{
#define S_IS(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0)
    if (tag == S_TAG_TOP) {
        if (S_IS("op"))
            return S_KEY_OP;
        if (S_IS("options"))
            return S_KEY_OPTIONS;
        if (S_IS("cluster"))
            return S_KEY_CLUSTER;
        if (S_IS("cluster_name"))
            return S_KEY_NAME_REF;
        if (S_IS("id"))
            return S_KEY_ID;
    } else if (tag == S_TAG_OPTIONS) {
        if (S_IS("mode"))
            return S_KEY_MODE;
    }
#undef S_IS
    return S_KEY_NONE;
}

/* One pass over the bytes: a state machine (one MessagePack header per
 * iteration, an explicit frame stack), kept whole on purpose: its states
 * share the cursor, the stack and the element budget, and split into
 * functions they would be passed around by pointer on every byte. */
rf_status rf__mp_prescan(const void *data, size_t len, const rf__mp_limits_t *limits, rf__mp_scan_t *scan,
                         rf_error_t *err)
{
    rf__mp_scan_t local;
    if (!scan)
        scan = &local;
    memset(scan, 0, sizeof *scan);
    if (!data && len > 0)
        return rf_error_set(err, RF_EINVAL, "", "rf__mp_prescan: NULL data");
    if (limits && limits->max_bytes > 0 && (uint64_t)len > (uint64_t)limits->max_bytes)
        return s_scan_fail(err, RF_ELIMIT, 0, "the message is larger than the limit of %s bytes", "max_input_bytes");
    if (len == 0)
        return s_scan_fail(err, RF_EPARSE, 0, "%s", "the message is empty");
    const unsigned char *b = data;
    const int32_t max_depth = s_depth_limit(limits);
    const uint64_t budget = limits && limits->max_elements > 0 && (uint64_t)limits->max_elements < len
                                ? (uint64_t)limits->max_elements
                                : (uint64_t)len;
    s_frame_t stack[RF__MP_MAX_DEPTH + 1];
    int32_t depth = 0; /* frames open */
    uint64_t total = 0;
    size_t i = 0;
    bool done = false;
    while (!done) {
        /* Where this value sits: in a map as a key? which key's value? */
        s_frame_t *top = depth > 0 ? &stack[depth - 1] : NULL;
        bool is_key = top && top->is_map && (top->left % 2 == 0);
        uint8_t value_of = top && top->is_map && !is_key ? top->key_id : S_KEY_NONE;
        if (i >= len)
            return s_scan_fail(err, RF_EPARSE, i, "%s", "the message ends inside a value (truncated)");
        size_t at = i;
        unsigned char c = b[i++];
        uint64_t n = 0;   /* container items, or string/payload bytes */
        int kind = 0;     /* 0 scalar, 1 string, 2 array, 3 map */
        size_t fixed = 0; /* payload bytes of a fixed-size scalar */
        if (c <= 0x7f || c >= 0xe0) {
            /* fixint */
        } else if (c <= 0x8f) {
            kind = 3;
            n = c & 0x0f;
        } else if (c <= 0x9f) {
            kind = 2;
            n = c & 0x0f;
        } else if (c <= 0xbf) {
            kind = 1;
            n = c & 0x1f;
        } else {
            int lenbytes = 0;
            switch (c) {
            case 0xc0: /* nil */
            case 0xc2: /* false */
            case 0xc3: /* true */
                break;
            case 0xc1:
                return s_scan_fail(err, RF_EPARSE, at, "%s", "byte 0xc1 is never used in MessagePack");
            case 0xc4:
            case 0xc5:
            case 0xc6:
                return s_scan_fail(err, RF_EPARSE, at, "%s", "bin values are not accepted (use strings)");
            case 0xc7:
            case 0xc8:
            case 0xc9:
            case 0xd4:
            case 0xd5:
            case 0xd6:
            case 0xd7:
            case 0xd8:
                return s_scan_fail(err, RF_EPARSE, at, "%s", "ext values are not accepted");
            case 0xca:
                fixed = 4;
                break;
            case 0xcb:
                fixed = 8;
                break;
            case 0xcc:
            case 0xd0:
                fixed = 1;
                break;
            case 0xcd:
            case 0xd1:
                fixed = 2;
                break;
            case 0xce:
            case 0xd2:
                fixed = 4;
                break;
            case 0xcf:
            case 0xd3:
                fixed = 8;
                break;
            case 0xd9:
                kind = 1;
                lenbytes = 1;
                break;
            case 0xda:
                kind = 1;
                lenbytes = 2;
                break;
            case 0xdb:
                kind = 1;
                lenbytes = 4;
                break;
            case 0xdc:
                kind = 2;
                lenbytes = 2;
                break;
            case 0xdd:
                kind = 2;
                lenbytes = 4;
                break;
            case 0xde:
                kind = 3;
                lenbytes = 2;
                break;
            case 0xdf:
                kind = 3;
                lenbytes = 4;
                break;
            default:
                return s_scan_fail(err, RF_EPARSE, at, "%s", "unknown type byte");
            }
            if (lenbytes) {
                if (len - i < (size_t)lenbytes)
                    return s_scan_fail(err, RF_EPARSE, at, "%s", "the message ends inside a header (truncated)");
                n = s_be(b + i, lenbytes);
                i += (size_t)lenbytes;
            }
        }
        if (fixed) {
            if (len - i < fixed)
                return s_scan_fail(err, RF_EPARSE, at, "%s", "the message ends inside a number (truncated)");
            i += fixed;
        }
        if (is_key && kind != 1)
            return s_scan_fail(err, RF_EPARSE, at, "%s", "a map key must be a string");
        if (kind == 1) {
            if (n > len - i)
                return s_scan_fail(err, RF_EPARSE, at, "%s", "a string runs past the end of the message (truncated)");
            if (limits && limits->max_string > 0 && n > (uint64_t)limits->max_string)
                return s_scan_fail(err, RF_ELIMIT, at, "a string is longer than the limit of %s bytes", "max_string");
            if (is_key)
                top->key_id = s_key_id(top->tag, b + i, n);
            else if (value_of == S_KEY_OP && n < sizeof scan->op) {
                memcpy(scan->op, b + i, n);
                scan->op[n] = '\0';
            } else if (value_of == S_KEY_MODE && n < sizeof scan->mode) {
                memcpy(scan->mode, b + i, n);
                scan->mode[n] = '\0';
            }
            i += (size_t)n;
        }
        if (is_key) {
            if (top->key_id == S_KEY_CLUSTER)
                scan->has_cluster = true;
            else if (top->key_id == S_KEY_NAME_REF)
                scan->has_name_ref = true;
        }
        if (value_of == S_KEY_ID && depth == 1 &&
            (kind == 1 || (kind == 0 && c != 0xc0 && c != 0xc2 && c != 0xc3 && c != 0xca && c != 0xcb))) {
            scan->id_off = at;
            scan->id_len = i - at;
        }
        /* This value is read: count it in its container. */
        if (top)
            top->left--;
        if (kind >= 2) {
            uint64_t items = kind == 3 ? n * 2 : n;
            /* Every item takes at least one byte: the declared counts of all
             * containers together never exceed the bytes of the message. */
            if (items > len - i || items > budget - total)
                return s_scan_fail(err, RF_ELIMIT, at,
                                   "a container declares more elements than the message can hold (%s)",
                                   "element budget");
            total += items;
            if (depth >= max_depth)
                return s_scan_fail(err, RF_ELIMIT, at, "nesting deeper than the limit (%s)", "max_depth");
            if (depth == 0 && kind == 3)
                scan->top_map = true;
            uint8_t tag = S_TAG_OTHER;
            if (depth == 0)
                tag = S_TAG_TOP;
            else if (value_of == S_KEY_OPTIONS && depth == 1 && kind == 3)
                tag = S_TAG_OPTIONS;
            stack[depth++] = (s_frame_t){.left = items, .is_map = kind == 3, .tag = tag, .key_id = S_KEY_NONE};
            if (depth > scan->depth)
                scan->depth = depth;
        }
        /* Close every container that is now complete. */
        while (depth > 0 && stack[depth - 1].left == 0)
            depth--;
        if (depth == 0)
            done = true;
    }
    scan->elements = (int64_t)total;
    if (i != len)
        return s_scan_fail(err, RF_EPARSE, i, "%s", "trailing bytes after the message's value");
    return RF_OK;
}

/* --------------------------------------------------------------- decode */

/* The path of the value being converted is kept as a stack of segments
 * (a key, or an index when key is NULL) and written out only for an error:
 * building it for every element would cost more than the conversion. */
typedef struct {
    const char *key;
    long index;
} s_seg_t;

/* Map keys repeat (every node has "name", "labels", the same label and
 * resource names): a key whose bytes equal a recent key's of the same slot
 * (by length and end bytes) shares that key's checked copy instead of being
 * checked and copied again; the documents are read-only. 16,384-node
 * problem (callgrind, the codec and the schema reader): -11 % of the
 * instructions (-13 % with the reader's first-byte checks). Sharing short
 * values too saved 1 % more instructions but measured slower in wall time
 * (24 ms in most runs, against 14-15 ms with keys alone). */
#define S_KEY_SLOTS 64

typedef struct {
    const char *s;
    uint32_t len;
} s_key_t;

typedef struct {
    rf__arena_t *arena;
    int32_t max_string;
    rf_error_t *err;
    s_seg_t seg[RF__MP_MAX_DEPTH + 2];
    int n_seg;
    s_key_t keys[S_KEY_SLOTS];
    char path[RF_ERROR_PATH_MAX];
} s_dec_t;

/* d->path for the current segments. */
static const char *s_path(s_dec_t *d)
{
    int len = 0;
    d->path[0] = '\0';
    for (int i = 0; i < d->n_seg && i < (int)(sizeof d->seg / sizeof d->seg[0]); i++)
        len = d->seg[i].key ? rf__path_key(d->path, len, (int)sizeof d->path, d->seg[i].key)
                            : rf__path_index(d->path, len, (int)sizeof d->path, d->seg[i].index);
    return d->path;
}

static rf_status s_nomem(s_dec_t *d)
{
    return rf_error_set(d->err, RF_ENOMEM, s_path(d), "out of memory for the decoded document");
}

typedef struct {
    const char *key;
    uint32_t len;
} s_keyref_t;

static int s_keyref_cmp(const void *a, const void *b)
{
    const s_keyref_t *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* The first duplicate key of a converted map, or NULL. */
static const char *s_duplicate_key(const rf_doc_t *map, bool *oom)
{
    uint32_t n = map->len;
    *oom = false;
    if (n < 2)
        return NULL;
    if (n <= 16) {
        for (uint32_t i = 1; i < n; i++)
            for (uint32_t k = 0; k < i; k++)
                if (map->u.pairs[i].key_len == map->u.pairs[k].key_len &&
                    memcmp(map->u.pairs[i].key, map->u.pairs[k].key, map->u.pairs[i].key_len) == 0)
                    return map->u.pairs[i].key;
        return NULL;
    }
    s_keyref_t *refs = malloc((size_t)n * sizeof *refs);
    if (!refs) {
        *oom = true;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        refs[i] = (s_keyref_t){map->u.pairs[i].key, map->u.pairs[i].key_len};
    qsort(refs, n, sizeof *refs, s_keyref_cmp);
    const char *dup = NULL;
    for (uint32_t i = 1; i < n && !dup; i++)
        if (s_keyref_cmp(&refs[i - 1], &refs[i]) == 0)
            dup = refs[i].key;
    free(refs);
    return dup;
}

/* Length of the valid UTF-8 prefix of s[0..n): n when all of it is valid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t s_utf8_valid(const unsigned char *s, size_t n)
{
    /* Nearly every string is ASCII (names, keys, quantities): one pass that
     * ORs the bytes together, eight at a time, settles those. */
    uint64_t acc = 0;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++)
        acc |= s[i];
    if ((acc & 0x8080808080808080ull) == 0)
        return n;
    i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            k = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 4;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (n - i < k)
            return i;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return i;
        i += k;
    }
    return n;
}

static rf_status s_string(s_dec_t *d, const char *s, uint32_t n, const char **out, const char *what)
{
    if (s_utf8_valid((const unsigned char *)s, n) != n)
        return rf_error_set(d->err, RF_EPARSE, s_path(d), "%s is not valid UTF-8 (MessagePack str is UTF-8)", what);
    if (d->max_string > 0 && n > (uint32_t)d->max_string)
        return rf_error_set(d->err, RF_ELIMIT, s_path(d), "%s of %u bytes is longer than the limit of %d bytes", what,
                            (unsigned)n, (int)d->max_string);
    *out = rf__arena_strndup(d->arena, s, n);
    return *out ? RF_OK : s_nomem(d);
}

/* Stage 3 and 4 in one walk: the pre-scanned bytes straight into the
 * document (msgpack-c's object tree, one more copy of every element, is
 * not built). Every read is still bounds-checked: the pre-scan is what
 * refuses bad input with its offset; a check failing here means bytes that
 * were not the ones scanned, reported as a parse error. */
typedef struct {
    const unsigned char *p, *end;
} s_cur_t;

static uint64_t s_take(s_cur_t *c, int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v = (v << 8) | c->p[k];
    c->p += n;
    return v;
}

static rf_status s_short(s_dec_t *d)
{
    return rf_error_set(d->err, RF_EPARSE, s_path(d), "the message ends inside a value (truncated)");
}

static rf_status s_read(s_dec_t *d, s_cur_t *c, rf_doc_t *out);

static rf_status s_read_str(s_dec_t *d, s_cur_t *c, uint64_t n, const char **s, uint32_t *len, const char *what)
{
    if (n > (uint64_t)(c->end - c->p))
        return s_short(d);
    *len = (uint32_t)n;
    RF_CALL(s_string(d, (const char *)c->p, (uint32_t)n, s, what));
    c->p += n;
    return RF_OK;
}

/* A map key of n bytes at the cursor: a recent key's copy when the bytes
 * are the same, else checked and copied as any string. */
static rf_status s_read_key(s_dec_t *d, s_cur_t *c, uint64_t n, const char **s, uint32_t *len)
{
    if (n == 0 || n > (uint64_t)(c->end - c->p))
        return s_read_str(d, c, n, s, len, "a key");
    s_key_t *k = &d->keys[(n * 7 + c->p[0] + c->p[n - 1] * 3) % S_KEY_SLOTS];
    if (k->s && k->len == n && memcmp(k->s, c->p, n) == 0) {
        *s = k->s;
        *len = (uint32_t)n;
        c->p += n;
        return RF_OK;
    }
    RF_CALL(s_read_str(d, c, n, s, len, "a key"));
    *k = (s_key_t){*s, (uint32_t)n};
    return RF_OK;
}

/* The string header at the cursor (a map key): its length, or -1. */
static int64_t s_str_header(s_cur_t *c)
{
    if (c->p >= c->end)
        return -1;
    unsigned char t = *c->p;
    int w = t >= 0xa0 && t <= 0xbf ? 0 : t == 0xd9 ? 1 : t == 0xda ? 2 : t == 0xdb ? 4 : -1;
    if (w < 0 || c->end - c->p < 1 + w)
        return -1;
    c->p++;
    return w == 0 ? (int64_t)(t & 0x1f) : (int64_t)s_take(c, w);
}

static rf_status s_read_array(s_dec_t *d, s_cur_t *c, uint64_t n, rf_doc_t *out)
{
    out->type = RF_DOC_ARRAY;
    if (n > (uint64_t)(c->end - c->p)) /* each element takes a byte at least */
        return s_short(d);
    out->u.items = rf__arena_alloc(d->arena, (size_t)n * sizeof(rf_doc_t));
    if (!out->u.items && n)
        return s_nomem(d);
    if (d->n_seg >= RF__MP_MAX_DEPTH + 1)
        return rf_error_set(d->err, RF_ELIMIT, s_path(d), "nesting deeper than %d", RF__MP_MAX_DEPTH);
    d->n_seg++;
    for (uint64_t i = 0; i < n; i++) {
        d->seg[d->n_seg - 1] = (s_seg_t){NULL, (long)i};
        RF_CALL(s_read(d, c, &out->u.items[i]));
        out->len = (uint32_t)(i + 1);
    }
    d->n_seg--;
    return RF_OK;
}

static rf_status s_read_map(s_dec_t *d, s_cur_t *c, uint64_t n, rf_doc_t *out)
{
    out->type = RF_DOC_MAP;
    if (n > (uint64_t)(c->end - c->p) / 2)
        return s_short(d);
    out->u.pairs = rf__arena_alloc(d->arena, (size_t)n * sizeof(rf_doc_kv_t));
    if (!out->u.pairs && n)
        return s_nomem(d);
    if (d->n_seg >= RF__MP_MAX_DEPTH + 1)
        return rf_error_set(d->err, RF_ELIMIT, s_path(d), "nesting deeper than %d", RF__MP_MAX_DEPTH);
    for (uint64_t i = 0; i < n; i++) {
        rf_doc_kv_t *dst = &out->u.pairs[i];
        int64_t kl = s_str_header(c);
        if (kl < 0)
            return rf_error_set(d->err, RF_EPARSE, s_path(d), "a map key must be a string");
        RF_CALL(s_read_key(d, c, (uint64_t)kl, &dst->key, &dst->key_len));
        d->seg[d->n_seg++] = (s_seg_t){dst->key, 0};
        RF_CALL(s_read(d, c, &dst->value));
        d->n_seg--;
        out->len = (uint32_t)(i + 1);
    }
    bool oom = false;
    const char *dup = s_duplicate_key(out, &oom);
    if (oom)
        return s_nomem(d);
    if (dup) {
        d->seg[d->n_seg++] = (s_seg_t){dup, 0};
        return rf_error_set(d->err, RF_EPARSE, s_path(d), "duplicate key");
    }
    return RF_OK;
}

/* One value at the cursor. A table of tags would be no clearer than this
 * switch over MessagePack's type bytes (the spec's own order). */
static rf_status s_read(s_dec_t *d, s_cur_t *c, rf_doc_t *out)
{
    out->offset = -1;
    out->len = 0;
    if (c->p >= c->end)
        return s_short(d);
    unsigned char t = *c->p++;
    if (t <= 0x7f || t >= 0xe0) {
        out->type = RF_DOC_INT;
        out->u.i = t <= 0x7f ? (int64_t)t : (int64_t)(int8_t)t;
        return RF_OK;
    }
    if (t <= 0x8f)
        return s_read_map(d, c, t & 0x0f, out);
    if (t <= 0x9f)
        return s_read_array(d, c, t & 0x0f, out);
    if (t <= 0xbf) {
        out->type = RF_DOC_STR;
        return s_read_str(d, c, t & 0x1f, &out->u.s, &out->len, "a string");
    }
    static const signed char widths[0x20] = {/* c0 */ 0, -1, 0, 0, -2, -2, -2, -3, -3, -3, 4, 8, 1, 2, 4, 8,
                                             /* d0 */ 1, 2,  4, 8, -3, -3, -3, -3, -3, 1,  2, 4, 2, 4, 2, 4};
    int w = widths[t - 0xc0];
    if (w == -1)
        return rf_error_set(d->err, RF_EPARSE, s_path(d), "the byte 0xc1 is never used in MessagePack");
    if (w == -2)
        return rf_error_set(d->err, RF_EPARSE, s_path(d), "bin values are not accepted (use strings)");
    if (w == -3)
        return rf_error_set(d->err, RF_EPARSE, s_path(d), "ext values are not accepted");
    if (c->end - c->p < w)
        return s_short(d);
    uint64_t v = s_take(c, w);
    switch (t) {
    case 0xc0:
        out->type = RF_DOC_NULL;
        return RF_OK;
    case 0xc2:
    case 0xc3:
        out->type = RF_DOC_BOOL;
        out->u.b = t == 0xc3;
        return RF_OK;
    case 0xca: {
        uint32_t b32 = (uint32_t)v;
        float f;
        memcpy(&f, &b32, sizeof f);
        out->type = RF_DOC_FLOAT;
        out->u.f = f;
        return RF_OK;
    }
    case 0xcb:
        out->type = RF_DOC_FLOAT;
        memcpy(&out->u.f, &v, sizeof out->u.f);
        return RF_OK;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:
        if (v > (uint64_t)INT64_MAX)
            return rf_error_set(d->err, RF_ESCHEMA, s_path(d),
                                "the integer %llu is above the largest accepted (2^63-1)", (unsigned long long)v);
        out->type = RF_DOC_INT;
        out->u.i = (int64_t)v;
        return RF_OK;
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
        out->type = RF_DOC_INT;
        /* sign-extend from w bytes */
        out->u.i = w == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * w)) >> (64 - 8 * w);
        return RF_OK;
    case 0xd9:
    case 0xda:
    case 0xdb:
        out->type = RF_DOC_STR;
        return s_read_str(d, c, v, &out->u.s, &out->len, "a string");
    case 0xdc:
    case 0xdd:
        return s_read_array(d, c, v, out);
    default: /* 0xde, 0xdf */
        return s_read_map(d, c, v, out);
    }
}

static rf_status s_decode(const void *data, size_t len, const rf__mp_limits_t *limits, rf__arena_t *arena,
                          rf_doc_t **out, rf_error_t *err, bool scanned)
{
    if (out)
        *out = NULL;
    if (!arena || !out || (!data && len > 0))
        return rf_error_set(err, RF_EINVAL, "", "rf__mp_decode: NULL argument");
    if (!scanned)
        RF_CALL(rf__mp_prescan(data, len, limits, NULL, err));

    s_dec_t d = {.arena = arena, .max_string = limits ? limits->max_string : 0, .err = err, .n_seg = 0};
    rf_doc_t *doc = rf__arena_alloc(arena, sizeof *doc);
    if (!doc)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory for the decoded document");
    s_cur_t c = {data, (const unsigned char *)data + len};
    RF_CALL(s_read(&d, &c, doc));
    if (c.p != c.end)
        return rf_error_set(err, RF_EPARSE, "", "bytes after the one top-level value");
    *out = doc;
    return RF_OK;
}

rf_status rf__mp_decode(const void *data, size_t len, const rf__mp_limits_t *limits, rf__arena_t *arena, rf_doc_t **out,
                        rf_error_t *err)
{
    return s_decode(data, len, limits, arena, out, err, false);
}

rf_status rf__mp_decode_prescanned(const void *data, size_t len, const rf__mp_limits_t *limits, rf__arena_t *arena,
                                   rf_doc_t **out, rf_error_t *err)
{
    return s_decode(data, len, limits, arena, out, err, true);
}

/* --------------------------------------------------------------- writer */

struct rf__mp_writer {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    bool oom;
};

rf__mp_writer_t *rf__mp_writer_new(void)
{
    rf__mp_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    msgpack_sbuffer_init(&w->sb);
    msgpack_packer_init(&w->pk, &w->sb, msgpack_sbuffer_write);
    return w;
}

void rf__mp_writer_destroy(rf__mp_writer_t **w)
{
    if (!w || !*w)
        return;
    msgpack_sbuffer_destroy(&(*w)->sb);
    free(*w);
    *w = NULL;
}

void rf__mp_writer_reset(rf__mp_writer_t *w)
{
    msgpack_sbuffer_clear(&w->sb);
    w->oom = false;
}

const void *rf__mp_writer_data(const rf__mp_writer_t *w, size_t *len)
{
    *len = w->sb.size;
    return w->sb.data;
}

void *rf__mp_writer_take(rf__mp_writer_t *w, size_t *len)
{
    *len = w->sb.size;
    void *p = msgpack_sbuffer_release(&w->sb);
    w->oom = false;
    return p;
}

bool rf__mp_writer_ok(const rf__mp_writer_t *w)
{
    return !w->oom;
}

#define S_W(w, call)                                                                                                   \
    do {                                                                                                               \
        if (!(w)->oom && (call) != 0)                                                                                  \
            (w)->oom = true;                                                                                           \
    } while (0)

void rf__mp_map(rf__mp_writer_t *w, uint32_t n)
{
    S_W(w, msgpack_pack_map(&w->pk, n));
}

void rf__mp_array(rf__mp_writer_t *w, uint32_t n)
{
    S_W(w, msgpack_pack_array(&w->pk, n));
}

void rf__mp_strn(rf__mp_writer_t *w, const char *s, size_t n)
{
    if (n > UINT32_MAX) {
        w->oom = true;
        return;
    }
    S_W(w, msgpack_pack_str(&w->pk, n));
    if (n)
        S_W(w, msgpack_pack_str_body(&w->pk, s, n));
}

/* A string that must be valid UTF-8 on the wire (messages, paths): invalid
 * bytes become '?'. */
static void s_text(rf__mp_writer_t *w, const char *s)
{
    size_t n = strlen(s);
    if (s_utf8_valid((const unsigned char *)s, n) == n) {
        rf__mp_strn(w, s, n);
        return;
    }
    char *copy = malloc(n + 1);
    if (!copy) {
        w->oom = true;
        return;
    }
    memcpy(copy, s, n + 1);
    size_t i = 0;
    while (i < n) {
        size_t ok = s_utf8_valid((const unsigned char *)copy + i, n - i);
        i += ok;
        if (i < n)
            copy[i++] = '?';
    }
    rf__mp_strn(w, copy, n);
    free(copy);
}

void rf__mp_str(rf__mp_writer_t *w, const char *s)
{
    if (!s)
        rf__mp_nil(w);
    else
        rf__mp_strn(w, s, strlen(s));
}

void rf__mp_key(rf__mp_writer_t *w, const char *key)
{
    rf__mp_strn(w, key, strlen(key));
}

void rf__mp_raw(rf__mp_writer_t *w, const void *bytes, size_t len)
{
    S_W(w, msgpack_sbuffer_write(&w->sb, bytes, len));
}

void rf__mp_int(rf__mp_writer_t *w, int64_t v)
{
    S_W(w, msgpack_pack_int64(&w->pk, v));
}

void rf__mp_double(rf__mp_writer_t *w, double v)
{
    if (!isfinite(v))
        rf__mp_nil(w);
    else
        S_W(w, msgpack_pack_double(&w->pk, v));
}

void rf__mp_bool(rf__mp_writer_t *w, bool v)
{
    S_W(w, v ? msgpack_pack_true(&w->pk) : msgpack_pack_false(&w->pk));
}

void rf__mp_nil(rf__mp_writer_t *w)
{
    S_W(w, msgpack_pack_nil(&w->pk));
}

void rf__mp_doc(rf__mp_writer_t *w, const rf_doc_t *doc)
{
    switch (doc->type) {
    case RF_DOC_NULL:
        rf__mp_nil(w);
        return;
    case RF_DOC_BOOL:
        rf__mp_bool(w, doc->u.b);
        return;
    case RF_DOC_INT:
        rf__mp_int(w, doc->u.i);
        return;
    case RF_DOC_FLOAT:
        S_W(w, msgpack_pack_double(&w->pk, doc->u.f));
        return;
    case RF_DOC_STR:
        rf__mp_strn(w, doc->u.s, doc->len);
        return;
    case RF_DOC_ARRAY:
        rf__mp_array(w, doc->len);
        for (uint32_t i = 0; i < doc->len; i++)
            rf__mp_doc(w, &doc->u.items[i]);
        return;
    case RF_DOC_MAP:
        rf__mp_map(w, doc->len);
        for (uint32_t i = 0; i < doc->len; i++) {
            rf__mp_strn(w, doc->u.pairs[i].key, doc->u.pairs[i].key_len);
            rf__mp_doc(w, &doc->u.pairs[i].value);
        }
        return;
    }
    rf__mp_nil(w);
}

/* ------------------------------------------------------- answers, errors */

/* The "error" key and its map {code, message, path}: what both error
 * replies say after their id. */
static void s_error_body(rf__mp_writer_t *w, rf_status code, const char *message, const char *path)
{
    rf__mp_key(w, "error");
    rf__mp_map(w, 3);
    rf__mp_key(w, "code");
    rf__mp_str(w, rf_status_code(code));
    rf__mp_key(w, "message");
    s_text(w, message && message[0] ? message : rf_status_message(code));
    rf__mp_key(w, "path");
    s_text(w, path ? path : "");
}

void rf__mp_error_reply(rf__mp_writer_t *w, const rf_doc_t *id, rf_status code, const char *message, const char *path)
{
    rf__mp_map(w, id ? 2 : 1);
    if (id) {
        rf__mp_key(w, "id");
        rf__mp_doc(w, id);
    }
    s_error_body(w, code, message, path);
}

void rf__mp_error_reply_raw(rf__mp_writer_t *w, const void *id, size_t id_len, rf_status code, const char *message,
                            const char *path)
{
    rf__mp_map(w, id_len ? 2 : 1);
    if (id_len) {
        rf__mp_key(w, "id");
        rf__mp_raw(w, id, id_len);
    }
    s_error_body(w, code, message, path);
}
