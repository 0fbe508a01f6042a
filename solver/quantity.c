/* solver/quantity.c: Kubernetes resource quantities as exact int64 base units.
 *
 * The grammar is Kubernetes' (k8s.io/apimachinery/pkg/api/resource):
 *   [+-] digits [ "." digits ] suffix      (at least one digit in all)
 *   suffix: "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
 * so "1E" is exa and "1E3" is 10^3. No whitespace anywhere.
 *
 * Invariants of the arithmetic: no floating point and no bignum. The digits
 * are read as a decimal string D with the point moved by the suffix's decimal
 * exponent (and by 3 for millicores); the value is ceil(D * 2^b) with b the
 * binary exponent (0..60). With leading and trailing zeros trimmed, the integer
 * part has at most 19 digits (else the value exceeds 2^62), so it fits a
 * uint64; the fraction times 2^b is computed right to left, digit by digit, with
 * a carry below 2^b, so every intermediate stays below 10 * 2^60 < 2^64. The
 * fraction is exactly zero or not, and a non-zero one rounds up (Kubernetes
 * rounds up), or is an error for WHOLE resources. */
#include "rackfit/quantity.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longer quantity texts are refused outright so that positions fit an int64
 * with room to spare (no real quantity comes near it). */
#define S_MAX_TEXT ((size_t)1 << 40)
/* An exponent beyond this already decides the value (zero, too large, or one
 * base unit after rounding up), so it is clamped here before any sum. */
#define S_EXP_CLAMP (INT64_C(1) << 50)

typedef struct {
    bool negative;
    const char *num; /* digits before the point */
    size_t num_len;
    const char *den; /* digits after the point */
    size_t den_len;
    int64_t dec_exp; /* from the suffix: k = 3, m = -3, e-2 = -2 */
    int bin_exp;     /* from the suffix: Ki = 10 ... Ei = 60 */
} s_qty_t;

/* `text` quoted for a message: at most 40 bytes, bytes outside printable
 * ASCII as \xNN (so the message stays valid UTF-8 whatever the input). */
static void s_quote(char *buf, size_t cap, const char *text, size_t len)
{
    size_t o = 0;
    size_t show = len > 40 ? 40 : len;
    buf[o++] = '"';
    for (size_t i = 0; i < show && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (show < len && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

static rf_status s_bad(rf_error_t *err, const char *text, size_t len, const char *why)
{
    char q[200];
    s_quote(q, sizeof(q), text, len);
    return rf_error_set(err, RF_ESCHEMA, NULL, "%s is not a valid quantity: %s", q, why);
}

static bool s_isdigit(char c)
{
    return c >= '0' && c <= '9';
}

/* The suffix `s[0..n)`: sets dec_exp / bin_exp, or returns false. */
static bool s_suffix(const char *s, size_t n, s_qty_t *q, bool *exp_range)
{
    static const char dec_chars[] = "numkMGTPE";
    static const int dec_exps[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
    static const char bin_chars[] = "KMGTPE";

    *exp_range = true;
    if (n == 0)
        return true;
    if (n == 1) {
        const char *p = memchr(dec_chars, s[0], sizeof(dec_chars) - 1);
        if (!p)
            return false;
        q->dec_exp = dec_exps[p - dec_chars];
        return true;
    }
    if (n == 2 && s[1] == 'i') {
        const char *p = memchr(bin_chars, s[0], sizeof(bin_chars) - 1);
        if (!p)
            return false;
        q->bin_exp = 10 * (int)(p - bin_chars + 1);
        return true;
    }
    if (s[0] != 'e' && s[0] != 'E')
        return false;
    /* (e|E) [+-] digits, an int64 as Go's strconv.ParseInt reads it */
    size_t i = 1;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') {
        neg = s[i] == '-';
        i++;
    }
    if (i >= n)
        return false;
    uint64_t mag = 0;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (!s_isdigit(s[i]))
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (mag > (limit - d) / 10) {
            *exp_range = false;
            return false;
        }
        mag = mag * 10 + d;
    }
    int64_t e = mag > (uint64_t)S_EXP_CLAMP ? S_EXP_CLAMP : (int64_t)mag;
    q->dec_exp = neg ? -e : e;
    return true;
}

static unsigned s_digit(const s_qty_t *q, size_t i)
{
    return (unsigned)((i < q->num_len ? q->num[i] : q->den[i - q->num_len]) - '0');
}

static const char *s_unit_name(rf_qty_kind kind)
{
    return kind == RF_QTY_MILLI ? "millicores" : kind == RF_QTY_UNITS ? "bytes" : "units";
}

rf_status rf_qty_parse(const char *text, size_t len, rf_qty_kind kind, int64_t *out, rf_error_t *err)
{
    if (out)
        *out = 0;
    if (!text || !out)
        return rf_error_set(err, RF_EINVAL, NULL, "rf_qty_parse: NULL argument");
    if (len == 0)
        return rf_error_set(err, RF_ESCHEMA, NULL, "an empty string is not a valid quantity");
    if (len > S_MAX_TEXT)
        return s_bad(err, text, len, "it is too long");

    s_qty_t q = {0};
    size_t pos = 0;
    if (text[0] == '+' || text[0] == '-') {
        q.negative = text[0] == '-';
        pos++;
    }
    q.num = text + pos;
    while (pos < len && s_isdigit(text[pos]))
        pos++;
    q.num_len = (size_t)(text + pos - q.num);
    q.den = text + pos;
    if (pos < len && text[pos] == '.') {
        pos++;
        q.den = text + pos;
        while (pos < len && s_isdigit(text[pos]))
            pos++;
        q.den_len = (size_t)(text + pos - q.den);
    }
    if (q.num_len + q.den_len == 0)
        return s_bad(err, text, len, "it has no digits");
    bool exp_range;
    if (!s_suffix(text + pos, len - pos, &q, &exp_range))
        return s_bad(err, text, len,
                     exp_range ? "unknown suffix (use Ki Mi Gi Ti Pi Ei, n u m k M G T P E or e<n>)"
                               : "exponent out of range");

    /* Trim zeros: a = first non-zero digit, b = last. */
    size_t n = q.num_len + q.den_len;
    size_t a = 0;
    while (a < n && s_digit(&q, a) == 0)
        a++;
    if (a == n) {
        *out = 0; /* "0", "-0.0", "0Ki", "0e99": zero, whatever the sign */
        return RF_OK;
    }
    size_t b = n - 1;
    while (s_digit(&q, b) == 0)
        b--;
    if (q.negative)
        return s_bad(err, text, len, "it is negative");

    /* ip: how many of the trimmed digits lie before the (moved) point. */
    int64_t shift = q.dec_exp + (kind == RF_QTY_MILLI ? 3 : 0);
    int64_t ip = (int64_t)q.num_len - (int64_t)a + shift;
    int64_t m = (int64_t)(b - a + 1);
    if (ip > 19)
        goto too_large; /* at least 10^19 > 2^62 */

    uint64_t ipart = 0;
    for (int64_t k = 0; k < ip && k < m; k++)
        ipart = ipart * 10 + s_digit(&q, a + (size_t)k);
    for (int64_t k = m; k < ip; k++)
        ipart *= 10; /* ip <= 19: stays below 10^19 < 2^64 */

    /* The fraction (digits a+max(ip,0) .. b after -min(ip,0) zeros) times 2^b. */
    bool frac_left = false;
    uint64_t carry = 0;
    if (ip < m) {
        if (q.bin_exp == 0) {
            frac_left = true; /* the last trimmed digit is not zero */
        } else {
            const uint64_t p2 = UINT64_C(1) << q.bin_exp;
            size_t first = a + (size_t)(ip > 0 ? ip : 0);
            for (size_t i = b + 1; i-- > first;) {
                uint64_t v = s_digit(&q, i) * p2 + carry;
                frac_left |= v % 10 != 0;
                carry = v / 10;
            }
            /* leading zeros of the fraction: the carry shrinks tenfold each */
            for (int64_t z = ip < 0 ? -ip : 0; z > 0 && carry; z--) {
                frac_left |= carry % 10 != 0;
                carry /= 10;
            }
        }
    }

    const uint64_t p2 = UINT64_C(1) << q.bin_exp;
    if (ipart > (uint64_t)RF_QTY_MAX / p2)
        goto too_large;
    uint64_t total = ipart * p2 + carry; /* <= 2^62 + 2^60 */
    if (frac_left) {
        if (kind == RF_QTY_WHOLE)
            return s_bad(err, text, len, "a fractional amount of an extended resource (it must be a whole number)");
        total++;
    }
    if (total > (uint64_t)RF_QTY_MAX)
        goto too_large;
    *out = (int64_t)total;
    return RF_OK;

too_large : {
    char msg[96];
    snprintf(msg, sizeof(msg), "it is more than 2^62 %s", s_unit_name(kind));
    return s_bad(err, text, len, msg);
}
}

rf_status rf_qty_from_int(int64_t value, rf_qty_kind kind, int64_t *out, rf_error_t *err)
{
    if (out)
        *out = 0;
    if (!out)
        return rf_error_set(err, RF_EINVAL, NULL, "rf_qty_from_int: NULL argument");
    if (value < 0)
        return rf_error_set(err, RF_ESCHEMA, NULL, "%" PRId64 " is not a valid quantity: it is negative", value);
    int64_t scale = kind == RF_QTY_MILLI ? 1000 : 1;
    if (value > RF_QTY_MAX / scale)
        return rf_error_set(err, RF_ESCHEMA, NULL, "%" PRId64 " is not a valid quantity: it is more than 2^62 %s",
                            value, s_unit_name(kind));
    *out = value * scale;
    return RF_OK;
}

rf_status rf_qty_from_double(double value, rf_qty_kind kind, int64_t *out, rf_error_t *err)
{
    if (out)
        *out = 0;
    if (!out)
        return rf_error_set(err, RF_EINVAL, NULL, "rf_qty_from_double: NULL argument");
    if (isnan(value) || isinf(value))
        return rf_error_set(err, RF_ESCHEMA, NULL, "a quantity must be a finite number");
    if (value < 0)
        return rf_error_set(err, RF_ESCHEMA, NULL, "%.17g is not a valid quantity: it is negative", value);
    if (value == 0)
        return RF_OK;
    if (value >= 9223372036854775808.0) /* 2^63: far above the limit */
        return rf_error_set(err, RF_ESCHEMA, NULL, "%.17g is not a valid quantity: it is more than 2^62 %s", value,
                            s_unit_name(kind));
    if (value == floor(value)) /* integral (all doubles >= 2^53 are): exact */
        return rf_qty_from_int((int64_t)value, kind, out, err);
    /* The shortest decimal text that reads back as `value`: what the JSON
     * said (0.1, not 0.1000000000000000055511151231257827), parsed exactly. */
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, value);
        if (strtod(buf, NULL) == value)
            break;
    }
    for (char *c = buf; *c; c++)
        if (*c == ',')
            *c = '.'; /* a locale's decimal comma */
    return rf_qty_parse(buf, strlen(buf), kind, out, err);
}

int rf_qty_format(int64_t value, rf_qty_kind kind, char *buf, int cap)
{
    char tmp[32];
    int n;
    if (kind == RF_QTY_MILLI && value % 1000 != 0)
        n = snprintf(tmp, sizeof(tmp), "%" PRId64 "m", value);
    else if (kind == RF_QTY_MILLI)
        n = snprintf(tmp, sizeof(tmp), "%" PRId64, value / 1000);
    else
        n = snprintf(tmp, sizeof(tmp), "%" PRId64, value);
    if (n < 0)
        n = 0;
    if (buf && cap > 0) {
        size_t keep = (size_t)n < (size_t)cap ? (size_t)n : (size_t)cap - 1;
        memcpy(buf, tmp, keep);
        buf[keep] = '\0';
    }
    return n;
}

rf_qty_kind rf_qty_kind_of(const char *resource)
{
    if (!resource)
        return RF_QTY_WHOLE;
    if (!strchr("cmesh", resource[0]) || !resource[0]) /* none of the names below (called per quantity read) */
        return RF_QTY_WHOLE;
    if (strcmp(resource, "cpu") == 0)
        return RF_QTY_MILLI;
    if (strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
        strcmp(resource, "storage") == 0 || strncmp(resource, "hugepages-", 10) == 0)
        return RF_QTY_UNITS;
    return RF_QTY_WHOLE;
}
