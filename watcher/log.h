/* watcher/log.h: one line per event on stderr, with a UTC timestamp and a
 * level, as rackfitd logs. Thread-safe (one fprintf per line). */
#ifndef RACKFIT_WATCHER_LOG_H
#define RACKFIT_WATCHER_LOG_H

typedef enum { RF_LOG_ERROR = 0, RF_LOG_WARN, RF_LOG_INFO, RF_LOG_DEBUG } rf__log_level;

extern int rf__log_threshold; /* default RF_LOG_INFO */

void rf__log(rf__log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
