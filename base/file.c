/* base/file.c: see file.h. */
#include "file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

rf_status rf__read_file(const char *path, size_t max_bytes, char **out, size_t *len, rf_error_t *err)
{
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!path || !out || !len)
        return rf_error_set(err, RF_EINVAL, NULL, "rf__read_file: NULL argument");
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "standard input" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return rf_error_set(err, RF_EIO, NULL, "%s: %s", name, strerror(errno));

    rf_status s = RF_OK;
    char *buf = NULL;
    size_t cap = 0;
    size_t n = 0;
    struct stat st;
    if (max_bytes && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max_bytes) {
        s = rf_error_set(err, RF_ELIMIT, NULL, "%s: %lld bytes, more than the limit of %zu bytes", name,
                         (long long)st.st_size, max_bytes);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            size_t grow = cap ? cap : 64 * 1024;
            size_t next = cap > SIZE_MAX / 2 - 1 ? SIZE_MAX - 1 : cap + grow;
            if (max_bytes && max_bytes < SIZE_MAX - 1 && next > max_bytes + 1)
                next = max_bytes + 1; /* one byte past the limit tells us it was passed */
            if (next <= cap) {
                s = rf_error_set(err, RF_ENOMEM, NULL, "%s: too large to read", name);
                goto done;
            }
            char *bigger = realloc(buf, next + 1); /* + 1 for the NUL */
            if (!bigger) {
                s = rf_error_set(err, RF_ENOMEM, NULL, "%s: out of memory reading it", name);
                goto done;
            }
            buf = bigger;
            cap = next;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (max_bytes && n > max_bytes) {
            s = rf_error_set(err, RF_ELIMIT, NULL, "%s: more than the limit of %zu bytes", name, max_bytes);
            goto done;
        }
        if (got == 0) {
            if (ferror(f)) {
                s = rf_error_set(err, RF_EIO, NULL, "%s: %s", name, strerror(errno));
                goto done;
            }
            break; /* end of file */
        }
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf) {
            s = rf_error_set(err, RF_ENOMEM, NULL, "%s: out of memory reading it", name);
            goto done;
        }
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;

done:
    free(buf);
    if (!is_stdin)
        fclose(f);
    return s;
}
