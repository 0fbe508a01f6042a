/* base/log.c: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int rf__log_threshold = RF_LOG_INFO;
static const char *s_program = "rackfit";

void rf__log_program(const char *name)
{
    if (name)
        s_program = name;
}

void rf__log(rf__log_level level, const char *fmt, ...)
{
    if ((int)level > rf__log_threshold || (int)level < 0)
        return;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char line[2048];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n =
        snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, s_program, names[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && n < (int)sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if (*p == '\n')
            *p = ' ';
    fprintf(stderr, "%s\n", line);
}
