/* watcher/ktime.c: Kubernetes timestamps and annotation durations (see ktime.h). */
#include "ktime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whole seconds and microseconds of `wall`, the fraction truncated. */
static void s_split(double wall, struct tm *tm, long *us)
{
    if (!(wall >= 0) || !isfinite(wall))
        wall = 0;
    double whole = floor(wall);
    time_t s = (time_t)whole;
    long u = (long)((wall - whole) * 1e6);
    *us = u < 0 ? 0 : u > 999999 ? 999999 : u;
    gmtime_r(&s, tm);
}

static void s_format(double wall, bool micro, char *buf, size_t cap)
{
    struct tm tm;
    long us;
    s_split(wall, &tm, &us);
    int y = (tm.tm_year + 1900) % 10000;
    if (micro)
        snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", y, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec, us);
    else
        snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                 tm.tm_sec);
}

void rf__ktime(double wall, char *buf, size_t cap)
{
    s_format(wall, false, buf, cap);
}

void rf__microtime(double wall, char *buf, size_t cap)
{
    s_format(wall, true, buf, cap);
}

bool rf__ktime_parse(const char *text, double *wall)
{
    int y, mo, d, h, mi, s, n = 0;
    if (!text || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
        return false;
    const char *p = text + 19;
    double frac = 0;
    if (*p == '.') {
        double scale = 0.1;
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9') {
            frac += (*p - '0') * scale;
            scale /= 10;
            p++;
        }
    }
    if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = s};
    *wall = (double)timegm(&tm) + frac;
    return true;
}

bool rf__duration_parse(const char *text, double *seconds)
{
    enum { S_MAX_S = 30 * 24 * 3600 };
    if (!text || !*text)
        return false;
    const char *p = text;
    double total = 0;
    char *end;
    double bare = strtod(p, &end);
    if (*end == '\0' && end != p) { /* a bare number: seconds */
        if (!(bare >= 0) || bare > S_MAX_S || strchr(p, 'e') || strchr(p, 'E') || strchr(p, 'x') || strchr(p, 'X'))
            return false;
        *seconds = bare;
        return true;
    }
    while (*p) {
        if (!((*p >= '0' && *p <= '9') || *p == '.'))
            return false;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0))
            return false;
        p = end;
        double unit;
        if (strncmp(p, "ms", 2) == 0) {
            unit = 1e-3;
            p += 2;
        } else if (*p == 'h' || *p == 'm' || *p == 's') {
            unit = *p == 'h' ? 3600 : *p == 'm' ? 60 : 1;
            p++;
        } else {
            return false; /* a number without its unit, or an unknown unit */
        }
        total += v * unit;
        if (total > S_MAX_S)
            return false;
    }
    *seconds = total;
    return true;
}
