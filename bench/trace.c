/* bench/trace.c: the simulator's trace readers (trace.h).
 *
 * Plain CSV as the traces publish it: comma-separated, no quoting (a quote
 * character is an error rather than a guess), a header line naming the
 * columns, blank lines ignored. Columns are found by name, so a reordered
 * file still reads. Pollux rows carry no duration: each job's is drawn as
 * base(application) * exp(0.5 * N(0,1)) from a PRNG seeded by (seed, row), the
 * bases being our assumption (docs/simulator.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "grow.h"
#include "trace.h"

#define S_MAX_COLS 32

/* ---- local methods --------------------------------------------------------------------------------------------- */

typedef struct {
    const char *path;
    int32_t line;
    char *f[S_MAX_COLS];
    int32_t n;
} s_row_t;

/* Split one line in place. */
static rf_status s_split(char *line, s_row_t *r, rf_error_t *err)
{
    r->n = 0;
    char *p = line;
    for (;;) {
        if (r->n == S_MAX_COLS)
            return rf_error_set(err, RF_EPARSE, "", "%s:%d: more than %d columns", r->path, (int)r->line, S_MAX_COLS);
        r->f[r->n++] = p;
        char *c = strchr(p, ',');
        if (strchr(p, '"') && (!c || strchr(p, '"') < c))
            return rf_error_set(err, RF_EPARSE, "", "%s:%d: quoted CSV fields are not supported", r->path,
                                (int)r->line);
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    for (int32_t i = 0; i < r->n; i++) { /* trim spaces and a trailing \r */
        char *s = r->f[i];
        while (isspace((unsigned char)*s))
            s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = '\0';
        r->f[i] = s;
    }
    return RF_OK;
}

static int32_t s_col(const s_row_t *h, const char *name)
{
    for (int32_t i = 0; i < h->n; i++)
        if (strcmp(h->f[i], name) == 0)
            return i;
    return -1;
}

static rf_status s_num(const s_row_t *r, int32_t col, const char *name, bool empty_ok, double *out, rf_error_t *err)
{
    if (col >= r->n)
        return rf_error_set(err, RF_EPARSE, "", "%s:%d: missing column %s", r->path, (int)r->line, name);
    const char *s = r->f[col];
    if (!*s && empty_ok) {
        *out = NAN;
        return RF_OK;
    }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || errno || *end || !isfinite(x))
        return rf_error_set(err, RF_EPARSE, "", "%s:%d: %s is not a number: '%s'", r->path, (int)r->line, name, s);
    *out = x;
    return RF_OK;
}

static uint64_t s_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal from (seed, row): Box-Muller on two splitmix64 draws. */
static double s_normal(uint64_t seed, int32_t row)
{
    uint64_t x = seed * 0x2545F4914F6CDD1Dull + (uint64_t)row;
    double u1 = ((double)(s_splitmix(&x) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = ((double)(s_splitmix(&x) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Pollux applications' base durations, seconds at the traced size [assume]. */
static double s_pollux_base(const char *app)
{
    static const struct {
        const char *app;
        double s;
    } t[] = {{"cifar10", 1800}, {"ncf", 900},        {"deepspeech2", 5400},
             {"yolov3", 7200},  {"imagenet", 14400}, {"bert", 3600}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(app, t[i].app) == 0)
            return t[i].s;
    return 3600;
}

static comm_family_id s_family(const char *model)
{
    int32_t f = comm_family_find(model);
    if (f >= 0)
        return (comm_family_id)f;
    if (strncmp(model, "bert", 4) == 0)
        return COMM_BERT;
    if (strncmp(model, "gpt", 3) == 0 || strncmp(model, "llama", 5) == 0)
        return COMM_LLM_DP;
    return COMM_CNN; /* resnet, vgg, inception, alexnet, cifar10, imagenet, yolov3, deepspeech2, ncf, none */
}

static int s_cmp_submit(const void *a, const void *b)
{
    const sim_job_t *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

typedef enum { S_TIRESIAS, S_POLLUX, S_OPENB, S_SIM } s_format;

typedef struct {
    s_format fmt;
    int32_t name, submit, gpus, duration, model, gpu_milli, sched, del;
    int32_t qos;  /* openb only, else -1 */
    int32_t prio; /* sim only (optional `priority` column), else -1 */
} s_cols_t;

/* The formats, tried in order: the columns that identify one (all three
 * present), then the column of each field (NULL: the format has none). */
static const struct {
    s_format fmt;
    const char *id[3];
    const char *name, *submit, *gpus, *duration, *model, *gpu_milli, *sched, *del, *qos, *prio;
} s_formats[] = {
    {S_TIRESIAS,
     {"job_id", "num_gpu", "submit_time"},
     "job_id",
     "submit_time",
     "num_gpu",
     "duration",
     "model_name",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
    {S_POLLUX,
     {"num_replicas", "time", "application"},
     "name",
     "time",
     "num_replicas",
     NULL,
     "application",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
    {S_OPENB,
     {"num_gpu", "creation_time", "scheduled_time"},
     "name",
     "creation_time",
     "num_gpu",
     NULL,
     NULL,
     "gpu_milli",
     "scheduled_time",
     "deletion_time",
     "qos",
     NULL},
    {S_SIM,
     {"submit", "gpus", "duration"},
     "name",
     "submit",
     "gpus",
     "duration",
     "model",
     NULL,
     NULL,
     NULL,
     NULL,
     "priority"},
};

/* Column `name` of the header, -1 when absent or when name is NULL. */
static int32_t s_col_of(const s_row_t *h, const char *name)
{
    return name ? s_col(h, name) : -1;
}

static rf_status s_header(const s_row_t *h, s_cols_t *c, rf_error_t *err)
{
    memset(c, -1, sizeof(*c)); /* -1: no such column */
    size_t k = 0, n = sizeof s_formats / sizeof s_formats[0];
    while (k < n && !(s_col(h, s_formats[k].id[0]) >= 0 && s_col(h, s_formats[k].id[1]) >= 0 &&
                      s_col(h, s_formats[k].id[2]) >= 0))
        k++;
    if (k == n)
        return rf_error_set(err, RF_EPARSE, "",
                            "%s: unknown trace format (header '%s,...'): expected Tiresias, "
                            "Pollux, Alibaba openb or sim columns",
                            h->path, h->n ? h->f[0] : "");
    c->fmt = s_formats[k].fmt;
    c->name = s_col_of(h, s_formats[k].name);
    c->submit = s_col_of(h, s_formats[k].submit);
    c->gpus = s_col_of(h, s_formats[k].gpus);
    c->duration = s_col_of(h, s_formats[k].duration);
    c->model = s_col_of(h, s_formats[k].model);
    c->gpu_milli = s_col_of(h, s_formats[k].gpu_milli);
    c->sched = s_col_of(h, s_formats[k].sched);
    c->del = s_col_of(h, s_formats[k].del);
    c->qos = s_col_of(h, s_formats[k].qos);
    c->prio = s_col_of(h, s_formats[k].prio);
    if (c->name < 0 || (c->fmt != S_POLLUX && c->fmt != S_OPENB && c->duration < 0) ||
        (c->fmt == S_OPENB && c->del < 0))
        return rf_error_set(err, RF_EPARSE, "", "%s: a required column is missing from the header", h->path);
    return RF_OK;
}

/* One data row into `job`; *keep false when the row is not replayed. */
static rf_status s_row(const s_cols_t *c, const s_row_t *r, const sim_trace_opts_t *o, sim_job_t *job, bool *keep,
                       rf_error_t *err)
{
    double submit = 0, gpus = 0, dur = NAN;
    *keep = true;
    memset(job, 0, sizeof(*job));
    RF_CALL(s_num(r, c->submit, "submit time", c->fmt == S_OPENB, &submit, err));
    RF_CALL(s_num(r, c->gpus, "GPU count", false, &gpus, err));
    if (c->name >= r->n)
        return rf_error_set(err, RF_EPARSE, "", "%s:%d: missing name column", r->path, (int)r->line);
    snprintf(job->name, sizeof(job->name), "%s", r->f[c->name]);
    if (c->model >= 0 && c->model < r->n)
        snprintf(job->model, sizeof(job->model), "%s", r->f[c->model]);
    switch (c->fmt) {
    case S_TIRESIAS:
    case S_SIM:
        RF_CALL(s_num(r, c->duration, "duration", false, &dur, err));
        break;
    case S_POLLUX:
        dur = s_pollux_base(job->model) * exp(0.5 * s_normal(o->seed, r->line));
        break;
    case S_OPENB: {
        double sched = NAN, del = NAN;
        RF_CALL(s_num(r, c->sched, "scheduled_time", true, &sched, err));
        RF_CALL(s_num(r, c->del, "deletion_time", true, &del, err));
        if (isnan(sched) || isnan(del) || isnan(submit) || gpus < 1) { /* never scheduled, or CPU only */
            *keep = false;
            return RF_OK;
        }
        dur = del - sched; /* a GPU fraction (gpu_milli < 1000) takes a whole GPU here */
        break;
    }
    }
    if (gpus < 1 || dur <= 0) {
        *keep = false;
        return RF_OK;
    }
    if (gpus > 1e6 || dur > 1e10 || submit < 0)
        return rf_error_set(err, RF_EPARSE, "", "%s:%d: out of range (gpus %g, duration %g, submit %g)", r->path,
                            (int)r->line, gpus, dur, submit);
    double g = floor(gpus * o->size_scale + 0.5);
    job->gpus = g < 1 ? 1 : (int32_t)g;
    job->submit = submit / o->time_scale;
    job->duration = dur;
    job->family = s_family(job->model);
    job->row = r->line;
    if (c->prio >= 0) {
        double pr = 0;
        RF_CALL(s_num(r, c->prio, "priority", false, &pr, err));
        if (pr != floor(pr) || fabs(pr) > 1e15)
            return rf_error_set(err, RF_EPARSE, "", "%s:%d: priority must be an integer", r->path, (int)r->line);
        job->priority = (int64_t)pr;
    } else if (c->qos >= 0 && c->qos < r->n) /* openb: latency-sensitive above best-effort */
        job->priority = strcmp(r->f[c->qos], "LS") == 0 ? 100 : strcmp(r->f[c->qos], "BE") == 0 ? 0 : 50;
    else if (o->high_share > 0) {
        uint64_t x = o->seed * 0x9E3779B97F4A7C15ull + (uint64_t)r->line * 0xD1B54A32D192ED03ull + 7;
        job->priority = (double)(s_splitmix(&x) >> 11) / 9007199254740992.0 < o->high_share ? 100 : 0;
    }
    if (o->llm_3d_from > 0 && job->gpus >= o->llm_3d_from)
        job->family = COMM_LLM_3D;
    else if (o->llm_dp_from > 0 && job->gpus >= o->llm_dp_from && job->family != COMM_LLM_3D)
        job->family = COMM_LLM_DP;
    return RF_OK;
}

static const char *const s_format_names[] = {"tiresias", "pollux", "openb", "sim"};

/* ---- public API ------------------------------------------------------------------------------------------------ */

void sim_trace_opts_default(sim_trace_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->seed = 1;
    o->size_scale = 1;
    o->time_scale = 1;
    o->llm_dp_from = 32;
    o->llm_3d_from = 256;
    o->max_bytes = (int64_t)256 << 20;
}

/* Several files, comma-separated: each read on its own (its times relative to its own first job, --hours
 * per file), then merged by submit time (ties: file order, then row) and cut to max_jobs. */
static rf_status s_read_list(const char *paths, const sim_trace_opts_t *o, sim_trace_t *out, rf_error_t *err)
{
    char *copy = strdup(paths);
    if (!copy)
        return rf_error_set(err, RF_ENOMEM, "", "trace: out of memory");
    sim_trace_opts_t one = *o;
    one.max_jobs = 0;
    rf_status st = RF_OK;
    int32_t files = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && st == RF_OK; tok = strtok_r(NULL, ",", &save)) {
        sim_trace_t t;
        st = sim_trace_read(tok, &one, &t, err);
        if (st != RF_OK)
            break;
        sim_job_t *nj = realloc(out->jobs, (size_t)(out->n + t.n) * sizeof(sim_job_t));
        if (!nj) {
            sim_trace_fini(&t);
            st = rf_error_set(err, RF_ENOMEM, "", "trace: out of memory");
            break;
        }
        out->jobs = nj;
        for (int32_t i = 0; i < t.n; i++) {
            t.jobs[i].row += files * (1 << 24); /* file order first among equal submit times */
            out->jobs[out->n + i] = t.jobs[i];
        }
        out->n += t.n;
        out->rows += t.rows;
        out->skipped += t.skipped;
        out->format = files == 0 || out->format == t.format ? t.format : "mixed";
        files++;
        sim_trace_fini(&t);
    }
    free(copy);
    if (st != RF_OK) {
        sim_trace_fini(out);
        return st;
    }
    qsort(out->jobs, (size_t)out->n, sizeof(sim_job_t), s_cmp_submit);
    if (o->max_jobs > 0 && out->n > o->max_jobs) {
        out->skipped += out->n - o->max_jobs;
        out->n = o->max_jobs;
    }
    return RF_OK;
}

rf_status sim_trace_read(const char *path, const sim_trace_opts_t *o, sim_trace_t *out, rf_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (strchr(path, ','))
        return s_read_list(path, o, out, err);
    if (!(o->size_scale > 0) || !(o->time_scale > 0) || !(o->high_share >= 0 && o->high_share <= 1))
        return rf_error_set(err, RF_EINVAL, "",
                            "trace: --size-scale and --time-scale must be > 0, --high-share in [0, 1]");
    char *text = NULL;
    size_t len = 0;
    RF_CALL(rf__read_file(path, (size_t)o->max_bytes, &text, &len, err));
    s_row_t r = {.path = path};
    s_cols_t c;
    bool have_header = false;
    int32_t cap = 0;
    rf_status st = RF_OK;
    char *line = text;
    while (st == RF_OK && line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        r.line++;
        bool blank = true;
        for (const char *q = line; *q; q++)
            blank = blank && isspace((unsigned char)*q);
        if (!blank) {
            st = s_split(line, &r, err);
            if (st == RF_OK && !have_header) {
                st = s_header(&r, &c, err);
                have_header = true;
            } else if (st == RF_OK) {
                out->rows++;
                if (out->n == cap) {
                    sim_job_t *nj = rf__grow(out->jobs, &cap, (int64_t)out->n + 1, 256, sizeof(*nj));
                    if (!nj) {
                        st = rf_error_set(err, RF_ENOMEM, "", "%s: out of memory", path);
                        break;
                    }
                    out->jobs = nj;
                }
                bool keep;
                st = s_row(&c, &r, o, &out->jobs[out->n], &keep, err);
                if (keep)
                    out->n++;
                else
                    out->skipped++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (st == RF_OK && !have_header)
        st = rf_error_set(err, RF_EPARSE, "", "%s: empty trace", path);
    if (st != RF_OK) {
        sim_trace_fini(out);
        return st;
    }
    out->format = s_format_names[c.fmt];
    qsort(out->jobs, (size_t)out->n, sizeof(sim_job_t), s_cmp_submit);
    double t0 = out->n ? out->jobs[0].submit : 0;
    int32_t keep = 0;
    for (int32_t i = 0; i < out->n; i++) {
        sim_job_t *j = &out->jobs[i];
        j->submit -= t0;
        if ((o->hours > 0 && j->submit > o->hours * 3600.0) || (o->max_jobs > 0 && keep >= o->max_jobs))
            continue;
        out->jobs[keep++] = *j;
    }
    out->skipped += out->n - keep;
    out->n = keep;
    if (out->n == 0) {
        sim_trace_fini(out);
        return rf_error_set(err, RF_EPARSE, "", "%s: no job to replay (every row filtered out)", path);
    }
    return RF_OK;
}

void sim_trace_fini(sim_trace_t *t)
{
    free(t->jobs);
    t->jobs = NULL;
    t->n = 0;
}
