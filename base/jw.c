/* base/jw.c: JSON text writer (see jw.h). Strings are escaped per RFC 8259:
 * quote, backslash and control bytes; other bytes pass through (our strings
 * come from parsed JSON or our own code, so they are UTF-8 already). */
#include "jw.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rf__jw_init(rf__jw_t *w)
{
    memset(w, 0, sizeof *w);
}

void rf__jw_fini(rf__jw_t *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

char *rf__jw_take(rf__jw_t *w, size_t *len)
{
    char *p = w->oom ? NULL : w->p;
    if (w->oom)
        free(w->p);
    if (p == NULL && !w->oom)
        p = calloc(1, 1);
    if (len)
        *len = p ? w->len : 0;
    memset(w, 0, sizeof *w);
    return p;
}

static bool s_grow(rf__jw_t *w, size_t extra)
{
    if (w->oom)
        return false;
    if (w->len + extra + 1 <= w->cap)
        return true;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + extra + 1)
        cap *= 2;
    char *p = realloc(w->p, cap);
    if (!p) {
        w->oom = true;
        return false;
    }
    w->p = p;
    w->cap = cap;
    return true;
}

void rf__jw_raw(rf__jw_t *w, const char *s, size_t n)
{
    if (!s_grow(w, n))
        return;
    memcpy(w->p + w->len, s, n);
    w->len += n;
    w->p[w->len] = '\0';
}

void rf__jw_puts(rf__jw_t *w, const char *s)
{
    rf__jw_raw(w, s, strlen(s));
}

void rf__jw_vprintf(rf__jw_t *w, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof small)
        rf__jw_raw(w, small, (size_t)n);
    else if (n >= 0 && s_grow(w, (size_t)n)) {
        vsnprintf(w->p + w->len, (size_t)n + 1, fmt, again);
        w->len += (size_t)n;
    }
    va_end(again);
}

void rf__jw_printf(rf__jw_t *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rf__jw_vprintf(w, fmt, ap);
    va_end(ap);
}

void rf__jw_strn(rf__jw_t *w, const char *s, size_t n)
{
    if (!s_grow(w, n + 2))
        return;
    rf__jw_raw(w, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rf__jw_raw(w, s + start, i - start);
        const char *two = c == '"'    ? "\\\""
                          : c == '\\' ? "\\\\"
                          : c == '\n' ? "\\n"
                          : c == '\t' ? "\\t"
                          : c == '\r' ? "\\r"
                                      : NULL;
        if (two) {
            rf__jw_raw(w, two, 2);
        } else {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rf__jw_raw(w, esc, 6);
        }
        start = i + 1;
    }
    rf__jw_raw(w, s + start, n - start);
    rf__jw_raw(w, "\"", 1);
}

void rf__jw_str(rf__jw_t *w, const char *s)
{
    if (!s)
        rf__jw_puts(w, "null");
    else
        rf__jw_strn(w, s, strlen(s));
}

void rf__jw_sep(rf__jw_t *w)
{
    if (w->len == 0 || w->oom)
        return;
    char c = w->p[w->len - 1];
    if (c != '{' && c != '[' && c != ',' && c != ':')
        rf__jw_raw(w, ",", 1);
}

void rf__jw_key(rf__jw_t *w, const char *key)
{
    rf__jw_sep(w);
    rf__jw_str(w, key);
    rf__jw_raw(w, ":", 1);
}
