/* base/json.c: the JSON boundary, the only file that includes <jansson.h>.
 *
 * JSON text becomes an rf_doc (base/doc.h) in four steps: a size check; a
 * bracket scan that allocates nothing and refuses nesting deeper than the
 * limit (so neither jansson nor our conversion can be driven deep into the
 * stack); jansson's parse (duplicate keys and NUL in strings rejected); and a
 * conversion that copies every string into the caller's arena, checks string
 * lengths and keeps object keys in input order (jansson >= 2.8 iterates
 * objects in insertion order). Nothing borrowed from jansson survives the
 * call: its tree is freed before returning, on every path. */
#include "json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Nesting jansson itself accepts; deeper input is refused as a limit. */
#define S_JANSSON_DEPTH JSON_PARSER_MAX_DEPTH

typedef struct {
    rf__arena_t *arena;
    long long max_string; /* 0: none */
    int max_depth;
    rf_error_t *err;
    char path[RF_ERROR_PATH_MAX];
    int path_len;
} s_ctx_t;

static int s_depth_limit(const rf_limits_t *limits)
{
    if (!limits || limits->max_depth <= 0 || limits->max_depth > S_JANSSON_DEPTH)
        return S_JANSSON_DEPTH;
    return limits->max_depth;
}

/* Refuse nesting deeper than `max_depth`, counting brackets outside strings.
 * Malformed input passes through to jansson, which reports it. */
static rf_status s_prescan(const char *text, size_t len, int max_depth, rf_error_t *err)
{
    int depth = 0;
    bool in_string = false;
    long line = 1;
    long column = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c & 0xC0) != 0x80)
            column++;
        if (in_string) {
            if (c == '\\')
                i++; /* the escaped byte cannot end the string */
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            break;
        case '[':
        case '{':
            if (++depth > max_depth) {
                rf_error_set(err, RF_ELIMIT, NULL, "line %ld column %ld: nesting deeper than the limit of %d", line,
                             column, max_depth);
                if (err)
                    err->offset = (long)i;
                return RF_ELIMIT;
            }
            break;
        case ']':
        case '}':
            if (depth > 0)
                depth--;
            break;
        case '\n':
            line++;
            column = 0;
            break;
        default:
            break;
        }
    }
    return RF_OK;
}

static rf_status s_string_limit(s_ctx_t *c, size_t n, const char *what)
{
    if (c->max_string > 0 && (unsigned long long)n > (unsigned long long)c->max_string)
        return rf_error_set(c->err, RF_ELIMIT, c->path, "%s of %zu bytes is longer than the limit of %lld bytes", what,
                            n, c->max_string);
    return RF_OK;
}

static rf_status s_nomem(s_ctx_t *c)
{
    return rf_error_set(c->err, RF_ENOMEM, c->path, "out of memory for the decoded document");
}

/* An array of `n` elements of `size` bytes from the arena, overflow-checked. */
static void *s_array(s_ctx_t *c, size_t n, size_t size)
{
    if (n != 0 && size > SIZE_MAX / n)
        return NULL;
    return rf__arena_alloc(c->arena, n * size);
}

/* Back to the path as it was before a key or index was added (`saved`). */
static void s_unwind(s_ctx_t *c, int saved)
{
    c->path_len = saved;
    c->path[saved] = '\0';
}

/* The entries of a container (`kind`, "a map of %zu keys" or "an array of
 * %zu items") at `depth`: within the depth limit and uint32, from the arena. */
static rf_status s_entries(s_ctx_t *c, int depth, size_t n, size_t size, const char *kind, void **out)
{
    if (depth >= c->max_depth)
        return rf_error_set(c->err, RF_ELIMIT, c->path, "nesting deeper than the limit of %d", c->max_depth);
    if (n > UINT32_MAX) {
        char what[64];
        snprintf(what, sizeof what, kind, n);
        return rf_error_set(c->err, RF_ELIMIT, c->path, "%s is too large", what);
    }
    *out = s_array(c, n, size);
    return *out ? RF_OK : s_nomem(c);
}

static rf_status s_convert(s_ctx_t *c, json_t *j, rf_doc_t *out, int depth)
{
    out->offset = -1;
    out->len = 0;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(j);
        void *pairs = NULL;
        RF_CALL(s_entries(c, depth, n, sizeof(rf_doc_kv_t), "a map of %zu keys", &pairs));
        out->type = RF_DOC_MAP;
        out->u.pairs = pairs;
        const char *key;
        json_t *value;
        uint32_t k = 0;
        json_object_foreach(j, key, value)
        {
            if (k >= n)
                break;                    /* cannot happen: the size is fixed while we iterate */
            size_t key_len = strlen(key); /* jansson refuses NUL in keys */
            int saved = c->path_len;
            c->path_len = rf__path_key(c->path, saved, (int)sizeof(c->path), key);
            rf_status s = s_string_limit(c, key_len, "a key");
            rf_doc_kv_t *kv = &out->u.pairs[k];
            if (s == RF_OK) {
                kv->key = rf__arena_strndup(c->arena, key, key_len);
                kv->key_len = (uint32_t)key_len;
                s = kv->key ? s_convert(c, value, &kv->value, depth + 1) : s_nomem(c);
            }
            if (s != RF_OK)
                return s; /* the path names the failing field */
            s_unwind(c, saved);
            k++;
            out->len = k;
        }
        return RF_OK;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        void *items = NULL;
        RF_CALL(s_entries(c, depth, n, sizeof(rf_doc_t), "an array of %zu items", &items));
        out->type = RF_DOC_ARRAY;
        out->u.items = items;
        for (size_t i = 0; i < n; i++) {
            int saved = c->path_len;
            c->path_len = rf__path_index(c->path, saved, (int)sizeof(c->path), (long)i);
            RF_CALL(s_convert(c, json_array_get(j, i), &out->u.items[i], depth + 1));
            s_unwind(c, saved);
            out->len = (uint32_t)(i + 1);
        }
        return RF_OK;
    }
    case JSON_STRING: {
        size_t n = json_string_length(j);
        RF_CALL(s_string_limit(c, n, "a string"));
        if (n > UINT32_MAX)
            return rf_error_set(c->err, RF_ELIMIT, c->path, "a string of %zu bytes is too long", n);
        out->type = RF_DOC_STR;
        out->u.s = rf__arena_strndup(c->arena, json_string_value(j), n);
        if (!out->u.s)
            return s_nomem(c);
        out->len = (uint32_t)n;
        return RF_OK;
    }
    case JSON_INTEGER:
        out->type = RF_DOC_INT;
        out->u.i = (int64_t)json_integer_value(j);
        return RF_OK;
    case JSON_REAL:
        out->type = RF_DOC_FLOAT;
        out->u.f = json_real_value(j);
        return RF_OK;
    case JSON_TRUE:
    case JSON_FALSE:
        out->type = RF_DOC_BOOL;
        out->u.b = json_is_true(j);
        return RF_OK;
    case JSON_NULL:
        out->type = RF_DOC_NULL;
        return RF_OK;
    }
    return rf_error_set(c->err, RF_EINTERNAL, c->path, "unknown JSON value type");
}

rf_status rf__json_parse(const char *text, size_t len, const rf_limits_t *limits, rf__arena_t *arena, rf_doc_t **out,
                         rf_error_t *err)
{
    if (out)
        *out = NULL;
    if (!arena || !out || (!text && len > 0))
        return rf_error_set(err, RF_EINVAL, NULL, "rf__json_parse: NULL argument");
    if (!text)
        text = "";
    if (limits && limits->max_input_bytes > 0 && (unsigned long long)len > (unsigned long long)limits->max_input_bytes)
        return rf_error_set(err, RF_ELIMIT, NULL, "the input is %zu bytes, more than the limit of %lld bytes", len,
                            (long long)limits->max_input_bytes);
    int max_depth = s_depth_limit(limits);
    RF_CALL(s_prescan(text, len, max_depth, err));

    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!root) {
        rf_status code = RF_EPARSE;
        switch (json_error_code(&jerr)) {
        case json_error_out_of_memory:
            code = RF_ENOMEM;
            break;
        case json_error_stack_overflow:
            code = RF_ELIMIT;
            break;
        default:
            break;
        }
        /* jansson quotes input near the error: keep the message printable */
        for (char *p = jerr.text; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                *p = '?';
        rf_error_set(err, code, NULL, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
        if (err)
            err->offset = jerr.position;
        return code;
    }

    s_ctx_t ctx = {.arena = arena,
                   .max_string = limits && limits->max_string > 0 ? limits->max_string : 0,
                   .max_depth = max_depth,
                   .err = err,
                   .path = "",
                   .path_len = 0};
    rf_status s = RF_OK;
    rf_doc_t *doc = rf__arena_alloc(arena, sizeof(*doc));
    if (!doc)
        s = s_nomem(&ctx);
    else
        s = s_convert(&ctx, root, doc, 0);
    json_decref(root);
    if (s == RF_OK)
        *out = doc;
    return s;
}
