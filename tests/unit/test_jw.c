/* tests/unit/test_jw.c: the JSON writer (base/jw.c): string escaping of
 * quotes, backslashes and control bytes, null for a NULL string, separators
 * and keys, growth past the first buffer, take() resetting the writer, and
 * the sticky oom flag turning every write into a no-op. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "jw.h"

Test(jw, escapes_quotes_backslashes_and_control_bytes)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_strn(&w,
                "a\"b\\c\n\t\r\x01\x1f"
                "z",
                11);
    size_t len = 0;
    char *s = rf__jw_take(&w, &len);
    cr_assert_str_eq(s, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001fz\"");
    cr_assert_eq(len, strlen(s));
    free(s);
    rf_test_no_leaks();
}

Test(jw, embedded_nul_escaped_and_null_string)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_strn(&w, "a\0b", 3);
    rf__jw_sep(&w);
    rf__jw_str(&w, NULL);
    char *s = rf__jw_take(&w, NULL);
    cr_assert_str_eq(s, "\"a\\u0000b\",null");
    free(s);
    rf_test_no_leaks();
}

Test(jw, keys_and_separators)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_raw(&w, "{", 1);
    rf__jw_key(&w, "a");
    rf__jw_printf(&w, "%d", 1);
    rf__jw_key(&w, "b");
    rf__jw_raw(&w, "[", 1);
    for (int i = 0; i < 3; i++) {
        rf__jw_sep(&w);
        rf__jw_printf(&w, "%d", i);
    }
    rf__jw_puts(&w, "]}");
    char *s = rf__jw_take(&w, NULL);
    cr_assert_str_eq(s, "{\"a\":1,\"b\":[0,1,2]}");
    free(s);
    rf_test_no_leaks();
}

Test(jw, grows_and_take_resets)
{
    rf__jw_t w;
    rf__jw_init(&w);
    for (int i = 0; i < 5000; i++)
        rf__jw_printf(&w, "%04d", i % 10000);
    cr_assert(!w.oom);
    size_t len = 0;
    char *s = rf__jw_take(&w, &len);
    cr_assert_eq(len, 20000);
    cr_assert_eq(strncmp(s, "000000010002", 12), 0);
    cr_assert_eq(strncmp(s + len - 4, "4999", 4), 0);
    cr_assert_eq(w.len, 0);
    cr_assert_null(w.p);
    free(s);
    /* an empty writer hands back an empty string, not NULL */
    char *e = rf__jw_take(&w, &len);
    cr_assert_not_null(e);
    cr_assert_str_eq(e, "");
    cr_assert_eq(len, 0);
    free(e);
    rf_test_no_leaks();
}

/* The oom flag is sticky: later writes do nothing and take() returns NULL
 * (freeing what was written), so callers check once at the end. */
Test(jw, oom_is_sticky)
{
    rf__jw_t w;
    rf__jw_init(&w);
    rf__jw_puts(&w, "abc");
    w.oom = true; /* what s_grow sets when realloc fails */
    rf__jw_puts(&w, "def");
    rf__jw_str(&w, "x");
    rf__jw_key(&w, "k");
    cr_assert_eq(w.len, 3);
    size_t len = 99;
    char *s = rf__jw_take(&w, &len);
    cr_assert_null(s);
    cr_assert_eq(len, 0);
    cr_assert(!w.oom);
    rf_test_no_leaks();
}
