/* tests/unit/test_log.c: the logger (base/log.c), with stderr redirected to
 * a temporary file: lines below rf__log_threshold are dropped, each call is
 * exactly one line `<UTC time>Z <program> <level>: <message>`, and newlines
 * inside a message are folded so the line stays one line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "log.h"

/* Run the logging in `fn` with stderr going to a file; returns what was written (malloc'ed). */
static char *s_capture(void (*fn)(void))
{
    char path[] = "/tmp/rf_test_log_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    cr_assert(dup2(fd, STDERR_FILENO) >= 0);
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    FILE *f = fdopen(fd, "r");
    cr_assert_not_null(f);
    rewind(f);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    return buf;
}

static int s_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void s_threshold(void)
{
    rf__log_program("logtest");
    rf__log_threshold = RF_LOG_WARN;
    rf__log(RF_LOG_ERROR, "e%d", 1);
    rf__log(RF_LOG_WARN, "w%d", 2);
    rf__log(RF_LOG_INFO, "i%d", 3);
    rf__log(RF_LOG_DEBUG, "d%d", 4);
    rf__log_threshold = RF_LOG_INFO;
}

Test(log, threshold_filters_and_one_line_per_call)
{
    char *out = s_capture(s_threshold);
    cr_assert_eq(s_lines(out), 2, "got: %s", out);
    cr_assert_not_null(strstr(out, " logtest error: e1\n"), "got: %s", out);
    cr_assert_not_null(strstr(out, " logtest warn: w2\n"), "got: %s", out);
    cr_assert_null(strstr(out, "i3"));
    cr_assert_null(strstr(out, "d4"));
    /* each line starts with an ISO-8601 UTC time */
    cr_assert(strlen(out) > 24 && out[4] == '-' && out[10] == 'T' && strchr(out, 'Z') < strchr(out, ' '), "got: %s",
              out);
    free(out);
    rf_test_no_leaks();
}

static void s_newlines(void)
{
    rf__log_program("logtest");
    rf__log(RF_LOG_INFO, "first\nsecond\r\nthird");
}

Test(log, newlines_folded)
{
    char *out = s_capture(s_newlines);
    cr_assert_eq(s_lines(out), 1, "got: %s", out);
    cr_assert_not_null(strstr(out, "first"));
    cr_assert_not_null(strstr(out, "third\n"));
    free(out);
    rf_test_no_leaks();
}
