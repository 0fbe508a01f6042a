/* base/status.c: status codes and strings (from the one X-macro table in
 * rackfit/status.h) and the per-call error detail.
 *
 * Invariants: rf_status_code and rf_status_message never return NULL; after
 * rf_error_set, `message` and `path` are NUL-terminated (truncated to fit)
 * and `offset` is -1 until the caller sets it. */
#include "rackfit/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The length of `s[0..len)` without a UTF-8 sequence cut short at its end
 * (messages and paths end up in JSON, which must be valid UTF-8). */
static size_t s_utf8_trim(const char *s, size_t len)
{
    size_t i = len;
    size_t back = 0;
    while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0)
        return len;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return (want > 1 && back + 1 < want) ? i - 1 : len;
}

/* The table of RF_STATUS_MAP as data: one row a status. */
typedef struct {
    rf_status status;
    const char *code;
    const char *message;
} s_status_row_t;

static const s_status_row_t s_rows[] = {
#define RF__STATUS_ROW(name, value, code, msg) {RF_##name, code, msg},
    RF_STATUS_MAP(RF__STATUS_ROW)
#undef RF__STATUS_ROW
};

/* The row of `status`, or NULL for a value outside the table. */
static const s_status_row_t *s_row(rf_status status)
{
    for (size_t i = 0; i < sizeof s_rows / sizeof s_rows[0]; i++)
        if (s_rows[i].status == status)
            return &s_rows[i];
    return NULL;
}

const char *rf_status_code(rf_status status)
{
    const s_status_row_t *row = s_row(status);
    return row ? row->code : "unknown";
}

const char *rf_status_message(rf_status status)
{
    const s_status_row_t *row = s_row(status);
    return row ? row->message : "unknown status";
}

void rf_error_clear(rf_error_t *err)
{
    if (!err)
        return;
    err->code = RF_OK;
    err->message[0] = '\0';
    err->path[0] = '\0';
    err->offset = -1;
}

rf_status rf_error_set(rf_error_t *err, rf_status code, const char *path, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->offset = -1;
    err->message[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        if (n < 0)
            err->message[0] = '\0';
        else if ((size_t)n >= sizeof(err->message))
            err->message[s_utf8_trim(err->message, sizeof(err->message) - 1)] = '\0';
    }
    if (err->message[0] == '\0')
        snprintf(err->message, sizeof(err->message), "%s", rf_status_message(code));
    err->path[0] = '\0';
    if (path) {
        size_t n = strlen(path);
        if (n >= sizeof(err->path))
            n = s_utf8_trim(path, sizeof(err->path) - 1);
        memcpy(err->path, path, n);
        err->path[n] = '\0';
    }
    return code;
}
