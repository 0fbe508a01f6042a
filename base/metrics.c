/* base/metrics.c: the metrics registry and its text rendering (metrics.h).
 *
 * Values are doubles kept as their bit patterns in 64-bit atomics (adds are
 * compare-and-swap loops); histogram buckets are per-bucket counts (made
 * cumulative only when rendered). Families and series are singly linked
 * lists in creation order; a series is one allocation with its label values
 * and its bucket counts. */
#include "metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"

/* --------------------------------------------------------- data structures */

/* Append X to the singly linked list (by `next`) whose ends are HEAD and
 * TAIL: the one way families, series and collectors are kept in order. */
#define S_APPEND(head, tail, x)                                                                                        \
    do {                                                                                                               \
        if (tail)                                                                                                      \
            (tail)->next = (x);                                                                                        \
        else                                                                                                           \
            (head) = (x);                                                                                              \
        (tail) = (x);                                                                                                  \
    } while (0)

typedef enum { S_COUNTER = 0, S_GAUGE, S_HISTOGRAM } s_type_t;

struct rf__series {
    rf__metric_t *fam;
    const char *values[RF__METRIC_MAX_LABELS]; /* into the allocation's tail */
    uint32_t hash;
    atomic_uint_least64_t bits;     /* counter or gauge: the value; histogram: the sum */
    atomic_uint_least64_t count;    /* histogram: observations */
    atomic_uint_least64_t *buckets; /* histogram: [n_bounds + 1], not cumulative */
    rf__series_t *next;
};

struct rf__metric {
    rf__metrics_t *reg;
    s_type_t type;
    char *name;
    char *help;
    int n_labels;
    char *labels[RF__METRIC_MAX_LABELS];
    double bounds[RF__METRIC_MAX_BUCKETS];
    int n_bounds;
    rf__series_t *head, *tail;
    rf__metric_t *next;
};

typedef struct s_collect {
    void (*fn)(void *, rf__metrics_t *);
    void *arg;
    struct s_collect *next;
} s_collect_t;

struct rf__metrics {
    pthread_mutex_t mu;
    rf__metric_t *head, *tail;
    s_collect_t *collect, *collect_tail;
};

/* ------------------------------------------------------------- local methods */

static uint64_t s_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double s_double(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void s_atomic_add(atomic_uint_least64_t *a, double v)
{
    uint64_t old = atomic_load(a);
    while (!atomic_compare_exchange_weak(a, &old, s_bits(s_double(old) + v)))
        ;
}

static bool s_name_ok(const char *s, bool colon)
{
    if (!s || !*s)
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
        if (!alpha && !(p > s && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

static bool s_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void s_series_free(rf__series_t *s)
{
    free(s);
}

static void s_family_free(rf__metric_t *f)
{
    for (rf__series_t *s = f->head, *next; s; s = next) {
        next = s->next;
        s_series_free(s);
    }
    for (int i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->name);
    free(f->help);
    free(f);
}

static rf__metric_t *s_register(rf__metrics_t *m, s_type_t type, const char *name, const char *help, int n_labels,
                                const char *const *label_names, const double *bounds, int n_bounds)
{
    if (!m || !s_name_ok(name, true) || n_labels < 0 || n_labels > RF__METRIC_MAX_LABELS ||
        (n_labels > 0 && !label_names))
        return NULL;
    if (type == S_COUNTER && !s_ends_with(name, "_total"))
        return NULL;
    for (int i = 0; i < n_labels; i++) {
        if (!s_name_ok(label_names[i], false) || strncmp(label_names[i], "__", 2) == 0)
            return NULL;
        if (type == S_HISTOGRAM && strcmp(label_names[i], "le") == 0)
            return NULL;
        for (int k = 0; k < i; k++)
            if (strcmp(label_names[i], label_names[k]) == 0)
                return NULL;
    }
    if (type == S_HISTOGRAM) {
        if (!bounds || n_bounds < 1 || n_bounds > RF__METRIC_MAX_BUCKETS)
            return NULL;
        for (int i = 0; i < n_bounds; i++)
            if (!isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
                return NULL;
    }
    rf__metric_t *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->reg = m;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    bool ok = f->name && f->help;
    for (int i = 0; i < n_labels; i++) {
        f->labels[i] = strdup(label_names[i]);
        f->n_labels = i + 1;
        ok = ok && f->labels[i];
    }
    if (type == S_HISTOGRAM) {
        memcpy(f->bounds, bounds, (size_t)n_bounds * sizeof *bounds);
        f->n_bounds = n_bounds;
    }
    pthread_mutex_lock(&m->mu);
    for (rf__metric_t *g = m->head; g && ok; g = g->next)
        ok = strcmp(g->name, name) != 0;
    if (ok)
        S_APPEND(m->head, m->tail, f);
    pthread_mutex_unlock(&m->mu);
    if (!ok) {
        s_family_free(f);
        return NULL;
    }
    return f;
}

static uint32_t s_hash(int n, const char *const *values)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) {
        for (const char *p = values[i]; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        h = (h ^ 0xffu) * 16777619u;
    }
    return h;
}

static bool s_same(const rf__series_t *s, int n, const char *const *values, uint32_t h)
{
    if (s->hash != h)
        return false;
    for (int i = 0; i < n; i++)
        if (strcmp(s->values[i], values[i]) != 0)
            return false;
    return true;
}

/* A new series at zero, not yet linked. */
static rf__series_t *s_series_new(rf__metric_t *f, const char *const *values, uint32_t h)
{
    size_t nb = f->type == S_HISTOGRAM ? (size_t)f->n_bounds + 1 : 0;
    size_t text = 0;
    for (int i = 0; i < f->n_labels; i++)
        text += strlen(values[i]) + 1;
    rf__series_t *s = calloc(1, sizeof *s + nb * sizeof(atomic_uint_least64_t) + text);
    if (!s)
        return NULL;
    s->fam = f;
    s->hash = h;
    atomic_init(&s->bits, s_bits(0.0));
    atomic_init(&s->count, 0);
    s->buckets = nb ? (atomic_uint_least64_t *)(s + 1) : NULL;
    for (size_t b = 0; b < nb; b++)
        atomic_init(&s->buckets[b], 0);
    char *p = (char *)(s + 1) + nb * sizeof(atomic_uint_least64_t);
    for (int i = 0; i < f->n_labels; i++) {
        size_t len = strlen(values[i]);
        memcpy(p, values[i], len + 1);
        s->values[i] = p;
        p += len + 1;
    }
    return s;
}

/* A number as the text format writes it: NaN, +Inf, -Inf, integers without
 * a fraction, others in the shortest form that reads back exactly. */
static void s_number(rf__jw_t *w, double v)
{
    if (isnan(v)) {
        rf__jw_puts(w, "NaN");
    } else if (isinf(v)) {
        rf__jw_puts(w, v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < 1e15) {
        rf__jw_printf(w, "%.0f", v);
    } else {
        char buf[40];
        snprintf(buf, sizeof buf, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, sizeof buf, "%.17g", v);
        rf__jw_puts(w, buf);
    }
}

/* Escape for a label value (backslash, quote, newline) or for HELP
 * (backslash, newline). */
static void s_escaped(rf__jw_t *w, const char *s, bool quote)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\\')
            rf__jw_raw(w, "\\\\", 2);
        else if (*p == '\n')
            rf__jw_raw(w, "\\n", 2);
        else if (quote && *p == '"')
            rf__jw_raw(w, "\\\"", 2);
        else
            rf__jw_raw(w, p, 1);
    }
}

/* name{labels[,le="x"]} (braces left out when there is nothing in them). */
static void s_series_name(rf__jw_t *w, const rf__metric_t *f, const rf__series_t *s, const char *suffix,
                          const double *le)
{
    rf__jw_puts(w, f->name);
    rf__jw_puts(w, suffix);
    if (f->n_labels == 0 && !le)
        return;
    rf__jw_raw(w, "{", 1);
    for (int i = 0; i < f->n_labels; i++) {
        if (i)
            rf__jw_raw(w, ",", 1);
        rf__jw_puts(w, f->labels[i]);
        rf__jw_raw(w, "=\"", 2);
        s_escaped(w, s->values[i], true);
        rf__jw_raw(w, "\"", 1);
    }
    if (le) {
        rf__jw_puts(w, f->n_labels ? ",le=\"" : "le=\"");
        s_number(w, *le);
        rf__jw_raw(w, "\"", 1);
    }
    rf__jw_raw(w, "}", 1);
}

static void s_render_family(rf__jw_t *w, const rf__metric_t *f)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    rf__jw_printf(w, "# HELP %s ", f->name);
    s_escaped(w, f->help, false);
    rf__jw_printf(w, "\n# TYPE %s %s\n", f->name, types[f->type]);
    for (const rf__series_t *s = f->head; s; s = s->next) {
        if (f->type != S_HISTOGRAM) {
            s_series_name(w, f, s, "", NULL);
            rf__jw_raw(w, " ", 1);
            s_number(w, s_double(atomic_load(&s->bits)));
            rf__jw_raw(w, "\n", 1);
            continue;
        }
        /* Read the buckets first and derive the count from them, so that
         * +Inf == _count even while observations land. */
        uint64_t cum = 0;
        for (int b = 0; b <= f->n_bounds; b++) {
            cum += atomic_load(&s->buckets[b]);
            double le = b < f->n_bounds ? f->bounds[b] : INFINITY;
            s_series_name(w, f, s, "_bucket", &le);
            rf__jw_printf(w, " %llu\n", (unsigned long long)cum);
        }
        s_series_name(w, f, s, "_sum", NULL);
        rf__jw_raw(w, " ", 1);
        s_number(w, s_double(atomic_load(&s->bits)));
        rf__jw_raw(w, "\n", 1);
        s_series_name(w, f, s, "_count", NULL);
        rf__jw_printf(w, " %llu\n", (unsigned long long)cum);
    }
}

/* ------------------------------------------------------------------ interface */

rf__metrics_t *rf__metrics_new(void)
{
    rf__metrics_t *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void rf__metrics_destroy(rf__metrics_t **mp)
{
    if (!mp || !*mp)
        return;
    rf__metrics_t *m = *mp;
    for (rf__metric_t *f = m->head, *next; f; f = next) {
        next = f->next;
        s_family_free(f);
    }
    for (s_collect_t *c = m->collect, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    pthread_mutex_destroy(&m->mu);
    free(m);
    *mp = NULL;
}

rf__metric_t *rf__metrics_counter(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                  const char *const *label_names)
{
    return s_register(m, S_COUNTER, name, help, n_labels, label_names, NULL, 0);
}

rf__metric_t *rf__metrics_gauge(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                const char *const *label_names)
{
    return s_register(m, S_GAUGE, name, help, n_labels, label_names, NULL, 0);
}

rf__metric_t *rf__metrics_histogram(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                    const char *const *label_names, const double *bounds, int n_bounds)
{
    return s_register(m, S_HISTOGRAM, name, help, n_labels, label_names, bounds, n_bounds);
}

int rf__metrics_exp_bounds(double start, double factor, int n, double *out)
{
    double v = start;
    for (int i = 0; i < n; i++, v *= factor)
        out[i] = v;
    return n;
}

rf__series_t *rf__metric_series(rf__metric_t *f, const char *const *values)
{
    if (!f)
        return NULL;
    static const char *const none[1] = {""};
    if (f->n_labels == 0)
        values = none;
    for (int i = 0; i < f->n_labels; i++)
        if (!values || !values[i])
            return NULL;
    uint32_t h = s_hash(f->n_labels, values);
    rf__metrics_t *m = f->reg;
    pthread_mutex_lock(&m->mu);
    rf__series_t *s = f->head;
    while (s && !s_same(s, f->n_labels, values, h))
        s = s->next;
    if (!s && (s = s_series_new(f, values, h)))
        S_APPEND(f->head, f->tail, s);
    pthread_mutex_unlock(&m->mu);
    return s;
}

rf__series_t *rf__metric_with(rf__metric_t *f, ...)
{
    if (!f)
        return NULL;
    const char *values[RF__METRIC_MAX_LABELS] = {NULL};
    va_list ap;
    va_start(ap, f);
    for (int i = 0; i < f->n_labels; i++)
        values[i] = va_arg(ap, const char *);
    va_end(ap);
    return rf__metric_series(f, values);
}

void rf__metric_clear(rf__metric_t *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->reg->mu);
    for (rf__series_t *s = f->head, *next; s; s = next) {
        next = s->next;
        s_series_free(s);
    }
    f->head = f->tail = NULL;
    pthread_mutex_unlock(&f->reg->mu);
}

void rf__counter_add(rf__series_t *s, double v)
{
    if (s && s->fam->type == S_COUNTER && v > 0)
        s_atomic_add(&s->bits, v);
}

void rf__gauge_set(rf__series_t *s, double v)
{
    if (s && s->fam->type == S_GAUGE)
        atomic_store(&s->bits, s_bits(v));
}

void rf__gauge_add(rf__series_t *s, double v)
{
    if (s && s->fam->type == S_GAUGE)
        s_atomic_add(&s->bits, v);
}

void rf__histogram_observe(rf__series_t *s, double v)
{
    if (!s || s->fam->type != S_HISTOGRAM || isnan(v))
        return;
    const rf__metric_t *f = s->fam;
    int lo = 0, hi = f->n_bounds; /* the first bound >= v, or n_bounds (+Inf) */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (f->bounds[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    atomic_fetch_add(&s->buckets[lo], 1);
    atomic_fetch_add(&s->count, 1);
    s_atomic_add(&s->bits, v);
}

double rf__series_value(const rf__series_t *s)
{
    if (!s)
        return 0;
    if (s->fam->type == S_HISTOGRAM)
        return (double)atomic_load(&((rf__series_t *)s)->count);
    return s_double(atomic_load(&((rf__series_t *)s)->bits));
}

int rf__metrics_on_collect(rf__metrics_t *m, void (*fn)(void *arg, rf__metrics_t *m), void *arg)
{
    int n = 0;
    pthread_mutex_lock(&m->mu);
    for (s_collect_t *k = m->collect; k; k = k->next)
        n++;
    pthread_mutex_unlock(&m->mu);
    s_collect_t *c = n < RF__METRICS_MAX_COLLECT ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return -1;
    c->fn = fn;
    c->arg = arg;
    pthread_mutex_lock(&m->mu);
    S_APPEND(m->collect, m->collect_tail, c);
    pthread_mutex_unlock(&m->mu);
    return 0;
}

char *rf__metrics_render(rf__metrics_t *m, size_t *len)
{
    /* The callbacks run without the mutex (they look series up); copied
     * first, as another thread may register one meanwhile. */
    s_collect_t todo[RF__METRICS_MAX_COLLECT];
    int n_todo = 0;
    pthread_mutex_lock(&m->mu);
    for (s_collect_t *c = m->collect; c && n_todo < RF__METRICS_MAX_COLLECT; c = c->next)
        todo[n_todo++] = *c;
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < n_todo; i++)
        todo[i].fn(todo[i].arg, m);
    rf__jw_t w;
    rf__jw_init(&w);
    pthread_mutex_lock(&m->mu);
    for (const rf__metric_t *f = m->head; f; f = f->next)
        s_render_family(&w, f);
    pthread_mutex_unlock(&m->mu);
    return rf__jw_take(&w, len); /* NULL when out of memory */
}
