/* base/log.h: the one logger of every program: one line per event on
 * stderr, `<UTC time> <program> <level>: <message>`, newlines folded so a
 * line is always one line. Thread-safe: each line is one fprintf. */
#ifndef RACKFIT_BASE_LOG_H
#define RACKFIT_BASE_LOG_H

typedef enum { RF_LOG_ERROR = 0, RF_LOG_WARN, RF_LOG_INFO, RF_LOG_DEBUG } rf__log_level;

extern int rf__log_threshold; /* default RF_LOG_INFO */

/* The program name each line carries (a static string; default "rackfit"). */
void rf__log_program(const char *name);

void rf__log(rf__log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
