/* base/jw.h: a growable byte buffer that writes JSON text (request bodies,
 * the contract problem) with correct string escaping.
 *
 * Invariants: `p` is NUL-terminated whenever `len` > 0 and `oom` is false;
 * after an allocation failure `oom` stays true and every write is a no-op, so
 * callers check once at the end. */
#ifndef RACKFIT_BASE_JW_H
#define RACKFIT_BASE_JW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *p;
    size_t len;
    size_t cap;
    bool oom;
} rf__jw_t;

void rf__jw_init(rf__jw_t *w);
void rf__jw_fini(rf__jw_t *w);
/* Hand the text to the caller (malloc'ed, NUL-terminated); the writer is reset. */
char *rf__jw_take(rf__jw_t *w, size_t *len);
void rf__jw_raw(rf__jw_t *w, const char *s, size_t n);
void rf__jw_puts(rf__jw_t *w, const char *s);
void rf__jw_printf(rf__jw_t *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void rf__jw_vprintf(rf__jw_t *w, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
/* A JSON string literal, quotes included; NULL writes null. */
void rf__jw_str(rf__jw_t *w, const char *s);
void rf__jw_strn(rf__jw_t *w, const char *s, size_t n);
/* `"key":` */
void rf__jw_key(rf__jw_t *w, const char *key);
/* Write a comma unless the last byte opened an object or array or was a comma. */
void rf__jw_sep(rf__jw_t *w);

#endif
