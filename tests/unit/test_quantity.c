/* tests/unit/test_quantity.c: Kubernetes quantities (solver/quantity.c),
 * cases taken from the contract and from apimachinery's own parser. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "../support/leak.h"
#include "rackfit/quantity.h"

static int64_t s_ok(const char *text, rf_qty_kind kind)
{
    rf_error_t err;
    rf_error_clear(&err);
    int64_t v = -42;
    rf_status s = rf_qty_parse(text, strlen(text), kind, &v, &err);
    cr_assert_eq(s, RF_OK, "\"%s\" (kind %d): %s", text, (int)kind, err.message);
    return v;
}

static rf_error_t s_bad(const char *text, rf_qty_kind kind)
{
    rf_error_t err;
    rf_error_clear(&err);
    int64_t v = -42;
    rf_status s = rf_qty_parse(text, strlen(text), kind, &v, &err);
    cr_assert_eq(s, RF_ESCHEMA, "\"%s\" (kind %d) should fail, got %d value %lld", text, (int)kind, (int)s,
                 (long long)v);
    cr_assert_eq(err.code, RF_ESCHEMA);
    cr_assert_eq(err.path[0], '\0', "the path is the caller's to fill");
    cr_assert_neq(err.message[0], '\0');
    return err;
}

#define OK_EQ(text, kind, want) cr_assert_eq(s_ok(text, kind), (int64_t)(want), "\"%s\"", text)

Test(quantity, contract_examples)
{
    OK_EQ("500m", RF_QTY_MILLI, 500);
    OK_EQ("96", RF_QTY_MILLI, 96000);
    OK_EQ("42500m", RF_QTY_MILLI, 42500);
    OK_EQ("32", RF_QTY_MILLI, 32000);
    OK_EQ("1Ti", RF_QTY_UNITS, INT64_C(1) << 40);
    OK_EQ("64Gi", RF_QTY_UNITS, INT64_C(64) << 30);
    OK_EQ("264Gi", RF_QTY_UNITS, INT64_C(264) << 30);
    OK_EQ("200Gi", RF_QTY_UNITS, INT64_C(200) << 30);
    OK_EQ("1e3", RF_QTY_UNITS, 1000);
    OK_EQ("1E3", RF_QTY_UNITS, 1000);
    OK_EQ("8", RF_QTY_WHOLE, 8);
    OK_EQ("110", RF_QTY_WHOLE, 110);
    rf_test_no_leaks();
}

Test(quantity, suffixes)
{
    OK_EQ("1Ki", RF_QTY_UNITS, 1024);
    OK_EQ("1Mi", RF_QTY_UNITS, 1024 * 1024);
    OK_EQ("1Gi", RF_QTY_UNITS, INT64_C(1) << 30);
    OK_EQ("1Pi", RF_QTY_UNITS, INT64_C(1) << 50);
    OK_EQ("1Ei", RF_QTY_UNITS, INT64_C(1) << 60);
    OK_EQ("1k", RF_QTY_UNITS, 1000);
    OK_EQ("1M", RF_QTY_UNITS, 1000000);
    OK_EQ("1G", RF_QTY_UNITS, 1000000000);
    OK_EQ("1T", RF_QTY_UNITS, INT64_C(1000000000000));
    OK_EQ("1P", RF_QTY_UNITS, INT64_C(1000000000000000));
    OK_EQ("1E", RF_QTY_UNITS, INT64_C(1000000000000000000)); /* "E" alone is exa */
    OK_EQ("2E", RF_QTY_WHOLE, INT64_C(2000000000000000000));
    OK_EQ("1k", RF_QTY_MILLI, 1000000);
    OK_EQ("1m", RF_QTY_MILLI, 1);
    OK_EQ("1500m", RF_QTY_MILLI, 1500);
    OK_EQ("1000m", RF_QTY_WHOLE, 1);
    OK_EQ("1u", RF_QTY_MILLI, 1);
    OK_EQ("1000000u", RF_QTY_UNITS, 1);
    OK_EQ("1n", RF_QTY_UNITS, 1);
    rf_test_no_leaks();
}

Test(quantity, rounding_up)
{
    OK_EQ("1.5", RF_QTY_UNITS, 2);
    OK_EQ("0.1m", RF_QTY_MILLI, 1);
    OK_EQ("100n", RF_QTY_MILLI, 1);
    OK_EQ("1n", RF_QTY_MILLI, 1);
    OK_EQ("1001u", RF_QTY_MILLI, 2);
    OK_EQ("0.5", RF_QTY_MILLI, 500);
    OK_EQ("0.0005", RF_QTY_MILLI, 1);
    OK_EQ("1.0001", RF_QTY_MILLI, 1001);
    OK_EQ("2.000", RF_QTY_UNITS, 2);
    OK_EQ("1.5Ki", RF_QTY_UNITS, 1536);       /* exact after the binary multiplier */
    OK_EQ("0.001Ki", RF_QTY_UNITS, 2);        /* 1.024 */
    OK_EQ("0.5Ki", RF_QTY_WHOLE, 512);        /* whole after the multiplier */
    OK_EQ("0.1Ki", RF_QTY_UNITS, 103);        /* 102.4 */
    OK_EQ("1.1Gi", RF_QTY_UNITS, 1181116007); /* 1181116006.4 */
    OK_EQ("0.0000000000000000000000000001", RF_QTY_UNITS, 1);
    OK_EQ("0.0000000000000000000000000001Ei", RF_QTY_UNITS, 1);
    rf_test_no_leaks();
}

Test(quantity, exponents)
{
    OK_EQ("1e-3", RF_QTY_MILLI, 1);
    OK_EQ("1e-4", RF_QTY_MILLI, 1);
    OK_EQ("1e0", RF_QTY_WHOLE, 1);
    OK_EQ("1E0", RF_QTY_WHOLE, 1);
    OK_EQ("1e+3", RF_QTY_UNITS, 1000);
    OK_EQ("1.5e3", RF_QTY_UNITS, 1500);
    OK_EQ("15e-1", RF_QTY_UNITS, 2);
    OK_EQ("12e17", RF_QTY_UNITS, INT64_C(1200000000000000000));
    OK_EQ("100e-2", RF_QTY_WHOLE, 1);
    OK_EQ("1e-1000000", RF_QTY_MILLI, 1);
    OK_EQ("1e-9223372036854775808", RF_QTY_UNITS, 1);
    OK_EQ("0e9223372036854775807", RF_QTY_UNITS, 0);
    OK_EQ("1.e3", RF_QTY_UNITS, 1000);
    s_bad("12e18", RF_QTY_UNITS); /* 1.2e19 > 2^62 */
    s_bad("1e19", RF_QTY_WHOLE);
    s_bad("5e18", RF_QTY_WHOLE);
    s_bad("1e1000000", RF_QTY_UNITS);
    s_bad("1e9223372036854775807", RF_QTY_UNITS);
    s_bad("1e9223372036854775808", RF_QTY_UNITS); /* not an int64 exponent */
    s_bad("1e", RF_QTY_UNITS);
    s_bad("1e+", RF_QTY_UNITS);
    s_bad("1e3.5", RF_QTY_UNITS);
    s_bad("1ee3", RF_QTY_UNITS);
    s_bad("1e-3", RF_QTY_WHOLE);
    rf_test_no_leaks();
}

Test(quantity, forms)
{
    OK_EQ("0", RF_QTY_WHOLE, 0);
    OK_EQ("000", RF_QTY_WHOLE, 0);
    OK_EQ("007", RF_QTY_WHOLE, 7);
    OK_EQ("-0", RF_QTY_WHOLE, 0);
    OK_EQ("-0.0", RF_QTY_MILLI, 0);
    OK_EQ("0Ki", RF_QTY_UNITS, 0);
    OK_EQ("+1", RF_QTY_WHOLE, 1);
    OK_EQ("1.", RF_QTY_WHOLE, 1);
    OK_EQ(".5", RF_QTY_MILLI, 500);
    OK_EQ("+.5", RF_QTY_MILLI, 500);
    OK_EQ("1.Gi", RF_QTY_UNITS, INT64_C(1) << 30);
    rf_test_no_leaks();
}

Test(quantity, malformed)
{
    const char *bad[] = {"",     ".",   "+",    "-",    "k",    "Ki",  "1 Gi",  " 1",   "1 ",  "1iB",
                         "1KB",  "1K",  "1kb",  "1gi",  "1i",   "1mi", "1.1.1", "1+1",  "+-1", "--1",
                         "1,5",  "abc", "0x10", "1Gi ", "1\n",  "e3",  "1..",   "1Mi3", "1m3", "1Gii",
                         "1.5.", "∞",   "1µ",   "1e3e", "1e 3", "\t1", "NaN",   "inf",  "1ki", "1Ki1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        s_bad(bad[i], RF_QTY_UNITS);
    /* an embedded NUL is not the end of the text */
    int64_t v;
    cr_assert_eq(rf_qty_parse("1\0", 2, RF_QTY_UNITS, &v, NULL), RF_ESCHEMA);
    /* the length is honoured: "12" read as "1" */
    cr_assert_eq(rf_qty_parse("12", 1, RF_QTY_UNITS, &v, NULL), RF_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(rf_qty_parse(NULL, 0, RF_QTY_UNITS, &v, NULL), RF_EINVAL);
    rf_test_no_leaks();
}

Test(quantity, negative)
{
    rf_error_t err = s_bad("-1", RF_QTY_WHOLE);
    cr_assert(strstr(err.message, "negative"), "%s", err.message);
    s_bad("-1m", RF_QTY_MILLI);
    s_bad("-0.001", RF_QTY_MILLI);
    s_bad("-1n", RF_QTY_UNITS);
    s_bad("-1Ki", RF_QTY_UNITS);
    rf_test_no_leaks();
}

Test(quantity, whole_rejects_fractions)
{
    rf_error_t err = s_bad("0.5", RF_QTY_WHOLE);
    cr_assert(strstr(err.message, "fractional"), "%s", err.message);
    s_bad("1.5", RF_QTY_WHOLE);
    s_bad("1500m", RF_QTY_WHOLE);
    s_bad("1n", RF_QTY_WHOLE);
    s_bad("1.0000000000000000000001", RF_QTY_WHOLE);
    s_bad("0.1Ki", RF_QTY_WHOLE);
    OK_EQ("1.0", RF_QTY_WHOLE, 1);
    OK_EQ("8.000", RF_QTY_WHOLE, 8);
    rf_test_no_leaks();
}

Test(quantity, limits_and_overflow)
{
    OK_EQ("4611686018427387904", RF_QTY_WHOLE, RF_QTY_MAX); /* 2^62 exactly */
    OK_EQ("4Ei", RF_QTY_UNITS, RF_QTY_MAX);
    OK_EQ("4096Pi", RF_QTY_UNITS, RF_QTY_MAX);
    OK_EQ("4611686018427387904m", RF_QTY_MILLI, RF_QTY_MAX);
    OK_EQ("4611686018427387.904", RF_QTY_MILLI, RF_QTY_MAX);
    OK_EQ("4611686018427387903.1", RF_QTY_UNITS, RF_QTY_MAX); /* rounds up onto the limit */
    s_bad("4611686018427387903.0000001Ki", RF_QTY_UNITS);
    s_bad("4611686018427387904.1", RF_QTY_UNITS);
    s_bad("4611686018427387905", RF_QTY_WHOLE);
    s_bad("4611686018427387905m", RF_QTY_MILLI);
    s_bad("4611686018427387905", RF_QTY_MILLI);
    s_bad("4.000000000000000001Ei", RF_QTY_UNITS);
    s_bad("4097Pi", RF_QTY_UNITS);
    s_bad("5Ei", RF_QTY_UNITS);
    s_bad("9223372036854775807", RF_QTY_WHOLE);
    s_bad("9223372036854775808", RF_QTY_WHOLE);
    s_bad("18446744073709551616", RF_QTY_WHOLE);
    rf_error_t err = s_bad("9999999999999999999999", RF_QTY_WHOLE);
    cr_assert(strstr(err.message, "2^62"), "%s", err.message);
    s_bad("9999999999999999999999Ei", RF_QTY_UNITS);
    s_bad("99999999999999999999999999999999999999999999999999999999999999999999999999999", RF_QTY_MILLI);
    OK_EQ("0000000000000000000000000000000000000000000000000000000000000000000000000001", RF_QTY_WHOLE, 1);
    OK_EQ("1000000000000000000000000000000000000000000e-40", RF_QTY_WHOLE, 100); /* 10^42 * 10^-40 */
    rf_test_no_leaks();
}

Test(quantity, from_int)
{
    int64_t v;
    cr_assert_eq(rf_qty_from_int(8, RF_QTY_WHOLE, &v, NULL), RF_OK);
    cr_assert_eq(v, 8);
    cr_assert_eq(rf_qty_from_int(96, RF_QTY_MILLI, &v, NULL), RF_OK);
    cr_assert_eq(v, 96000);
    cr_assert_eq(rf_qty_from_int(0, RF_QTY_MILLI, &v, NULL), RF_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(rf_qty_from_int(RF_QTY_MAX, RF_QTY_UNITS, &v, NULL), RF_OK);
    cr_assert_eq(v, RF_QTY_MAX);
    cr_assert_eq(rf_qty_from_int(RF_QTY_MAX / 1000, RF_QTY_MILLI, &v, NULL), RF_OK);
    cr_assert_eq(v, RF_QTY_MAX / 1000 * 1000);
    rf_error_t err;
    cr_assert_eq(rf_qty_from_int(RF_QTY_MAX / 1000 + 1, RF_QTY_MILLI, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_int(RF_QTY_MAX + 1, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_int(INT64_MAX, RF_QTY_MILLI, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_int(-1, RF_QTY_WHOLE, &v, &err), RF_ESCHEMA);
    cr_assert(strstr(err.message, "negative"));
    cr_assert_eq(rf_qty_from_int(INT64_MIN, RF_QTY_MILLI, &v, &err), RF_ESCHEMA);
    rf_test_no_leaks();
}

Test(quantity, from_double)
{
    int64_t v;
    rf_error_t err;
    cr_assert_eq(rf_qty_from_double(0.5, RF_QTY_MILLI, &v, &err), RF_OK);
    cr_assert_eq(v, 500);
    cr_assert_eq(rf_qty_from_double(0.1, RF_QTY_MILLI, &v, &err), RF_OK);
    cr_assert_eq(v, 100, "0.1 is what the JSON said, not 0.1000000000000000055");
    cr_assert_eq(rf_qty_from_double(0.3, RF_QTY_MILLI, &v, &err), RF_OK);
    cr_assert_eq(v, 300);
    cr_assert_eq(rf_qty_from_double(1.0001, RF_QTY_MILLI, &v, &err), RF_OK);
    cr_assert_eq(v, 1001);
    cr_assert_eq(rf_qty_from_double(1e-7, RF_QTY_MILLI, &v, &err), RF_OK);
    cr_assert_eq(v, 1);
    cr_assert_eq(rf_qty_from_double(1.5, RF_QTY_UNITS, &v, &err), RF_OK);
    cr_assert_eq(v, 2);
    cr_assert_eq(rf_qty_from_double(8.0, RF_QTY_WHOLE, &v, &err), RF_OK);
    cr_assert_eq(v, 8);
    cr_assert_eq(rf_qty_from_double(1e3, RF_QTY_UNITS, &v, &err), RF_OK);
    cr_assert_eq(v, 1000);
    cr_assert_eq(rf_qty_from_double(1e18, RF_QTY_WHOLE, &v, &err), RF_OK);
    cr_assert_eq(v, INT64_C(1000000000000000000));
    cr_assert_eq(rf_qty_from_double(4611686018427387904.0, RF_QTY_UNITS, &v, &err), RF_OK);
    cr_assert_eq(v, RF_QTY_MAX);
    cr_assert_eq(rf_qty_from_double(-0.0, RF_QTY_UNITS, &v, &err), RF_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(rf_qty_from_double(5e-324, RF_QTY_UNITS, &v, &err), RF_OK);
    cr_assert_eq(v, 1);

    cr_assert_eq(rf_qty_from_double(0.5, RF_QTY_WHOLE, &v, &err), RF_ESCHEMA);
    cr_assert(strstr(err.message, "fractional"), "%s", err.message);
    cr_assert_eq(rf_qty_from_double(-1.0, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(-1e-300, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(NAN, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(INFINITY, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(-INFINITY, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(1e19, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(1e300, RF_QTY_UNITS, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(DBL_MAX, RF_QTY_MILLI, &v, &err), RF_ESCHEMA);
    cr_assert_eq(rf_qty_from_double(4.7e15, RF_QTY_MILLI, &v, &err), RF_ESCHEMA);
    rf_test_no_leaks();
}

Test(quantity, kind_of)
{
    cr_assert_eq(rf_qty_kind_of("cpu"), RF_QTY_MILLI);
    cr_assert_eq(rf_qty_kind_of("memory"), RF_QTY_UNITS);
    cr_assert_eq(rf_qty_kind_of("ephemeral-storage"), RF_QTY_UNITS);
    cr_assert_eq(rf_qty_kind_of("storage"), RF_QTY_UNITS);
    cr_assert_eq(rf_qty_kind_of("hugepages-2Mi"), RF_QTY_UNITS);
    cr_assert_eq(rf_qty_kind_of("hugepages-1Gi"), RF_QTY_UNITS);
    cr_assert_eq(rf_qty_kind_of("nvidia.com/gpu"), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of("pods"), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of("CPU"), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of("cpus"), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of("hugepages"), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of(""), RF_QTY_WHOLE);
    cr_assert_eq(rf_qty_kind_of(NULL), RF_QTY_WHOLE);
    rf_test_no_leaks();
}

Test(quantity, format)
{
    char buf[32];
    cr_assert_eq(rf_qty_format(42500, RF_QTY_MILLI, buf, sizeof(buf)), 6);
    cr_assert_str_eq(buf, "42500m");
    cr_assert_eq(rf_qty_format(96000, RF_QTY_MILLI, buf, sizeof(buf)), 2);
    cr_assert_str_eq(buf, "96");
    rf_qty_format(0, RF_QTY_MILLI, buf, sizeof(buf));
    cr_assert_str_eq(buf, "0");
    rf_qty_format(1, RF_QTY_MILLI, buf, sizeof(buf));
    cr_assert_str_eq(buf, "1m");
    rf_qty_format(INT64_C(1) << 40, RF_QTY_UNITS, buf, sizeof(buf));
    cr_assert_str_eq(buf, "1099511627776");
    rf_qty_format(8, RF_QTY_WHOLE, buf, sizeof(buf));
    cr_assert_str_eq(buf, "8");
    rf_qty_format(RF_QTY_UNLIMITED, RF_QTY_WHOLE, buf, sizeof(buf));
    cr_assert_str_eq(buf, "9223372036854775807");
    /* too small: the length needed, and a truncated NUL-terminated prefix */
    char small[4] = {'x', 'x', 'x', 'x'};
    cr_assert_eq(rf_qty_format(42500, RF_QTY_MILLI, small, sizeof(small)), 6);
    cr_assert_str_eq(small, "425");
    cr_assert_eq(rf_qty_format(42500, RF_QTY_MILLI, NULL, 0), 6);
    char one[1] = {'x'};
    cr_assert_eq(rf_qty_format(7, RF_QTY_WHOLE, one, 1), 1);
    cr_assert_eq(one[0], '\0');
    rf_test_no_leaks();
}

Test(quantity, round_trip)
{
    const struct {
        const char *text;
        rf_qty_kind kind;
    } cases[] = {{"500m", RF_QTY_MILLI}, {"96", RF_QTY_MILLI},
                 {"1.5", RF_QTY_MILLI},  {"0.1m", RF_QTY_MILLI},
                 {"1Ti", RF_QTY_UNITS},  {"1.5", RF_QTY_UNITS},
                 {"64Gi", RF_QTY_UNITS}, {"1e3", RF_QTY_WHOLE},
                 {"4Ei", RF_QTY_UNITS},  {"4611686018427387904m", RF_QTY_MILLI},
                 {"0", RF_QTY_WHOLE},    {"12e17", RF_QTY_UNITS}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = s_ok(cases[i].text, cases[i].kind);
        char buf[32];
        int n = rf_qty_format(v, cases[i].kind, buf, sizeof(buf));
        cr_assert(n > 0 && n < (int)sizeof(buf));
        int64_t back = s_ok(buf, cases[i].kind);
        cr_assert_eq(back, v, "%s -> %lld -> %s -> %lld", cases[i].text, (long long)v, buf, (long long)back);
    }
    /* every millicore value formats and reads back */
    for (int64_t v = 0; v < 5000; v += 7) {
        char buf[32];
        rf_qty_format(v, RF_QTY_MILLI, buf, sizeof(buf));
        cr_assert_eq(s_ok(buf, RF_QTY_MILLI), v, "%s", buf);
    }
    rf_test_no_leaks();
}

Test(quantity, messages_quote_the_text_safely)
{
    rf_error_t err = s_bad("1\x01\xff\"x", RF_QTY_UNITS);
    cr_assert(strstr(err.message, "\\x01"), "%s", err.message);
    cr_assert(strstr(err.message, "\\xff"), "%s", err.message);
    char longtext[300];
    memset(longtext, '9', sizeof(longtext) - 1);
    longtext[sizeof(longtext) - 1] = '\0';
    err = s_bad(longtext, RF_QTY_UNITS);
    cr_assert(strlen(err.message) < 200, "%s", err.message);
    cr_assert(strstr(err.message, "..."), "%s", err.message);
    rf_test_no_leaks();
}
