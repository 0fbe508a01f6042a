/* base/doc.c: type names, map lookup and contract paths for the decoded
 * document tree (base/doc.h).
 *
 * Path invariants: a path buffer of capacity `cap` always holds a
 * NUL-terminated string of at most cap - 1 bytes. A segment is appended whole
 * when it fits; otherwise as many whole units as fit (a character, an escape
 * sequence or a UTF-8 sequence, never half of one) followed by dots up to
 * cap - 1 bytes, so a truncated path reads "...", stays valid UTF-8 and is
 * full: later appends add nothing that could be mistaken for a real field. */
#include "doc.h"

#include <stdio.h>
#include <string.h>

const char *rf__doc_type_name(rf_doc_type type)
{
    switch (type) {
    case RF_DOC_NULL:
        return "null";
    case RF_DOC_BOOL:
        return "a boolean";
    case RF_DOC_INT:
        return "an integer";
    case RF_DOC_FLOAT:
        return "a number";
    case RF_DOC_STR:
        return "a string";
    case RF_DOC_ARRAY:
        return "an array";
    case RF_DOC_MAP:
        return "a map";
    }
    return "an unknown value";
}

const rf_doc_t *rf__doc_get(const rf_doc_t *map, const char *key)
{
    if (!map || !key || map->type != RF_DOC_MAP)
        return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i < map->len; i++) {
        const rf_doc_kv_t *kv = &map->u.pairs[i];
        if (kv->key_len == n && memcmp(kv->key, key, n) == 0)
            return &kv->value;
    }
    return NULL;
}

/* A plain key: letters, digits and `_`, not starting with a digit, not empty. */
static bool s_plain(const char *key)
{
    if (!key[0] || (key[0] >= '0' && key[0] <= '9'))
        return false;
    for (const char *p = key; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

/* The length of the valid UTF-8 sequence at `s` (2 to 4), or 0. Rejects
 * overlong forms, surrogates and code points above U+10FFFF. */
static int s_utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    int n;
    unsigned long cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0; /* also stops at the NUL */
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* The next unit of `s` from `*i` as text in `unit` (at most 7 bytes): one
 * byte when not `escaped`; else a character, a JSON escape, a whole UTF-8
 * sequence, or \ufffd for a byte that is not valid UTF-8. */
static int s_unit(const char *s, size_t *i, char unit[8], bool escaped)
{
    unsigned char c = (unsigned char)s[*i];
    if (!escaped || (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')) {
        unit[0] = (char)c;
        (*i)++;
        return 1;
    }
    if (c == '"' || c == '\\') {
        unit[0] = '\\';
        unit[1] = (char)c;
        (*i)++;
        return 2;
    }
    if (c < 0x20 || c == 0x7f) {
        static const char short_esc[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
        (*i)++;
        if (c < sizeof(short_esc) && short_esc[c]) {
            unit[0] = '\\';
            unit[1] = short_esc[c];
            return 2;
        }
        snprintf(unit, 8, "\\u%04x", c);
        return 6;
    }
    int n = s_utf8_len((const unsigned char *)s + *i);
    if (n == 0) {
        (*i)++;
        memcpy(unit, "\\ufffd", 6);
        return 6;
    }
    memcpy(unit, s + *i, (size_t)n);
    *i += (size_t)n;
    return n;
}

/* Append the segment `pre` + key (escaped or not) + `post` to path. */
static int s_append(char *path, int len, int cap, const char *pre, const char *key, bool escaped, const char *post)
{
    if (!path || cap <= 0)
        return 0;
    if (len < 0)
        len = 0;
    if (len > cap - 1)
        len = cap - 1;
    path[len] = '\0';

    /* Pass 1: the whole segment's length. */
    const char *parts[3] = {pre, key, post};
    size_t need = 0;
    char unit[8];
    for (int p = 0; p < 3; p++) {
        bool esc = p == 1 && escaped;
        for (size_t i = 0; parts[p][i];)
            need += (size_t)s_unit(parts[p], &i, unit, esc);
    }
    size_t room = (size_t)(cap - 1 - len);
    size_t limit = need <= room ? room : (room >= 3 ? room - 3 : 0);

    /* Pass 2: whole units while they fit `limit`. */
    size_t o = (size_t)len;
    size_t end = (size_t)len + limit;
    bool cut = false;
    for (int p = 0; p < 3 && !cut; p++) {
        bool esc = p == 1 && escaped;
        for (size_t i = 0; parts[p][i];) {
            int n = s_unit(parts[p], &i, unit, esc);
            if (o + (size_t)n > end) {
                cut = true;
                break;
            }
            memcpy(path + o, unit, (size_t)n);
            o += (size_t)n;
        }
    }
    if (cut) {
        while (o < (size_t)(cap - 1))
            path[o++] = '.';
    }
    path[o] = '\0';
    return (int)o;
}

int rf__path_key(char *path, int len, int cap, const char *key)
{
    if (!key)
        key = "";
    if (s_plain(key))
        return s_append(path, len, cap, len > 0 ? "." : "", key, false, "");
    return s_append(path, len, cap, "[\"", key, true, "\"]");
}

int rf__path_index(char *path, int len, int cap, long index)
{
    char seg[32];
    snprintf(seg, sizeof(seg), "[%ld]", index);
    return s_append(path, len, cap, "", seg, false, "");
}
