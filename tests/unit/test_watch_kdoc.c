/* tests/unit/test_watch_kdoc.c: dotted-path lookups in decoded API objects
 * (watcher/kdoc.c): nested maps, absent keys, paths through non-maps, keys
 * too long for the lookup, and strings against other types. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "json.h"
#include "kdoc.h"

Test(watch_kdoc, paths)
{
    const char *text = "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"n\":3,\"list\":[1]}}";
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(text, strlen(text), &lim, a, &doc, &err), RF_OK);
    cr_assert_str_eq(rf__doc_str(doc, "metadata.name"), "p");
    cr_assert_str_eq(rf__doc_str(doc, "metadata.labels.a"), "1");
    cr_assert_null(rf__doc_str(doc, "metadata.labels.b"));
    cr_assert_null(rf__doc_str(doc, "spec.n"), "an integer is not a string");
    cr_assert_eq(rf__doc_at(doc, "spec.n")->u.i, 3);
    cr_assert_null(rf__doc_at(doc, "spec.list.x"), "a path through an array finds nothing");
    cr_assert_null(rf__doc_at(doc, "metadata.name.x"), "a path through a string finds nothing");
    char longkey[300];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    cr_assert_null(rf__doc_at(doc, longkey));
    cr_assert_eq(rf__doc_at(doc, ""), doc, "the empty path is the object itself");
    cr_assert_null(rf__doc_at(NULL, "metadata"));
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}
